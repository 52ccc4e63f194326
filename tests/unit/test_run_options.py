"""Each run option is declared once (harness.run_options) and reaches every place it must: the commands'
parsers, the child processes' environment, and the reader on the other side."""

import os
from pathlib import Path

import pytest

from harness import env_vars, run_options
from harness.contract import options as contract_options
from harness.run_options import ENTRY, GOLDEN, HOST, JOB, PROJECT, RUN, UPGRADE, RunOptions
from harness.stack import paths, staging
from harness.stack.commands import accept, golden_record, options, upgrade
from harness.stack.run import entry_runs
from harness.stack.workspace import Workspace

# A value to type for each kind of option, and what it reads as.
SAMPLES = {str: ("x-1", "x-1"), int: ("7", 7), Path: ("/abs/file", Path("/abs/file")),
           tuple: ("/abs/dir", (Path("/abs/dir"),)),
           run_options.RevisionPath: ("main:/abs/file", Path("main:/abs/file"))}  # a file as git revision main holds it
CHECKOUT = Workspace.of(paths.SOURCE)
PARSERS = {UPGRADE: lambda argv: upgrade.parse_options(CHECKOUT, argv).options, GOLDEN: golden_record.parse,
           PROJECT: lambda argv: options.split(argv)[0]}  # each a RunOptions


def _typed(name, spec):
    """A command line giving the option, and the value it must read as."""
    if spec.kind is bool:
        return [spec.flags[0]], True
    if name == "builtin":
        return [spec.flags[0], "report"], "report"
    if name == "envs_size_limit":  # a size, read into bytes
        return [spec.flags[0], "1KiB"], 1024
    if "choices" in spec.argparse:  # one of its choices
        return [spec.flags[0], spec.argparse["choices"][-1]], spec.argparse["choices"][-1]
    text, value = SAMPLES[spec.kind]
    return [spec.flags[0], text], value


@pytest.mark.parametrize("name, spec", run_options.specs().items(), ids=list(run_options.specs()))
def test_every_option_reaches_its_parsers_its_children_and_its_reader(name, spec, monkeypatch):
    assert spec.group in (PROJECT, RUN, JOB, ENTRY, HOST)
    assert spec.group == HOST or spec.env, f"{name} is carried to child processes: it needs a variable"
    if spec.flags:  # every command that takes it parses it
        argv, value = _typed(name, spec)
        commands = [UPGRADE, GOLDEN, PROJECT] if spec.group == PROJECT else list(spec.commands)
        assert commands, f"{name} has a flag but no command takes it"
        for command in commands:
            parsed = PARSERS[command](argv)
            assert getattr(parsed, name) == value, (command, argv)
    if spec.env and spec.group != HOST:  # carried to the children and read back there
        value = _typed(name, spec)[1] if spec.flags else SAMPLES[spec.kind if spec.kind is not bool else str][1]
        value = True if spec.kind is bool else value
        given = RunOptions(**{name: value})
        env = run_options.environment(given, spec.group)
        assert spec.env in env
        assert getattr(run_options.from_environment(env), name) == value
    if spec.pytest and spec.group == JOB:  # the job file carries it (harness.contract.job), never the variable
        monkeypatch.setenv(spec.env, "from-the-variable")
        assert _pytest_options()[spec.pytest].get("default") is None
    elif spec.pytest and spec.env:  # the contract side's option reads the variable
        monkeypatch.setenv(spec.env, "from-the-variable")
        assert _pytest_options()[spec.pytest].get("default") == "from-the-variable"
    elif spec.pytest:
        assert _pytest_options()[spec.pytest].get("action") == "store_true"


def _pytest_options() -> dict[str, dict]:
    found = {}

    class Group:
        def addoption(self, name, **kw):
            found[name] = kw

    class Parser:
        def getgroup(self, name):
            return Group()

    contract_options.add(Parser())
    return found


def test_the_contract_side_reads_every_variable_an_entry_is_given_for_its_pytest():
    declared = {s.pytest for s in run_options.specs().values() if s.pytest}
    # arguments, not run options (the multi-device family's own process: harness.stack.entry_side.multi_device;
    # a recording's numerical noise and host noise, and the checks an emulated host's recording leaves out:
    # harness.stack.entry_side.noise_runs; what accepts a recording's changes and why: the golden session)
    own = {"--harness-own-contracts", "--harness-record-golden", "--harness-multi-device", "--harness-observe-noise",
           "--harness-noise-from", "--harness-host-noise-from", "--harness-accepted-by", "--harness-accept-reason",
           "--harness-except"}
    assert set(_pytest_options()) == declared | own


def _no_tpu(monkeypatch) -> None:
    """This test's host is no TPU host, whichever host runs it."""
    import os

    for name in [n for n in os.environ if n.startswith("TPU_")]:
        monkeypatch.delenv(name)


