"""Each upgrade writes into its own run directory; only a finished run is published into reports/ (last
run's files to reports/previous/), and the verdict never judges a report of another run.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/run/test_run_dir.py."""

import json

import pytest

from support import upgrade_reports
from harness import env_vars
from harness.stack import paths
from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.run import run_directory


OLD = "the last finished run's"


def _checkout(reports):
    """This checkout, its reports in `reports`."""
    return Workspace.of(paths.SOURCE, reports)


@pytest.fixture
def reports(tmp_path):
    for name in ("baseline.json", "candidate.json", "upgrade-summary.md"):
        (tmp_path / name).write_text(OLD)
    return tmp_path


def _entries_writing(seen: list):
    """A run_entries that writes each entry's report (a real one, with the run's id) and checkpoints where a
    run's entries do."""
    def run_entries(ws, entries, seed, **kw):
        seen.append(ws.reports)
        for entry in entries:
            doc = dict(upgrade_reports.load(entry.name), run_id=ws.options.run_id)
            (ws.reports / f"{entry.name}.json").write_text(json.dumps(doc))
            (ws.reports / f"{entry.name}.log").write_text(f"{entry.name} ran\n")
            (ws.reports / "checkpoints" / entry.name).mkdir(parents=True, exist_ok=True)
            (ws.reports / "checkpoints" / entry.name / "writer.json").write_text(ws.options.run_id)
    return run_entries


def _sessions_writing(seen: list):
    """The same for the follow-ups' sessions (harness.stack.run.entry_runs.run_sessions): each run's entry."""
    entries = _entries_writing(seen)
    return lambda ws, runs, seed, typed_in=None: entries(ws, [run.entry for run in runs], seed)


def test_a_finished_run_is_published_and_the_last_one_kept_in_previous(reports, monkeypatch):
    (reports / "checkpoints" / "candidate").mkdir(parents=True)
    (reports / "checkpoints" / "candidate" / "writer.json").write_text(OLD)
    (reports / "previous" / "checkpoints" / "baseline").mkdir(parents=True)  # the run before last's: replaced
    seen = []
    monkeypatch.setattr(upgrade, "run_entries", _entries_writing(seen))
    monkeypatch.setattr(upgrade, "run_sessions", _sessions_writing(seen))
    assert upgrade.upgrade(_checkout(reports), []) in (0, 1)
    assert seen and seen[0].parent == reports / run_directory.RUNS  # the entries wrote into the run's directory
    run_id = seen[0].name
    assert json.loads((reports / "baseline.json").read_text())["run_id"] == run_id
    assert json.loads((reports / "candidate.json").read_text())["run_id"] == run_id
    assert (reports / "upgrade-summary.md").read_text() != OLD
    assert (reports / "baseline.log").read_text() == "baseline ran\n"
    for name in ("baseline.json", "candidate.json", "upgrade-summary.md", "checkpoints/candidate/writer.json"):
        assert (reports / "previous" / name).read_text() == OLD
    assert not (reports / "previous" / "checkpoints" / "baseline").exists()
    assert (reports / "checkpoints" / "candidate" / "writer.json").read_text() == run_id  # this run's, published
    assert not (reports / run_directory.RUNS).exists()
    assert env_vars.RUN_ID not in __import__("os").environ and not hasattr(paths, "REPORTS")  # no global to leak


def test_a_stopped_run_publishes_nothing_and_its_files_stay_in_its_run_directory(reports, monkeypatch, capsys):
    seen = []
    write = _entries_writing(seen)

    def interrupted(ws, entries, seed, **kw):
        write(ws, entries[:1], seed)
        raise KeyboardInterrupt

    monkeypatch.setattr(upgrade, "run_entries", interrupted)
    with pytest.raises(KeyboardInterrupt):
        upgrade.upgrade(_checkout(reports), [])
    for name in ("baseline.json", "candidate.json", "upgrade-summary.md"):
        assert (reports / name).read_text() == OLD
    assert not (reports / "previous").exists() and not (reports / "baseline.log").exists()
    assert (seen[0] / "baseline.json").exists()
    assert f"this run's files stay in {seen[0]}/" in capsys.readouterr().err

    # The next run says where the unfinished one's files are, publishes its own, and leaves the stopped run's alone.
    monkeypatch.setattr(upgrade, "run_entries", _entries_writing(seen))
    monkeypatch.setattr(upgrade, "run_sessions", _sessions_writing(seen))
    assert upgrade.upgrade(_checkout(reports), []) in (0, 1)
    assert f"an earlier run did not finish; its files are in {seen[0]}/" in capsys.readouterr().out
    assert json.loads((reports / "baseline.json").read_text())["run_id"] == seen[1].name != seen[0].name
    assert (reports / "previous" / "baseline.json").read_text() == OLD
    assert [p.name for p in (reports / run_directory.RUNS).iterdir()] == [seen[0].name]

    # Named once: the run after it said where it is and finished; the next ones do not say it again.
    assert upgrade.upgrade(_checkout(reports), []) in (0, 1)
    assert "an earlier run" not in capsys.readouterr().out
    assert [p.name for p in (reports / run_directory.RUNS).iterdir()] == [seen[0].name]  # its files still kept
