"""The multi-device family's wiring: each entry runs it in a second pytest process told to simulate 4 CPU
devices (after any XLA_FLAGS of the user's), its results join the entry's one report with that process's
device count, a process that cannot start leaves an error check (never a silent gap), the report key
follows its platform, and the verdict shows where each process ran."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pytest

from harness import devices, env_vars, run_options
from harness.contract import plugin
from harness.model import entry_job, report_io, report_merge
from harness.model.codec import from_json
from harness.model.enums import BuiltinMode, Outcome, Status
from harness.model.report import JaxPlatform, Report, WarningRecord
from harness.stack.pins.matrix import Entry
from harness.stack import project
from harness.run_options import RunOptions
from harness.stack.entry_side import entry as stack_entry, multi_device
from harness.verdict import views

from support import upgrade_reports

FOUR = JaxPlatform(backend="cpu", device_kinds=["cpu"], device_count=4)


@functools.cache
def _report(name="baseline") -> Report:
    return from_json(Report, upgrade_reports.load(name))


WARNING = WarningRecord(category="DeprecationWarning", message="optax.global_norm is deprecated", origin="optax",
                        filename="optax/_src/linear_algebra.py", lineno=44, count=2, checks=["clipping/test_a"])


def _part(main: Report, checks: int = 3, status=Status.COMPLETE, exit_status=0) -> Report:
    """A family process's report: a few data_parallel checks, on 4 devices."""
    made = [dataclasses.replace(main.checks[0], id=f"{devices.FAMILY}/test_x[{i}]", nodeid=f"dp::test_x[{i}]",
                                family=devices.FAMILY) for i in range(checks)]
    return dataclasses.replace(main, checks=made, status=status, exit_status=exit_status, warnings=main.warnings[:1],
                               environment=dataclasses.replace(main.environment, jax=FOUR),
                               summary=report_merge.Summary.of(made))


class FakeSession:
    """A nox session whose `run` records each pytest command and does what `act` says in its place."""

    def __init__(self, venv: Path, act):
        self.virtualenv = type("Venv", (), {"location": str(venv)})()
        self.commands: list[tuple[list[str], dict]] = []
        self.act = act

    def run(self, *args, env=None, success_codes=(0,), **_):
        self.commands.append((list(args), dict(env or {})))
        code = self.act(list(args), dict(env or {}))
        if code not in success_codes:
            from nox.command import CommandFailed

            raise CommandFailed(f"exit {code}", return_code=code)
        return True


def _found(tmp_path, builtin=BuiltinMode.JUDGE):
    return project.Project(root=tmp_path, own_contracts=(), golden=tmp_path / "golden", locks=tmp_path / "locks",
                           builtin=builtin, baseline_from=None)


def test_the_family_process_is_told_its_devices_after_the_users_xla_flags(tmp_path):
    process = multi_device.planned(_found(tmp_path), {"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"})
    assert process.platform == "cpu"
    assert process.arguments == ("--pyargs", devices.MODULE, "--harness-multi-device")
    assert process.environment == {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_cpu_enable_fast_math=false "
                                                                         "--xla_force_host_platform_device_count=4"}
    gpu = multi_device.planned(_found(tmp_path), {env_vars.MULTI_DEVICE_PLATFORM: "gpu", "XLA_FLAGS": "--x=1"})
    assert gpu.environment == {"JAX_PLATFORMS": "gpu"}  # an accelerator's own devices: nothing simulated
    assert multi_device.planned(_found(tmp_path, BuiltinMode.OFF), {}) is None  # --no-builtin: no family


def test_the_option_is_a_project_option_with_its_platforms():
    spec = run_options.specs()["multi_device_platform"]
    assert spec.group == run_options.PROJECT and spec.env == env_vars.MULTI_DEVICE_PLATFORM
    assert spec.argparse["choices"] == ["cpu", "gpu", "tpu"]
    with pytest.raises(ValueError, match="choose one of cpu, gpu, tpu"):
        devices.process_environment("metal", {})


def test_only_the_familys_own_process_collects_its_module():
    module = Path(plugin.__file__).resolve().parents[1] / "builtin" / devices.FILE
    config = type("Config", (), {"getoption": lambda self, name, flag=False: flag})
    assert plugin.pytest_ignore_collect(module, config()) is True
    assert plugin.pytest_ignore_collect(module, type("C", (), {"getoption": lambda s, n: True})()) is None
    elsewhere = Path("/somewhere/contracts") / devices.FILE  # a team's module of the same name is theirs
    assert plugin.pytest_ignore_collect(elsewhere, config()) is None


