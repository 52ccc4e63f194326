"""Fault injection: a plan that cannot run is refused in seconds with last run's reports untouched, and a
run that could not judge says why (a killed entry: which signal, after how many checks)."""

import dataclasses
import json
import re
import shutil
import signal
import time
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.model import report_io
from harness.model.enums import Status
from harness.model.progress import Phase, Progress
from harness.stack import paths, project
from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.environments import host_libraries
from harness.stack.pins import current, locks, matrix
from harness.stack.run import ending, entry_runs, run_dir, run_lock
from harness.stack.pins import plan

from support import upgrade_reports

ROOT = Path(__file__).resolve().parents[4]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def last_run(tmp_path):
    """A reports directory holding a previous run's reports (and its own previous/)."""
    reports = tmp_path / "reports"
    (reports / "previous").mkdir(parents=True)
    for name in ("baseline.json", "candidate.json", "candidate.log", "upgrade-summary.md", "upgrade-plan.json"):
        (reports / name).write_text(f"last run's {name}\n")
    (reports / "previous" / "baseline.json").write_text("the run before\n")
    return reports


@pytest.fixture
def lock_copies(tmp_path, monkeypatch):
    """The checkout's locks copied where the project reads them from, to be damaged."""
    copies = tmp_path / "locks"
    shutil.copytree(ROOT / "locks", copies)
    real = project.load(Workspace.from_environment())
    monkeypatch.setattr(project, "load", lambda ws: dataclasses.replace(real, locks=copies))
    return copies


@pytest.mark.parametrize("damage, words", [
    (lambda line: line.replace("==", "=", 1), "is not a requirement"),
    (lambda line: line.split("==")[0] + ">=0.1", "is not pinned to one version (name==version)"),
])
def test_a_damaged_lock_is_refused_before_anything_runs_or_moves(last_run, lock_copies, monkeypatch, capsys,
                                                                 damage, words):
    lock = lock_copies / "baseline.txt"
    lines = lock.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if line.startswith("jaxlib=="))
    lines[number - 1] = damage(lines[number - 1])
    lock.write_text("\n".join(lines) + "\n")
    before = _tree(last_run)
    monkeypatch.setattr(upgrade, "run_entries", lambda *a, **k: pytest.fail("an entry ran on a damaged lock"))

    started = time.perf_counter()
    assert upgrade.upgrade(Workspace.of(paths.SOURCE, last_run), []) == 2
    assert time.perf_counter() - started < 5

    err = capsys.readouterr().err
    assert f"{lock}, line {number}: `{lines[number - 1]}` {words}" in err
    assert "re-lock with `nox -s lock`" in err and "nothing was run" in err
    assert _tree(last_run) == before  # nothing moved to previous/, nothing written


def test_a_corrupt_golden_file_is_refused_before_anything_runs(last_run, tmp_path, monkeypatch, capsys):
    golden = tmp_path / "golden"
    shutil.copytree(ROOT / "golden", golden)
    (golden / "schedules.json").write_text('{"cosine": [0.1, ')  # cut short, as a full disk leaves it
    real = project.load(Workspace.from_environment())
    monkeypatch.setattr(project, "load", lambda ws: dataclasses.replace(real, golden=golden))
    before = _tree(last_run)
    monkeypatch.setattr(upgrade, "run_entries", lambda *a, **k: pytest.fail("an entry ran"))
    assert upgrade.upgrade(Workspace.of(paths.SOURCE, last_run), []) == 2
    assert f"golden file {golden / 'schedules.json'} is unreadable" in capsys.readouterr().err
    assert _tree(last_run) == before


def _published(reports: Path) -> dict[str, bytes]:
    """The reports directory as a reader sees it: run directories and the run lock left out."""
    return {name: data for name, data in _tree(reports).items()
            if not name.startswith(f"{run_dir.RUNS}/") and name != run_lock.LOCK_NAME}


