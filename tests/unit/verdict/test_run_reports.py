"""A run's reports (harness.verdict.run_reports): each file read once while unchanged, read again once
rewritten; each pair compared once, the merged rollback's comparison the same as comparing it afresh."""

from __future__ import annotations

import dataclasses
import json

from support import upgrade_reports
from harness.model import report_io
from harness.model.report import Summary
from harness.verdict import compare, rollback
from harness.verdict.run_reports import RunReports


def _write(tmp_path, name: str):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(upgrade_reports.load(name)))
    return path


def _counted(monkeypatch, module, name: str) -> list:
    calls, real = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


def test_a_report_is_read_once_while_unchanged(tmp_path, monkeypatch):
    path = _write(tmp_path, "jax-only")
    loads = _counted(monkeypatch, report_io, "load")
    run = RunReports()
    first = run.load(path)
    assert run.load(str(path)) is first and len(loads) == 1
    assert RunReports().load(path) is not first and len(loads) == 2  # another run reads it itself


def test_a_report_rewritten_is_read_again(tmp_path):
    path = _write(tmp_path, "jax-only")
    run = RunReports()
    first = run.load(path)
    doc = upgrade_reports.load("jax-only")
    doc["problem"] = "was killed by SIGKILL after 3 of 9 checks"
    report_io.write(path, report_io.parse(doc))  # atomic, as every report is written: a new file
    assert run.load(path).problem == doc["problem"] and run.load(path) is not first


def test_a_report_written_by_the_run_is_held_as_written(tmp_path, monkeypatch):
    path = tmp_path / "jax-only.json"
    report = report_io.parse(upgrade_reports.load("jax-only"))
    report_io.write(path, report)
    run = RunReports()
    run.wrote(path, report)
    loads = _counted(monkeypatch, report_io, "load")
    assert run.load(path) is report and not loads


def test_each_pair_is_compared_once_the_replay_derived(monkeypatch):
    base, cand = (report_io.parse(upgrade_reports.load(n)) for n in ("baseline", "candidate"))
    replay = dataclasses.replace(base, selection=[])
    changes = _counted(monkeypatch, compare, "_changes")
    run = RunReports()
    first = run.compared(base, cand)
    assert run.compared(base, cand) is first and len(changes) == 1
    run.compared(base, cand, replay)  # the follow-ups compared without the replay; the verdict's is derived
    assert run.compared(base, cand, replay) is run.compared(base, cand, replay) and len(changes) == 1


def test_the_merged_rollback_is_compared_as_afresh(monkeypatch):
    """The candidate with its rollback checks from the baseline's run of them: only those judged again, and the
    comparison equal to comparing the merged report from scratch."""
    base, cand = (report_io.parse(upgrade_reports.load(n)) for n in ("baseline", "candidate"))
    changed = compare.changed_check_ids(compare.compare_entry(base, cand))[:3]
    assert changed  # the fixture's candidate changes checks: the merge below moves them back
    restored = [base.check(i) for i in changed]
    rolled = dataclasses.replace(base, checks=restored, summary=Summary.of(restored))
    run = RunReports()
    before = run.compared(base, cand)
    merged = run.merged(cand, rolled)
    found = run.compared(base, merged)
    assert found == compare.compare_entry(base, rollback.merged(cand, rolled))
    assert found != before and {c.check_id for c in found.changed}.isdisjoint(changed)