def test_a_second_process_runs_and_its_results_join_the_entrys_report(tmp_path):
    report = tmp_path / "baseline.json"
    main = _report()
    report_io.write(report, main)

    def act(args, env):
        report_io.write(env[env_vars.REPORT], _part(main))
        return 0

    session = FakeSession(tmp_path, act)
    process = multi_device.planned(_found(tmp_path), {})
    multi_device.run(session, process, ["-q"], {env_vars.REPORT: str(report)}, report)
    (args, env), = session.commands
    assert args[:3] == ["python", "-m", "harness.contract.suite_main"] and "--harness-multi-device" in args
    assert env[env_vars.REPORT] != str(report) and env["XLA_FLAGS"].endswith(devices.SIMULATE)
    merged = report_io.load(report)
    assert merged.summary.total == main.summary.total + 3
    assert merged.summary.by_family[devices.FAMILY].passed == 3
    assert merged.environment.jax == main.environment.jax  # the main process's single device stays recorded
    assert merged.environment.family_platforms[devices.FAMILY].device_count == 4
    assert merged.status == Status.COMPLETE and merged.exit_status == main.exit_status


def test_a_family_process_that_cannot_start_leaves_an_error_check_and_fails_the_session(tmp_path):
    report = tmp_path / "baseline.json"
    report_io.write(report, _report())
    session = FakeSession(tmp_path, lambda args, env: 4)  # pytest's usage error: no report written
    with pytest.raises(Exception) as failed:
        multi_device.run(session, multi_device.planned(_found(tmp_path), {}), [], {}, report)
    assert getattr(failed.value, "return_code", None) == 4
    merged = report_io.load(report)
    record = merged.check(f"{devices.FAMILY}/process")
    assert record.outcome == Outcome.ERROR and "could not start its suite" in record.message
    assert "entry's log" in record.message
    assert merged.environment.family_platforms[devices.FAMILY].backend is None


def _main_checks_fail(main: Report):
    """A session's `act`: the family's process passes, the main run writes `main` with failed checks (exit 1)."""
    def act(args, env):
        if "--harness-multi-device" in args:
            report_io.write(env[env_vars.REPORT], _part(main, exit_status=0))
            return 0
        report_io.write(env[env_vars.REPORT], dataclasses.replace(main, exit_status=1))
        return 1
    return act


def test_checks_failing_in_the_main_run_still_run_the_family_then_fail_the_entry(tmp_path, monkeypatch):
    report, main = tmp_path / "baseline.json", _report()

    session, run = _entry_run(tmp_path, monkeypatch, _main_checks_fail(main))
    with pytest.raises(Exception) as failed:
        run()
    assert failed.value.return_code == 1 and len(session.commands) == 2
    merged = report_io.load(report)
    assert merged.exit_status == 1 and merged.environment.family_platforms[devices.FAMILY].device_count == 4


def test_a_session_whose_checks_failed_reads_its_report_once_for_the_merge_and_its_ending(tmp_path, monkeypatch):
    """The merge reads the main run's report and writes it merged; the session's failure (checks failed) then
    asks whether the report says why it ended: answered from the merged report this process wrote, not by a
    second read of a report of thousands of values (each read costs ~0.5 s on the candidate's critical path)."""
    report, main = tmp_path / "baseline.json", _report()

    session, run = _entry_run(tmp_path, monkeypatch, _main_checks_fail(main))
    read, real = [], report_io.load
    monkeypatch.setattr(report_io, "load", lambda path: read.append(Path(path)) or real(path))
    with pytest.raises(Exception) as failed:
        run()
    assert failed.value.return_code == 1
    assert read.count(report) == 1
    assert report_io.load(report).environment.family_platforms[devices.FAMILY].device_count == 4


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_merging_adds_warnings_once_and_refuses_a_check_run_twice():
    main = dataclasses.replace(_report(), warnings=[WARNING])
    part = dataclasses.replace(_part(main), warnings=[dataclasses.replace(WARNING, checks=["data_parallel/test_b"])])
    merged = report_merge.merged(main, part, devices.FAMILY)
    assert merged.warnings == [dataclasses.replace(WARNING, count=4, checks=["clipping/test_a", "data_parallel/test_b"])]
    assert report_merge.merged(main, dataclasses.replace(part, status=Status.PARTIAL), "x").status == Status.PARTIAL
    with pytest.raises(ValueError, match="also ran"):
        report_merge.merged(main, dataclasses.replace(part, checks=main.checks[:1]), devices.FAMILY)


def test_the_verdict_shows_where_each_process_ran():
    env = dataclasses.replace(_report().environment, family_platforms={devices.FAMILY: FOUR})
    text = views.platform_text(report_merge.platforms(env))
    assert text == " on cpu (1 cpu device; data_parallel: 4 cpu devices)"
    assert views.platform_text({}) == ""




