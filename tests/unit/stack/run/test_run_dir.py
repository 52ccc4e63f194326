"""Each upgrade writes into its own run directory; only a finished run is published into reports/ (last
run's files to reports/previous/), and the verdict never judges a report of another run."""

import json

import pytest

from support import upgrade_reports
from harness import env_vars
from harness.stack import paths
from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.run import run_dir
from harness.verdict import cli

OLD = "the last finished run's"


def _report(tmp_path, name: str, run_id: str | None, entry: str = "baseline"):
    doc = upgrade_reports.load(entry)
    if run_id is not None:
        doc["run_id"] = run_id
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_a_report_of_another_run_is_never_judged(tmp_path, capsys):
    base = _report(tmp_path, "baseline", "run-A")
    stray = _report(tmp_path, "candidate", "run-B", "candidate")
    assert cli.main([base, stray, "--run-id", "run-A"]) == 2
    err = capsys.readouterr().err
    assert f"{stray} by run run-B, not run run-A" in err and "never judged with this one's" in err
    assert cli.main([base, stray]) == 2  # two runs, no run named: refused all the same
    assert "not all from one upgrade run" in capsys.readouterr().err
    unnamed = _report(tmp_path, "hand-run", None, "candidate")
    assert cli.main([base, unnamed, "--run-id", "run-A"]) == 2  # the run's own verdict wants its own reports
    assert "a session run by hand" in capsys.readouterr().err


def test_reports_of_one_run_or_of_sessions_run_by_hand_are_judged(tmp_path):
    same = [_report(tmp_path, "b", "run-A"), _report(tmp_path, "c", "run-A", "candidate")]
    assert cli.main([*same, "--run-id", "run-A"]) in (0, 1)
    by_hand = [_report(tmp_path, "hb", None), _report(tmp_path, "hc", None, "candidate")]
    assert cli.main(by_hand) in (0, 1)


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
    def run_entries(ws, entries, args, seed, **kw):
        seen.append(ws.reports)
        for entry in entries:
            doc = dict(upgrade_reports.load(entry.name), run_id=args.run_id)
            (ws.reports / f"{entry.name}.json").write_text(json.dumps(doc))
            (ws.reports / f"{entry.name}.log").write_text(f"{entry.name} ran\n")
            (ws.reports / "checkpoints" / entry.name).mkdir(parents=True, exist_ok=True)
            (ws.reports / "checkpoints" / entry.name / "writer.json").write_text(args.run_id)
    return run_entries


def test_a_finished_run_is_published_and_the_last_one_kept_in_previous(reports, monkeypatch):
    (reports / "checkpoints" / "candidate").mkdir(parents=True)
    (reports / "checkpoints" / "candidate" / "writer.json").write_text(OLD)
    (reports / "previous" / "checkpoints" / "baseline").mkdir(parents=True)  # the run before last's: replaced
    seen = []
    monkeypatch.setattr(upgrade, "run_entries", _entries_writing(seen))
    assert upgrade.upgrade(_checkout(reports), []) in (0, 1)
    assert seen and seen[0].parent == reports / run_dir.RUNS  # the entries wrote into the run's directory
    run_id = seen[0].name
    assert json.loads((reports / "baseline.json").read_text())["run_id"] == run_id
    assert json.loads((reports / "candidate.json").read_text())["run_id"] == run_id
    assert (reports / "upgrade-summary.md").read_text() != OLD
    assert (reports / "baseline.log").read_text() == "baseline ran\n"
    for name in ("baseline.json", "candidate.json", "upgrade-summary.md", "checkpoints/candidate/writer.json"):
        assert (reports / "previous" / name).read_text() == OLD
    assert not (reports / "previous" / "checkpoints" / "baseline").exists()
    assert (reports / "checkpoints" / "candidate" / "writer.json").read_text() == run_id  # this run's, published
    assert not (reports / run_dir.RUNS).exists()
    assert env_vars.RUN_ID not in __import__("os").environ and not hasattr(paths, "REPORTS")  # no global to leak


def test_a_stopped_run_publishes_nothing_and_its_files_stay_in_its_run_directory(reports, monkeypatch, capsys):
    seen = []
    write = _entries_writing(seen)

    def interrupted(ws, entries, args, seed, **kw):
        write(ws, entries[:1], args, seed)
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
    assert upgrade.upgrade(_checkout(reports), []) in (0, 1)
    assert f"an earlier run did not finish; its files are in {seen[0]}/" in capsys.readouterr().out
    assert json.loads((reports / "baseline.json").read_text())["run_id"] == seen[1].name != seen[0].name
    assert (reports / "previous" / "baseline.json").read_text() == OLD
    assert [p.name for p in (reports / run_dir.RUNS).iterdir()] == [seen[0].name]


def test_only_the_newest_unfinished_run_directory_is_kept(tmp_path):
    for name in ("20260101T000000-1-aaaaaa", "20260102T000000-2-bbbbbb", "20260103T000000-3-cccccc"):
        (tmp_path / run_dir.RUNS / name).mkdir(parents=True)
    kept = run_dir.prune(tmp_path)
    assert kept == tmp_path / run_dir.RUNS / "20260103T000000-3-cccccc"
    assert run_dir.unfinished(tmp_path) == [kept]


def test_a_report_the_run_itself_writes_carries_its_id(tmp_path, monkeypatch):
    """An attribution entry the plan could not resolve is reported by the run: judged with its run's reports."""
    from harness.model import report_io
    from harness.stack.environments import entry as stack_entry
    from harness.stack.pins import matrix

    monkeypatch.setenv(env_vars.RUN_ID, "run-A")
    single = matrix.Entry(name="optax-only", pins={"optax": "9.9.9"}, description="optax alone")
    stack_entry.write_unresolvable(tmp_path, single, "no such optax", "2026-01-01T00:00:00+00:00")
    assert report_io.load(tmp_path / "optax-only.json").run_id == "run-A"