def test_a_candidate_that_does_not_resolve_publishes_nothing(last_run, monkeypatch, capsys):
    """A mistyped candidate: its reason, exit 2, and the last run's verdict left where it is (not moved to
    previous/); the unresolvable candidate's report stays in the run's own directory, and the message says so."""
    def unresolvable(*args, **kwargs):
        raise HarnessError("Because there is no version of optax==0.2.88, your requirements are unsatisfiable.")

    monkeypatch.setattr(plan, "build", unresolvable)
    monkeypatch.setattr(upgrade, "run_entries", lambda *a, **k: pytest.fail("an entry ran"))
    before = _published(last_run)
    assert upgrade.upgrade(Workspace.of(paths.SOURCE, last_run), ["--candidate", "optax==0.2.88"]) == 2
    assert _published(last_run) == before  # nothing moved to previous/, nothing published
    [run] = run_dir.unfinished(last_run)
    report = report_io.load(run / "candidate.json")
    assert report.status == Status.UNRESOLVABLE and "no version of optax==0.2.88" in report.problem
    err = capsys.readouterr().err
    assert "no version of optax==0.2.88" in err and f"{run}/candidate.json says why" in err
    assert f"not published: {last_run}/ keeps the last finished run's verdict" in err
    assert "stopped" not in err

    # One more typo: the last finished run's verdict is still there; the note names the run that could not start.
    assert upgrade.upgrade(Workspace.of(paths.SOURCE, last_run), ["--candidate", "optax==0.2.88"]) == 2
    assert _published(last_run) == before
    assert f"an earlier run stopped before any entry started; its files are in {run}/" in capsys.readouterr().out


def test_a_resolved_plan_that_fails_its_checks_publishes_nothing(last_run, tmp_path, monkeypatch, capsys):
    """The plan resolves, but a lock it resolved is damaged: refused before any entry starts, nothing published."""
    damaged = tmp_path / "candidate.txt"
    damaged.write_text((ROOT / "locks" / "candidate.txt").read_text().replace("jaxlib==", "jaxlib=", 1))
    ws = Workspace.of(paths.SOURCE, last_run)

    def resolved(*args, **kwargs):
        entries = matrix.upgrade_plan(current.entries(ws))
        return [entries[0], dataclasses.replace(entries[1], locked=False, lock_file=str(damaged)), *entries[2:]]

    monkeypatch.setattr(plan, "build", resolved)
    monkeypatch.setattr(upgrade, "run_entries", lambda *a, **k: pytest.fail("an entry ran"))
    before = _published(last_run)
    assert upgrade.upgrade(ws, []) == 2
    assert _published(last_run) == before
    err = capsys.readouterr().err
    [run] = run_dir.unfinished(last_run)
    assert f"{damaged}, line" in err and "is not a requirement" in err
    assert f"not published: {last_run}/ keeps the last finished run's verdict; this run's files are in {run}/" in err
    assert "stopped" not in err


def _metadata_without(monkeypatch, missing: set[str], requires: list[str] | None = None) -> None:
    """importlib.metadata as an interpreter without the distributions `missing` sees it (nothing uninstalled);
    `requires`: the installed tool's declared dependencies."""
    real = host_libraries.metadata.version

    def version(name: str) -> str:
        if name.lower() in missing:
            raise host_libraries.metadata.PackageNotFoundError(name)
        try:
            return real(name)
        except host_libraries.metadata.PackageNotFoundError:
            return "1.0"  # what this test environment lacks beside the point (uv's wheel)

    monkeypatch.setattr(host_libraries.metadata, "version", version)
    if requires is not None:
        monkeypatch.setattr(host_libraries.metadata, "requires",
                            lambda name: requires if name == host_libraries.DISTRIBUTION else pytest.fail(name))


def test_a_nox_without_the_runner_tools_is_refused_before_any_entry_runs(last_run, monkeypatch, capsys):
    """A nox installed on its own (not from locks/runner.txt) lacks griffe: said before anything runs, not
    after every entry ran, when the API diff needs it."""
    _metadata_without(monkeypatch, {"griffe", "jsonschema"})
    before = _tree(last_run)
    monkeypatch.setattr(upgrade, "run_entries", lambda *a, **k: pytest.fail("an entry ran without griffe"))
    assert upgrade.upgrade(Workspace.of(paths.SOURCE, last_run), []) == 2
    err = capsys.readouterr().err
    assert "nothing was run" in err and "griffe, jsonschema" in err and "not installed" in err
    assert "`.venv/bin/pip install -r locks/runner.txt`" in err
    assert _tree(last_run) == before  # nothing published, nothing moved


