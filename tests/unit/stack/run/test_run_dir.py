"""Each upgrade writes into its own run directory; only a finished run is published into reports/ (last
run's files to reports/previous/), and the verdict never judges a report of another run."""

import json


from support import upgrade_reports
from harness.stack.run import run_directory
from harness.verdict import cli


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


def test_only_the_newest_unfinished_run_directory_is_kept(tmp_path):
    for name in ("20260101T000000-1-aaaaaa", "20260102T000000-2-bbbbbb", "20260103T000000-3-cccccc"):
        (tmp_path / run_directory.RUNS / name).mkdir(parents=True)
    kept = run_directory.prune(tmp_path)
    assert kept == tmp_path / run_directory.RUNS / "20260103T000000-3-cccccc"
    assert run_directory.unfinished(tmp_path) == [kept]


def test_a_report_the_run_itself_writes_carries_its_id(tmp_path, monkeypatch):
    """An attribution entry the plan could not resolve is reported by the run: judged with its run's reports."""
    from harness.model import report_io
    from harness.stack.entry_side import entry as stack_entry
    from harness.stack.pins import matrix

    single = matrix.Entry(name="optax-only", pins={"optax": "9.9.9"}, description="optax alone")
    stack_entry.write_unresolvable(tmp_path, single, "no such optax", "2026-01-01T00:00:00+00:00", run_id="run-A")
    assert report_io.load(tmp_path / "optax-only.json").run_id == "run-A"
