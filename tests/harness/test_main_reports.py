"""Behaviour unchanged: on real reports from before the typed model, the new compare gives the same
marks, counts, details, headline and exit status as the harness that wrote them.

One mark is gone on purpose: "drift within tolerance" (a golden comparison's error grew) became
"bits changed", which compares observed values; these reports kept none, so what was drift there
is unchanged here."""

import pytest

from harness.model import report_io
from harness.model.enums import Mark
from harness.verdict import compare, render

import main_reports


@pytest.fixture(scope="module")
def reports():
    return {name: report_io.parse(main_reports.load(name), name) for name in main_reports.ENTRIES}


@pytest.fixture(scope="module")
def verdict(reports):
    return compare.judge(reports["baseline"], [reports[n] for n in main_reports.ENTRIES[1:]])


def test_same_headline_and_exit_status(verdict):
    old = main_reports.old_verdict()
    assert verdict.headline == old["headline"] == "REGRESSED: 21 contracts changed on candidate"
    assert verdict.exit_status == old["exit_status"] == 1


@pytest.mark.parametrize("index", [0, 1, 2])
def test_same_counts_marks_and_details_per_entry(verdict, index):
    old = main_reports.old_verdict()["entries"][index]
    new = verdict.entries[index]
    assert new.name == old["name"]
    old_counts = dict(old["counts"])
    old_counts["unchanged"] += old_counts.pop("drift within tolerance")
    new_counts = {str(m): n for m, n in new.counts.items()}
    assert new_counts.pop("bits changed") == 0 and new_counts == old_counts
    assert [(c.check_id, str(c.mark), c.detail) for c in new.changed] == \
        [(c["check_id"], c["mark"], c["detail"]) for c in old["changes"] if c["mark"] != "drift within tolerance"]


def test_attribution_names_optax_for_every_change(verdict):
    jax_only, optax_only = verdict.entries[1], verdict.entries[2]
    bad_on_candidate = {c.check_id for c in verdict.entries[0].bad}
    assert bad_on_candidate == {c.check_id for c in optax_only.bad}
    assert not jax_only.bad


def test_identical_reports_are_ok(reports):
    same = compare.judge(reports["baseline"], [reports["baseline"]])
    assert same.exit_status == 0 and same.headline == "OK: no contract regressed on baseline"
    assert all(c.mark == Mark.UNCHANGED for c in same.entries[0].changes)


def test_summary_json_keeps_its_shape(verdict):
    summary = render.as_json(verdict)
    old = main_reports.old_verdict()
    assert summary.keys() == old.keys() | {"bits_line"}
    assert [e.keys() for e in summary["entries"]] == [e.keys() for e in old["entries"]]