def test_the_libraries_checked_are_the_runner_locks(monkeypatch):
    """Every library locks/runner.txt pins, none named by hand: with none installed, all are said."""
    pinned = re.findall(r"^([A-Za-z0-9._-]+)==", (ROOT / "locks" / "runner.txt").read_text(), re.MULTILINE)
    _metadata_without(monkeypatch, {name.lower() for name in pinned})
    monkeypatch.setattr(locks, "uv", lambda: None)  # nor a uv on PATH
    assert len(pinned) >= 5
    problem = host_libraries.problem()
    assert problem is not None and f"{', '.join(sorted(pinned))} are not installed" in problem


def test_an_installed_tool_checks_its_declared_dependencies(monkeypatch, tmp_path):
    """A team's tool has no locks/runner.txt: the package's own dependencies (its extras not) are checked,
    and the fix installs just those into the tool's interpreter."""
    monkeypatch.setattr(host_libraries, "RUNNER_LOCK", tmp_path / "no-runner.txt")
    _metadata_without(monkeypatch, {"griffe", "numpy"}, ["nox>=2024.10.9", "griffe>=2.4",
                                                        'numpy; extra == "contract"'])
    problem = host_libraries.problem()
    assert problem is not None and "griffe is not installed" in problem and "numpy" not in problem
    assert "-m pip install 'griffe>=2.4'" in problem
    _metadata_without(monkeypatch, set(), ["nox>=2024.10.9", "griffe>=2.4"])
    assert host_libraries.problem() is None


def test_uv_on_path_serves_as_the_runners_own(monkeypatch):
    """The harness runs uv as a program, the runner's own or one on PATH (locks.uv): either will do."""
    _metadata_without(monkeypatch, {"uv"})
    monkeypatch.setattr(locks, "uv", lambda: "/usr/local/bin/uv")
    assert host_libraries.problem() is None
    monkeypatch.setattr(locks, "uv", lambda: None)
    assert "uv is not installed" in host_libraries.problem()


def test_a_lock_reads_pins_markers_and_notes_and_names_a_bad_line():
    text = "# header\nnumpy==2.0.0\n    # via jax\ncolorama==0.4.6 ; sys_platform == 'win32'\nml_dtypes==0.6.0\n"
    assert locks.parse_lock(text) == {"numpy": "2.0.0", "colorama": "0.4.6", "ml-dtypes": "0.6.0"}
    with pytest.raises(HarnessError, match=r"^x.txt, line 3: `optax 0.2.6` is not a requirement"):
        locks.parse_lock(text.replace("    # via jax", "optax 0.2.6"), "x.txt")


@pytest.mark.parametrize("code, state, said", [
    (-signal.SIGKILL, Progress(Phase.RUNNING, 212, 345),
     "was killed by SIGKILL after 212 of 345 checks (often out of memory)"),
    (-signal.SIGSEGV, Progress(Phase.COLLECTING), "crashed with SIGSEGV while collecting its checks"),
    (-signal.SIGTERM, Progress(Phase.RUNNING, 3, 10),
     "was killed by SIGTERM after 3 of 10 checks (a stop request: a job's time limit or a shutdown)"),
    (2, Progress(Phase.RUNNING, 40, 345), "was interrupted after 40 of 345 checks"),
    (-signal.SIGKILL, None, "was killed by SIGKILL before its suite started (often out of memory)"),
])
def test_why_a_suite_ended_early_is_worded_to_follow_the_entry_name(code, state, said):
    assert ending.explain(code, state) == said


