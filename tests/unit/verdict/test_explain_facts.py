"""A change in one of a check's several golden facts (a transform's finiteness after each step) is told with the
part of its key that names it, so the verdict's line says which step moved; a check with one fact is told as
before."""

from harness.model.enums import CheckKind, ComparisonKind, Mark, Outcome
from harness.model.report import EXACT, CheckRecord, Comparison
from harness.verdict.explain import explain

STEPS = ("step 1 updates", "step 2 updates", "weight_decay=0, NaN and inf params: updates")


def _fact(key, expected, observed):
    return Comparison(f"golden:{key}", ComparisonKind.GOLDEN, expected == observed, EXACT, "", [],
                      expected=expected, observed=observed)


def _check(comparisons):
    return CheckRecord("optimizers/test_nonfinite_through_the_update[optax.adamw]", "n", "optimizers",
                       CheckKind.GOLDEN, Outcome.FAILED if any(not c.passed for c in comparisons) else Outcome.PASSED,
                       0.1, None, "", None, None, None, None, comparisons, {}, {})


def test_the_step_whose_fact_changed_is_named():
    nan, finite = {"b": "fff", "w": "nnnf"}, {"b": "fff", "w": "ffff"}
    base = _check([_fact(f"nonfinite/optax.adamw/{s}", nan, nan) for s in STEPS])
    now = _check([_fact(f"nonfinite/optax.adamw/{s}", nan, nan) for s in STEPS[:2]]
                 + [_fact(f"nonfinite/optax.adamw/{STEPS[2]}", nan, finite)])
    told = explain(base, now, Mark.VALUE_CHANGED)
    assert told.before == f"{STEPS[2]} = {nan}" and told.after == str(finite), told


def test_more_changed_facts_are_counted_and_a_lone_fact_is_told_as_before():
    nan, finite = {"w": "n"}, {"w": "f"}
    now = _check([_fact(f"nonfinite/x/{s}", nan, finite) for s in STEPS])
    told = explain(now, now, Mark.VALUE_CHANGED)
    assert told.before == f"{STEPS[0]} = {nan}" and told.after == f"{finite} (and 2 more of its 3 facts)", told
    lone = _check([_fact("edges/x/finite", nan, finite)])
    assert explain(lone, lone, Mark.VALUE_CHANGED).before == str(nan)
