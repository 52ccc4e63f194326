"""Fault injection: a plan that cannot run is refused in seconds with last run's reports untouched, and a
run that could not judge says why (a killed entry: which signal, after how many checks).

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/run/test_run_failures.py."""

import dataclasses
import json
import shutil
import time
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.model import report_io
from harness.model.enums import Status
from harness.stack import paths, project
from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.pins import current, matrix
from harness.stack.run import run_directory
from harness.stack.pins import plan
from support import upgrade_reports
from unit.stack.run.test_run_failures import (  # noqa: F401 (fixtures and helpers shared with it)
    ROOT, _metadata_without,
)


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
            if not name.startswith(f"{run_directory.RUNS}/") and name != run_directory.LOCK_NAME}


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
    [run] = run_directory.unfinished(last_run)
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
    [run] = run_directory.unfinished(last_run)
    assert f"{damaged}, line" in err and "is not a requirement" in err
    assert f"not published: {last_run}/ keeps the last finished run's verdict; this run's files are in {run}/" in err
    assert "stopped" not in err


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


# A fake entry session: the candidate's "pytest" writes a partial report and some progress, then is
# killed as the kernel's OOM killer kills it (SIGKILL: no handler runs, nothing more is written).
FAKE_NOXFILE = '''
import json, os, sys
from pathlib import Path
import nox
from harness import env_vars
from harness.stack.entry_side import entry as stack_entry
from harness.stack.pins import current, matrix
from harness.stack.workspace import Workspace

TOLD = Workspace.from_environment().options  # from the session's job, as a real session reads it
REPORTS = TOLD.reports_dir
KILLED = """
import json, os, signal, sys
from pathlib import Path
from harness.model import entry_job, progress
from harness.model.progress import Phase, Progress
from harness import env_vars
told = entry_job.read(Path(os.environ[env_vars.JOB])).options  # as the contract side reads its job
doc = json.loads(Path(sys.argv[1]).read_text()) | {"run_id": told.run_id}  # a report of this run
Path(sys.argv[2]).write_text(json.dumps(doc))
for done in range(@DONE@ + 1):
    progress.write(told.progress, Progress(Phase.RUNNING, done, @TOTAL@))
os.kill(os.getpid(), signal.SIGKILL)
"""


@nox.session(python=False)
def baseline(session):
    doc = json.loads(Path("@BASELINE@").read_text()) | {"run_id": TOLD.run_id}
    Path(REPORTS, "baseline.json").write_text(json.dumps(doc))


@nox.session(python=False)
def candidate(session):
    report = os.path.join(REPORTS, "candidate.json")
    ws = Workspace.from_environment()
    with stack_entry.explained(current.entries(ws)["candidate"], Path(report), progress_file=ws.options.progress):
        job = stack_entry.entry_jobs.write_beside("@TMP@", "candidate",
                                                  current.entries(ws)["candidate"], ws.options)
        session.run(sys.executable, "-c", KILLED, "@PARTIAL@", report, external=True,
                    env={env_vars.JOB: str(job)})  # as suite_environment tells pytest
'''


def test_a_killed_candidate_says_which_signal_after_how_many_checks(tmp_path, monkeypatch, capsys):
    base, partial = upgrade_reports.load("baseline"), upgrade_reports.load("candidate")
    partial.update(status=Status.PARTIAL.value, finished_at=None, problem=None)
    (tmp_path / "baseline.json").write_text(json.dumps(base))
    (tmp_path / "partial.json").write_text(json.dumps(partial))
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(FAKE_NOXFILE.replace("@BASELINE@", str(tmp_path / "baseline.json"))
                       .replace("@TMP@", str(tmp_path)).replace("@PARTIAL@", str(tmp_path / "partial.json"))
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