# A fake entry session: the candidate's "pytest" writes a partial report and some progress, then is
# killed as the kernel's OOM killer kills it (SIGKILL: no handler runs, nothing more is written).
FAKE_NOXFILE = '''
import json, os, sys
from pathlib import Path
import nox
from harness import env_vars
from harness.stack.environments import entry as stack_entry
from harness.stack.pins import current, matrix
from harness.stack.workspace import Workspace

REPORTS = os.environ[env_vars.REPORTS_DIR]
KILLED = """
import json, os, signal, sys
from pathlib import Path
from harness.model import progress
from harness.model.progress import Phase, Progress
from harness import env_vars
doc = json.loads(Path(sys.argv[1]).read_text()) | {"run_id": os.environ[env_vars.RUN_ID]}  # a report of this run
Path(sys.argv[2]).write_text(json.dumps(doc))
for done in range(@DONE@ + 1):
    progress.write(os.environ[env_vars.PROGRESS], Progress(Phase.RUNNING, done, @TOTAL@))
os.kill(os.getpid(), signal.SIGKILL)
"""


@nox.session(python=False)
def baseline(session):
    doc = json.loads(Path("@BASELINE@").read_text()) | {"run_id": os.environ[env_vars.RUN_ID]}
    Path(REPORTS, "baseline.json").write_text(json.dumps(doc))


@nox.session(python=False)
def candidate(session):
    report = os.path.join(REPORTS, "candidate.json")
    with stack_entry.explained(current.entries(Workspace.from_environment())["candidate"], Path(report)):
        session.run(sys.executable, "-c", KILLED, "@PARTIAL@", report, external=True)
'''


def test_a_killed_candidate_says_which_signal_after_how_many_checks(tmp_path, monkeypatch, capsys):
    base, partial = upgrade_reports.load("baseline"), upgrade_reports.load("candidate")
    partial.update(status=Status.PARTIAL.value, finished_at=None, problem=None)
    (tmp_path / "baseline.json").write_text(json.dumps(base))
    (tmp_path / "partial.json").write_text(json.dumps(partial))
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(FAKE_NOXFILE.replace("@BASELINE@", str(tmp_path / "baseline.json"))
                       .replace("@PARTIAL@", str(tmp_path / "partial.json"))
                       .replace("@TOTAL@", "345").replace("@DONE@", "7"))
    ws = dataclasses.replace(Workspace.of(paths.SOURCE, tmp_path / "reports"), noxfile=noxfile)

    assert upgrade.upgrade(ws, []) == 2

    out = capsys.readouterr().out
    headline = "CANNOT JUDGE: candidate was killed by SIGKILL after 7 of 345 checks (often out of memory)"
    assert f"VERDICT  {headline}" in out
    assert "single-package entries are not needed" not in out
    assert "the single-package entries are not run" in out
    report = report_io.load(tmp_path / "reports" / "candidate.json")
    assert report.status == Status.PARTIAL
    assert report.problem == "was killed by SIGKILL after 7 of 345 checks (often out of memory)"
    summary = json.loads((tmp_path / "reports" / "upgrade-summary.json").read_text())
    assert summary["headline"] == headline


def test_a_killed_nox_session_is_explained_by_the_host(tmp_path, monkeypatch):
    """nox itself killed (its entry session could not say why): the host reads nox's return code and the
    progress file and sets the partial report's problem."""
    from harness.model import progress

    partial = upgrade_reports.load("candidate")
    partial.update(status=Status.PARTIAL.value, finished_at=None, problem=None)
    (tmp_path / "candidate.json").write_text(json.dumps(partial))
    progress.write(tmp_path / "progress.json", Progress(Phase.RUNNING, 212, 345))
    entry = current.entries(Workspace.from_environment())["candidate"]
    entry_runs.explain_ending(tmp_path, entry, -signal.SIGKILL, tmp_path / "progress.json", None)
    said = report_io.load(tmp_path / "candidate.json")
    assert said.problem == "was killed by SIGKILL after 212 of 345 checks (often out of memory)"
    assert said.status == Status.PARTIAL and len(said.checks) == len(partial["checks"])
    entry_runs.explain_ending(tmp_path, entry, 1, tmp_path / "progress.json", None)  # a reason given is kept
    assert report_io.load(tmp_path / "candidate.json").problem == said.problem
