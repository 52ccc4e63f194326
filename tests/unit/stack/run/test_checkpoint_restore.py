"""Checkpoints across versions, host and contract side without JAX: how a checkpoint's leaves differ from
what the restoring stack expects (a dtype cast, a missing leaf, a dropped one, a shape), said by leaf with
what to do; the rollback's checks judged as the candidate's; each entry's checkpoints written beside its
report in the run's directory (never the project's own folders) and kept with its report for reuse."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness import env_vars
from harness.run_options import RunOptions
from harness.contract import restore_diff
from harness.contract.restore_diff import Kind, LeafSpec
from harness.model.codec import from_json
from harness.model.entry_job import JobOptions
from harness.model.enums import Mark, Outcome
from harness.model.report import Report, Summary
from harness.stack import paths
from harness.stack.entry_side import entry as stack_entry
from harness.stack.pins.matrix import Entry
from harness.stack.run import report_cache, followups, run_directory
from harness.stack.entry_side import rollback as rollback_run
from harness.stack.run.report_key import ReportKey
from harness.stack.workspace import Workspace
from harness.verdict import classify, compare, rollback

WRITTEN = {"model/kernel": LeafSpec("bfloat16", (3, 5)), "opt/acc_grads/kernel": LeafSpec("bfloat16", (3, 5)),
           "opt/count": LeafSpec("int32", ())}
BASE, CAND = "baseline (optax 0.2.6)", "candidate (optax 0.2.8)"


def _with(**changes) -> dict[str, LeafSpec]:
    expected = dict(WRITTEN)
    for path, spec in changes.items():
        path = path.replace("__", "/")
        if spec is None:
            expected.pop(path)
        else:
            expected[path] = spec
    return expected


def test_identical_leaves_restore_quietly():
    assert restore_diff.differences(WRITTEN, dict(WRITTEN)) == []
    assert "leaf for leaf" in restore_diff.message([], BASE, CAND)


def test_a_dtype_change_is_a_cast_named_by_leaf_with_what_was_written_and_expected():
    found = restore_diff.differences(WRITTEN, _with(opt__acc_grads__kernel=LeafSpec("float32", (3, 5))))
    assert found == [restore_diff.Difference("opt/acc_grads/kernel", Kind.DTYPE, LeafSpec("bfloat16", (3, 5)),
                                             LeafSpec("float32", (3, 5)))]
    text = restore_diff.message(found, BASE, CAND)
    assert text.startswith(f"a checkpoint written by {BASE} restored into {CAND} only works by casting for 1 leaf: ")
    assert "opt/acc_grads/kernel: written as bfloat16 (3, 5); expected float32 (3, 5)" in text
    assert "accumulator_dtype" in text and "to_shape_dtype_struct" in text  # what the team can do


def test_a_missing_leaf_fails_the_restore_and_says_how_to_initialise_it():
    expected = _with(opt__mini_step=LeafSpec("int32", ()))
    found = restore_diff.differences(WRITTEN, expected)
    assert [(d.path, d.kind, d.written) for d in found] == [("opt/mini_step", Kind.MISSING, None)]
    text = restore_diff.message(found, BASE, CAND)
    assert "fails for 1 leaf: opt/mini_step: not in the checkpoint; expected int32 ()" in text
    assert "tx.init(params)" in text


def test_a_leaf_no_longer_expected_is_dropped():
    found = restore_diff.differences(WRITTEN, _with(opt__count=None))
    assert [(d.path, d.kind) for d in found] == [("opt/count", Kind.DROPPED)]
    assert "only works by dropping for 1 leaf: opt/count: written as int32 (); not expected" in (
        restore_diff.message(found, BASE, CAND))


def test_a_shape_change_fails_and_comes_before_casts():
    found = restore_diff.differences(WRITTEN, _with(model__kernel=LeafSpec("bfloat16", (5, 3)),
                                                    opt__acc_grads__kernel=LeafSpec("float32", (3, 5))))
    assert [d.kind for d in found] == [Kind.SHAPE, Kind.DTYPE]
    text = restore_diff.message(found, BASE, CAND)
    assert "fails and only works by casting for 2 leaves: model/kernel: written as bfloat16 (3, 5); expected " \
           "bfloat16 (5, 3)" in text and "[shape]" in text and "[dtype]" in text


def test_a_changed_leaf_layout_is_marked_as_a_dtype_or_state_change():
    before = restore_diff.layout(WRITTEN)
    after = restore_diff.layout(_with(opt__acc_grads__kernel=LeafSpec("float32", (3, 5))))
    assert classify.is_layout(before) and classify.is_layout(after)
    comparison = type("C", (), {"expected": before, "observed": after, "label": "exact:checkpoint leaves",
                                "departure": None})()
    assert classify.comparison_mark(comparison) == Mark.STATE_CHANGED


@pytest.fixture(scope="module")
def reports():
    from support import upgrade_reports

    base = from_json(Report, upgrade_reports.load("baseline"))
    candidate = from_json(Report, upgrade_reports.load("candidate"))
    return base, candidate


def test_the_rollback_speaks_for_the_candidate_in_the_verdict(reports):
    base, candidate = reports
    target = next(c for c in candidate.checks if c.outcome == Outcome.PASSED and base.check(c.id) is not None)
    failed = dataclasses.replace(target, outcome=Outcome.FAILED, message="the baseline cannot restore it")
    rolled = dataclasses.replace(base, checks=[failed], summary=Summary.of([failed]), selection=[target.id])
    merged = rollback.merged(candidate, rolled)
    assert merged.check(target.id) == failed and len(merged.checks) == len(candidate.checks)
    assert merged.summary.failed == candidate.summary.failed + 1
    change = next(c for c in compare.compare_entry(base, merged).changes if c.check_id == target.id)
    assert change.mark.changes_contract and change.detail == "the baseline cannot restore it"


def test_an_entry_writes_its_checkpoints_beside_its_report_in_the_run_directory(tmp_path, monkeypatch):
    ws = run_directory.start(Workspace.of(paths.SOURCE, tmp_path / "reports"), "run-1")
    entry = Entry("candidate", {"jax": "0.12.0.1"}, "")
    report = stack_entry.report_path(ws.reports, entry)
    env = stack_entry.suite_environment(entry, str(report), str(tmp_path / "venv"), tmp_path / "golden", True)
    folder = env[env_vars.CHECKPOINTS]
    assert folder == str(tmp_path / "reports" / ".runs" / "run-1" / "checkpoints" / "candidate")


@pytest.mark.parametrize("selection, rolling_back, kept", [
    (None, False, True),  # a whole run: the rollback may read them
    (["accumulation/test_x", f"{rollback_run.PREFIX}layout[bfloat16]"], False, True),  # an attribution with them
    (["accumulation/test_x", "checkpoints/test_saved[float32]"], False, False),  # no rollback reads them
    ([f"{rollback_run.PREFIX}layout[bfloat16]"], True, False),  # the rollback reads another entry's
])
def test_an_entry_keeps_its_checkpoints_only_when_a_rollback_reads_them(tmp_path, monkeypatch, selection,
                                                                       rolling_back, kept):
    entry = Entry("optax-only", {"optax": "0.2.8"}, "")
    told = RunOptions()  # what the entry's session was told by the upgrade
    if selection is not None:
        (tmp_path / "only.txt").write_text("\n".join(selection) + "\n")
        told = dataclasses.replace(told, only=tmp_path / "only.txt")
    if rolling_back:
        told = dataclasses.replace(told, rollback_from=(tmp_path / "checkpoints" / "candidate",))
    env = stack_entry.suite_environment(entry, str(tmp_path / "optax-only.json"), str(tmp_path / "v"), tmp_path, True, options=told)
    assert (env_vars.CHECKPOINTS in env) == kept


def test_the_rollback_follows_a_candidate_that_ran_rollback_checks_and_the_attribution_reruns_them(tmp_path, reports):
    base, candidate = reports
    rolls = dataclasses.replace(candidate.checks[0], id=f"{rollback_run.PREFIX}layout[bfloat16]", family="checkpoints")
    for name, report in (("baseline", base), ("candidate", candidate)):
        checks = [*report.checks, rolls]
        (tmp_path / f"{name}.json").write_text(json.dumps(_doc(dataclasses.replace(report, checks=checks,
                                                                                   summary=Summary.of(checks)))))
    entries = [Entry("baseline", {}, ""), Entry("candidate", {}, ""), Entry("jax-only", {}, ""),
               Entry("optax-only", {}, "")]
    follow = followups.decide(tmp_path, entries)
    assert follow.rollback == (rolls.id,) and rolls.id not in follow.changed and rolls.id in follow.selection()
    assert follow.rollbacks(entries[1]) == {w: f"baseline-rollback-{w}" for w in ("candidate", "jax-only", "optax-only")}
    runs = follow.runs(entries[0], entries[1])
    rolled = [r for r in runs if r.rollback]
    assert [(r.entry, r.report, r.only, r.rollback) for r in rolled] == [
        ("baseline", "baseline-rollback-candidate", rollback_run.SELECTION, "checkpoints/candidate")]
    assert [(r.entry, r.then.report, r.then.rollback) for r in runs if r.then] == [
        (e, f"baseline-rollback-{e}", f"checkpoints/{e}") for e in ("jax-only", "optax-only")]
    followups.write(follow, tmp_path, None)
    assert (tmp_path / rollback_run.SELECTION).read_text().split() == [rolls.id]


def _doc(report: Report) -> dict:
    from harness.model.codec import to_json

    return to_json(report)


def test_a_reused_report_comes_with_its_checkpoints(tmp_path, reports, monkeypatch):
    _, candidate = reports
    run = tmp_path / "reports"
    run.mkdir()
    (run / "candidate.json").write_text(json.dumps(_doc(candidate)))
    (run / "candidate.log").write_text("log")
    written = stack_entry.checkpoints_folder(run / "candidate.json") / "bfloat16"
    written.mkdir(parents=True)
    (written / "continuation.json").write_text("{}")
    key = ReportKey({"lock": "l"})
    cache = run / report_cache.CACHE
    assert report_cache.store(cache, key, run / "candidate.json", run / "candidate.log",
                              stack_entry.checkpoints_folder(run / "candidate.json"))
    monkeypatch.setattr(report_cache, "_key", lambda *args: key)
    later = tmp_path / "later"
    later.mkdir()
    entry = Entry("candidate", {"jax": "0.12.0.1"}, "")
    done = report_cache.attempt(Workspace.of(paths.SOURCE, later), cache, entry, {}, JobOptions(seed=0),
                               later / "candidate.json", later / "candidate.log", fresh=False)
    assert done.reused is not None
    assert (later / "checkpoints" / "candidate" / "bfloat16" / "continuation.json").read_text() == "{}"