def _entry_run(tmp_path, monkeypatch, act, options=RunOptions(), found=None):
    """run_entry of the baseline, told `options`, on a fake session doing `act` in place of each pytest process;
    in `found` (a team's project) when given, else in this checkout."""
    session = FakeSession(tmp_path, act)
    session.name, session.chdir = "baseline", lambda root: _Nothing()
    monkeypatch.setattr(project, "load", lambda ws: found or _found(tmp_path))
    monkeypatch.setattr(stack_entry.envs, "mark_used", lambda *a: None)
    ws = type("Ws", (), {"reports": tmp_path, "is_checkout": found is None, "options": options, "stage": None})()
    entry = Entry("baseline", {}, "", python="3.12")
    return session, lambda: stack_entry.run_entry(session, ws, entry, install=False)


def test_the_family_process_runs_beside_the_main_one_and_its_output_follows_the_main_runs(tmp_path, monkeypatch,
                                                                                           capsys):
    """The main run waits here for the family's process to have started: run one after the other, the two
    could not both finish (the wait would time out and the main run fail)."""
    import threading

    family_started, main = threading.Event(), _report()

    def act(args, env):
        if "--harness-multi-device" in args:
            family_started.set()
            print("the family's own output")  # to the file the session gave its process (not captured here)
            report_io.write(env[env_vars.REPORT], _part(main))
            return 0
        assert family_started.wait(timeout=60), "the family's process did not start beside the main run"
        report_io.write(env[env_vars.REPORT], main)
        return 0

    monkeypatch.setattr(FakeSession, "run", _writing_to_stdout(FakeSession.run))
    session, run = _entry_run(tmp_path, monkeypatch, act, RunOptions(progress=tmp_path / "progress.json"))
    run()
    assert len(session.commands) == 2
    merged = report_io.load(tmp_path / "baseline.json")
    assert merged.summary.by_family[devices.FAMILY].passed == 3
    assert capsys.readouterr().out.endswith("the family's own output\n")  # into the log, after the main run's
    (family_env,) = [env for args, env in session.commands if "--harness-multi-device" in args]
    (main_env,) = [env for args, env in session.commands if "--harness-multi-device" not in args]
    # Each process reads its job: the upgrade's display shows the main run's checks only.
    assert entry_job.read(Path(main_env[env_vars.JOB])).options.progress == tmp_path / "progress.json"
    assert entry_job.read(Path(family_env[env_vars.JOB])).options.progress is None


def _writing_to_stdout(run):
    """A fake session.run that writes what its command prints to the `stdout` it is given, as nox does."""
    import contextlib

    def wrapped(self, *args, stdout=None, **kwargs):
        if stdout is None:
            return run(self, *args, **kwargs)
        with contextlib.redirect_stdout(stdout):
            return run(self, *args, **kwargs)
    return wrapped


def test_a_main_run_that_crashes_leaves_the_family_unmerged_and_fails_as_it_ended(tmp_path, monkeypatch):
    """As when the family ran after it: a main run that did not run to its end (pytest's internal error)
    fails the session with its own code; the family's report is not merged into a report that says why."""
    main = _report()

    def act(args, env):
        if "--harness-multi-device" in args:
            report_io.write(env[env_vars.REPORT], _part(main))
            return 0
        report_io.write(env[env_vars.REPORT], dataclasses.replace(main, status=Status.PARTIAL, exit_status=None))
        return 3

    session, run = _entry_run(tmp_path, monkeypatch, act)
    with pytest.raises(Exception) as failed:
        run()
    assert failed.value.return_code == 3 and len(session.commands) == 2
    report = report_io.load(tmp_path / "baseline.json")
    assert devices.FAMILY not in report.summary.by_family and "internal error" in report.problem


def test_the_platform_the_workspace_is_given_reaches_the_family_process(tmp_path, monkeypatch):
    """`nox -s golden -- --multi-device-platform gpu`: the option is the workspace's (the golden session no longer
    writes its options into its own environment), and the family's process runs on it."""
    monkeypatch.delenv(env_vars.MULTI_DEVICE_PLATFORM, raising=False)
    main, told = _report(), []

    def act(args, env):
        if "--harness-multi-device" in args:
            told.append(env.get("JAX_PLATFORMS"))
            report_io.write(env[env_vars.REPORT], _part(main, exit_status=0))
            return 0
        report_io.write(env[env_vars.REPORT], main)
        return 0

    session = FakeSession(tmp_path, act)
    session.name, session.chdir = "baseline", lambda root: _Nothing()
    monkeypatch.setattr(project, "load", lambda ws: _found(tmp_path))
    monkeypatch.setattr(stack_entry.envs, "mark_used", lambda *a: None)
    given = RunOptions(multi_device_platform="gpu")
    ws = type("Ws", (), {"reports": tmp_path, "is_checkout": True, "options": given, "stage": None})()
    entry = Entry("baseline", {}, "", python="3.12")
    stack_entry.run_entry(session, ws, entry, install=False)
    assert told == ["gpu"]
