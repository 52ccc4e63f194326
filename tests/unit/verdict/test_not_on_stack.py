"""A check skipped "not on this stack" (harness.not_on_stack): on the baseline, nothing to judge (counted,
never a change); on a candidate whose baseline ran it, the API went away (a change)."""

import pytest

from harness.model.enums import CheckKind, Mark, Outcome
from harness.model.report import CheckRecord
from harness.verdict.classify import classify

LACKS = "Skipped: not on this stack: optax 0.2.5 has no optax.freeze"


def _check(outcome: Outcome, message: str = "") -> CheckRecord:
    return CheckRecord(id="masks/test_freeze", nodeid="t.py::test_freeze", family="masks", kind=CheckKind.GOLDEN,
                       outcome=outcome, duration_s=0.0, exception=None, message=message, falsifying_example=None,
                       examples=None, max_abs_err=None, max_rel_err=None, comparisons=[], errors_observed={},
                       series={})


def test_a_failure_on_the_candidate_stands_whatever_the_baseline_lacked():
    """A statement (a float64 formula, two paths' agreement) needs no recording: the candidate failing it is a
    change even where the baseline's stack could not run the check."""
    mark, _ = classify(_check(Outcome.SKIPPED, LACKS), _check(Outcome.FAILED, "reference:step 2 update: 3 of 6 ..."))
    assert mark.changes_contract


@pytest.mark.parametrize("candidate", [Outcome.SKIPPED, Outcome.PASSED, Outcome.ERROR])
def test_on_the_baseline_it_is_not_applicable_unless_the_candidate_fails(candidate):
    mark, detail = classify(_check(Outcome.SKIPPED, LACKS), _check(candidate, LACKS if candidate == "skipped" else ""))
    assert mark == Mark.NOT_ON_STACK and not mark.changes_contract
    assert "optax 0.2.5 has no optax.freeze" in detail


def test_on_a_candidate_whose_baseline_ran_it_the_api_went_away():
    mark, detail = classify(_check(Outcome.PASSED), _check(Outcome.SKIPPED, LACKS))
    assert mark == Mark.API_MISSING and mark.changes_contract
    assert detail == "ran on the baseline; this stack lacks what it calls: optax 0.2.5 has no optax.freeze"


def test_another_skip_on_the_candidate_is_still_a_missing_check():
    assert classify(_check(Outcome.PASSED), _check(Outcome.SKIPPED, "Skipped: flaky"))[0] == Mark.MISSING