def test_existing_upgrade_command_lines_read_as_before(monkeypatch):
    _no_tpu(monkeypatch)
    args = upgrade.parse_options(CHECKOUT, ["--candidate", "jax==0.12.0.1", "--pre", "--jobs", "3", "--reports", "out",
                                         "--bisect", "--offline", "--contracts", "a", "--contracts", "b", "--no-builtin",
                                         "--baseline-from", "req.txt", "--envs-size-limit", "1GiB"]).options
    assert (args.candidate, args.pre, args.jobs, args.reports, args.bisect, args.offline) == (
        "jax==0.12.0.1", True, 3, Path("out"), True, True)
    assert (args.contracts, args.builtin, args.baseline_from) == ((Path("a"), Path("b")), "off", Path("req.txt"))
    assert args.envs_size_limit == 2**30
    plain = upgrade.parse_options(CHECKOUT, []).options
    assert (plain.candidate, plain.pre, plain.jobs, plain.reports, plain.contracts, plain.builtin) == (
        None, False, 2, None, (), None)
    assert plain.envs_size_limit is None


def test_project_options_reach_the_sessions_as_absolute_paths(tmp_path):
    given, rest = options.split(["--contracts", "mine", "--builtin", "report", "-x"])
    assert rest == ["-x"]
    assert options.environment(given, tmp_path) == {
        env_vars.CONTRACT_DIRS: str(tmp_path / "mine"), env_vars.BUILTIN: "report"}


def test_golden_takes_its_own_flags_and_the_project_options_and_names_them_when_wrong():
    args = golden_record.parse(["--accept-changes", "--no-builtin"])
    assert args.accept_changes and not args.record_builtin and args.builtin == "off"
    with pytest.raises(Exception) as raised:
        golden_record.parse(["--frobnicate"])
    message = str(raised.value)
    # The session's frame says "golden: " before it (harness.stack.commands.frame.session): not twice.
    assert message.startswith("unknown arguments ['--frobnicate']"), message
    assert "--accept-changes" in message and "--record-builtin" in message and "--contracts DIR" in message


def test_golden_help_prints_its_usage_under_the_command_typed_and_runs_nothing(capsys):
    from harness.stack.commands import frame

    with pytest.raises(frame.HelpShown):
        golden_record.parse(["--help"], prog="upgrade-harness golden")
    out = capsys.readouterr().out
    assert out.startswith("usage: upgrade-harness golden") and "--accept-changes" in out and "--no-builtin" in out


def test_one_list_of_variables_is_stripped_from_every_child_a_run_starts(monkeypatch, tmp_path):
    own = {env_vars.ONLY, env_vars.BUILTIN_TESTS, env_vars.REUSED_PARTS, env_vars.CANDIDATE, env_vars.REPLAY, env_vars.REPORT_NAME,
           env_vars.PLAN, env_vars.ROLLBACK_FROM, env_vars.PROGRESS}  # an entry's progress file is its own, never its children's
    assert set(run_options.own_run_variables()) == own
    for name in own:
        monkeypatch.setenv(name, "from another run")

    ws = Workspace.of(paths.SOURCE, tmp_path).with_options(RunOptions(run_id="run-A"))
    child = entry_runs.child_environment(ws, entry_runs.told(ws, 1), tmp_path / "job.json")
    assert not {k for k in own if child.get(k) == "from another run"}
    seen = {}
    monkeypatch.setattr(accept.subprocess, "run", lambda cmd, **kw: seen.update(kw["env"]) or _Done())
    stage = staging.Stage(tmp_path)
    accept.record_golden(stage)
    assert seen and not own & set(seen)  # the golden recording accept starts: the plan too (was kept)
    assert seen[env_vars.STAGE] == str(stage.files)  # it records into accept's staged copy, never golden/ itself


class _Done:
    returncode = 0


def test_a_rev_path_reaches_the_children_with_its_path_made_absolute(tmp_path):
    """`--baseline-from origin/main:requirements.txt` typed in a subdirectory: the children run in the project's
    root, so the path after the revision is made absolute; the revision stays as typed."""
    given = RunOptions(baseline_from=Path("origin/main:requirements.txt"))
    env = run_options.environment(given, PROJECT, tmp_path)
    assert env[env_vars.BASELINE_FROM] == f"origin/main:{tmp_path.resolve() / 'requirements.txt'}"
    plain = run_options.environment(RunOptions(baseline_from=Path("requirements.txt")), PROJECT, tmp_path)
    assert plain[env_vars.BASELINE_FROM] == str(tmp_path.resolve() / "requirements.txt")


def test_a_path_is_shown_relative_to_where_the_command_was_typed(tmp_path):
    from harness.stack import shown

    (tmp_path / "src" / "deep").mkdir(parents=True)
    log = tmp_path / "reports" / "baseline.log"
    assert shown.shown_path(log, tmp_path) == "reports/baseline.log"
    assert shown.shown_path(log, tmp_path / "src") == "../reports/baseline.log"
    assert shown.shown_path(log, tmp_path / "src" / "deep") == "../../reports/baseline.log"
    far = tmp_path.joinpath(*["x"] * 40)  # from there, ../ forty times is longer than the path itself
    assert shown.shown_path(log, far) == str(log.resolve())


def test_what_a_run_tells_its_entries_is_its_own_options_not_its_process_environment(monkeypatch, tmp_path):
    """The host never writes its own environment to tell itself (or its children) an option: an entry's
    environment is built from the workspace's options, so another process's HARNESS_BUILTIN left in the
    shell is overridden by the run's --builtin, and a run id reaches the entry (in its job) without being set
    here."""
    from harness.model import entry_job
    from harness.stack.entry_side import entry_jobs
    from harness.stack.pins.matrix import Entry

    monkeypatch.setenv(env_vars.BUILTIN, "report")

    ws = Workspace.from_environment().with_options(RunOptions(builtin="off", run_id="run-B", offline=True))
    told = entry_runs.told(ws, 0)
    job = tmp_path / "jobs" / "baseline.json"
    entry_job.write(job, entry_jobs.job_of(Entry("baseline", {}, ""), told))
    child = entry_runs.child_environment(ws, told, job)
    assert child[env_vars.BUILTIN] == "off" and child["UV_OFFLINE"] == "1" and child[env_vars.JOB] == str(job)
    assert os.environ[env_vars.BUILTIN] == "report" and env_vars.RUN_ID not in os.environ
    read = Workspace.from_environment(child).options  # as the entry's session reads it
    assert (read.builtin, read.run_id, read.seed) == ("off", "run-B", 0)  # a seed of 0 is told, not dropped


def test_a_teams_entries_are_told_its_project_though_this_process_was_not(monkeypatch, tmp_path):
    """`upgrade-harness upgrade` runs in-process with a workspace of the team's project, its own environment
    untouched: the entries it starts must still be told the project (else they judge this checkout)."""
    monkeypatch.delenv(env_vars.PROJECT, raising=False)

    team = Workspace.of(tmp_path).with_options(RunOptions(run_id="run-C"))
    assert not team.is_checkout
    told = entry_runs.told(team, 1)
    assert entry_runs.child_environment(team, told, tmp_path / "j.json")[env_vars.PROJECT] == str(tmp_path.resolve())
    checkout = entry_runs.child_environment(Workspace.of(paths.SOURCE, tmp_path), told, tmp_path / "j.json")
    assert env_vars.PROJECT not in checkout


def test_a_tpu_host_runs_the_entries_one_at_a_time_unless_told(monkeypatch):
    """libtpu lets one process hold the TPU: the second entry's JAX would fail to start (measured on a v5e
    host: "The TPU is already in use by process with pid ..."), so a TPU host's default is one entry at a time;
    --jobs still says otherwise, and JAX_PLATFORMS=cpu keeps JAX off the TPU."""
    from harness.stack import boundary

    _no_tpu(monkeypatch)
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    plain = upgrade.parse_options(CHECKOUT, [])
    assert (plain.options.jobs, plain.jobs_why) == (2, None)
    monkeypatch.setenv("TPU_ACCELERATOR_TYPE", "v5litepod-1")
    on_tpu = upgrade.parse_options(CHECKOUT, [])
    assert on_tpu.options.jobs == 1
    assert on_tpu.jobs_why == "a TPU host (TPU_ACCELERATOR_TYPE is set): one process at a time can hold its TPU"
    asked = upgrade.parse_options(CHECKOUT, ["--jobs", "2"])
    assert (asked.options.jobs, asked.jobs_why) == (2, None)
    # --platform says where the entries' JAX runs: on the CPU they may run side by side, on the TPU one at a time.
    assert [upgrade.parse_options(CHECKOUT, ["--platform", p]).options.jobs for p in ("cpu", "tpu")] == [2, 1]
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert upgrade.parse_options(CHECKOUT, []).options.jobs == 2
    assert boundary.one_process_at_a_time({"TPU_WORKER_ID": "0", "JAX_PLATFORMS": ""}) is not None
    assert boundary.one_process_at_a_time({"PATH": "/usr/bin"}) is None


def test_what_jax_itself_sets_on_a_machine_without_a_tpu_is_no_tpu_host():
    """JAX's cloud_tpu_init sets TPU_SKIP_MDS_QUERY=1 in its own process when it finds no TPU chip: a harness
    process that imported JAX (a test worker, a team's tool) is no TPU host for that (CI ran two entries one at a
    time and two tests that expect them side by side failed)."""
    from harness.stack import boundary

    assert boundary.one_process_at_a_time({"TPU_SKIP_MDS_QUERY": "1"}) is None
    assert boundary.one_process_at_a_time({"TPU_SKIP_MDS_QUERY": "1", "TPU_ML_PLATFORM": "JAX",
                                            "TPU_ML_PLATFORM_VERSION": "0.11.2"}) is None
    on_a_tpu_host = {"TPU_SKIP_MDS_QUERY": "true", "TPU_ACCELERATOR_TYPE": "v5litepod-4", "TPU_WORKER_ID": "0"}
    assert boundary.one_process_at_a_time(on_a_tpu_host) == ("a TPU host (TPU_ACCELERATOR_TYPE is set): one process "
                                                              "at a time can hold its TPU")
