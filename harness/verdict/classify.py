"""The mark of one check on an entry: how it changed against the baseline, named by what changed
(bad input now silent, a dtype or state layout, a value, an exception type, an API, an improvement).
"""

from __future__ import annotations

import re

from harness import not_on_stack, numerical_noise
from harness.model.enums import ComparisonKind, Mark, Outcome
from harness.model.report import NAN_STEPS_FACT, CheckRecord, Comparison, Json
from harness.model.verdict import BitsMoved
from harness.verdict import bits

# Exceptions that mean a function, class or module the check used no longer exists.
_API_GONE = ("AttributeError", "ImportError", "ModuleNotFoundError", "NotOnStack")  # the last: a table's lack
_MISSING_DETAIL = "the check ran on the baseline but not here (its module failed to import or it was skipped)"
_DTYPE_NAME = re.compile(r"^(bool|u?int\d+|b?float\d+|complex\d+|float8_\w+)$")


def is_dtype_name(value: Json) -> bool:
    return isinstance(value, str) and _DTYPE_NAME.match(value) is not None


def first_failure(check: CheckRecord) -> Comparison | None:
    """The check's first failing comparison: the one that stopped it, or, where a plain test went on past
    golden values that differ to name them all, the first of those; the check's mark is this one's."""
    return next((c for c in check.comparisons if not c.passed), None)


def differing_leaves(expected: Json, observed: Json, path: str = "") -> list[tuple[str, Json, Json]] | None:
    """(path, before, after) for each leaf of two facts that differs; None when their shapes differ."""
    if isinstance(expected, dict) and isinstance(observed, dict):
        if expected.keys() != observed.keys():
            return None
        pairs = [(f"{path}.{k}", expected[k], observed[k]) for k in expected]
    elif isinstance(expected, list) and isinstance(observed, list):
        if len(expected) != len(observed):
            return None
        pairs = [(f"{path}[{i}]", a, b) for i, (a, b) in enumerate(zip(expected, observed))]
    else:
        return [] if expected == observed else [(path, expected, observed)]
    found: list[tuple[str, Json, Json]] = []
    for sub_path, a, b in pairs:
        sub = differing_leaves(a, b, sub_path)
        if sub is None:
            return None
        found += sub
    return found


def is_layout(fact: Json) -> bool:
    """A recorded tree layout: [[path, dtype, shape], ...] (harness.contract.trees.layout)."""
    return (isinstance(fact, list) and bool(fact)
            and all(isinstance(x, list) and len(x) == 3 and is_dtype_name(x[1]) for x in fact))


def _fewer_nan_steps(comparison: Comparison) -> bool:
    if not comparison.label.endswith(f"/{NAN_STEPS_FACT}"):
        return False
    before, after = (set((v or {}).get("steps", [])) if isinstance(v, dict) else None
                     for v in (comparison.expected, comparison.observed))
    return before is not None and after is not None and after < before


def comparison_mark(comparison: Comparison) -> Mark:
    """What a failing golden/exact comparison says changed (a statement that holds again where the baseline's
    recording departs from it: an improvement)."""
    if _fewer_nan_steps(comparison) or (comparison.departure is not None and comparison.departure.holds_again):
        return Mark.IMPROVED
    expected, observed = comparison.expected, comparison.observed
    diffs = differing_leaves(expected, observed)
    if diffs and all(is_dtype_name(a) and is_dtype_name(b) for _, a, b in diffs):
        return Mark.STATE_CHANGED  # a dtype (a numeric golden value's, or inside a fact)
    if is_layout(expected) and is_layout(observed):
        return Mark.STATE_CHANGED
    return Mark.VALUE_CHANGED


def _error_mark(comparison: Comparison) -> Mark:
    if comparison.expected is not None and comparison.observed is None:
        return Mark.NOW_SILENT
    if comparison.expected is None and comparison.observed is not None:
        return Mark.IMPROVED  # bad input that passed silently now raises
    return Mark.ERROR_TYPE_CHANGED


def failure_mark(check: CheckRecord) -> Mark:
    """The mark of a check that passes on the baseline and fails here."""
    failed = first_failure(check)
    if failed is not None and failed.departure is not None and failed.departure.holds_again:
        return Mark.IMPROVED  # a departure no longer observed (a raise's too: harness.contract.raised)
    if failed is not None and failed.kind == ComparisonKind.ERROR_CONTRACT:
        return _error_mark(failed)
    if check.exception in _API_GONE:
        return Mark.API_MISSING
    return comparison_mark(failed) if failed is not None else Mark.VALUE_CHANGED


def within_noise(check: CheckRecord) -> list[Comparison]:
    """Its golden comparisons that moved beyond their ulps, within the noise measured for them (another stack)."""
    return [c for c in check.comparisons if c.noise is not None and c.noise.within]


def noise_detail(check: CheckRecord) -> str:
    """'2 golden values moved within numerical noise (up to 0.38x of 4x the noise measured on the baseline)'."""
    moved = within_noise(check)
    largest = max(c.noise.used for c in moved)
    return (f"{len(moved)} golden value{'s' * (len(moved) != 1)} moved beyond {'their' if len(moved) > 1 else 'its'} "
            f"ulps within the numerical noise measured on the baseline (up to {largest:.2g} of the "
            f"{numerical_noise.FACTOR:g}x noise allowed)")


def classify(base: CheckRecord | None, other: CheckRecord | None, moved: BitsMoved | None = None) -> tuple[Mark, str]:
    """The mark of one check on an entry, and the detail that explains it; `moved` is how its observed
    values moved against the baseline's (bits.moved), which decides 'bits changed'."""
    if other is None:
        return Mark.MISSING, _MISSING_DETAIL
    if base is None:
        return Mark.NEW_CHECK, other.message
    b, o = base.outcome, other.outcome
    if b == Outcome.SKIPPED and not_on_stack.said(base.message):  # nothing recorded to judge it against, but
        if o == Outcome.FAILED:  # a statement (a formula, an agreement) needs no recording: its failure stands
            return failure_mark(other), other.message
        ran = "" if o == Outcome.SKIPPED else f"; here it {o}"
        return Mark.NOT_ON_STACK, f"the baseline's stack lacks what it calls: {not_on_stack.what(base.message)}{ran}"
    if o == Outcome.SKIPPED and b == Outcome.PASSED and not_on_stack.said(other.message):
        return Mark.API_MISSING, f"ran on the baseline; this stack lacks what it calls: {not_on_stack.what(other.message)}"
    if o == Outcome.SKIPPED and b != Outcome.SKIPPED:
        return Mark.MISSING, other.message or "skipped here"
    if b == Outcome.SKIPPED and o != Outcome.SKIPPED:  # ran only here: a failure is still a failure
        return (failure_mark(other) if o == Outcome.FAILED else Mark.NEW_CHECK), other.message
    if Outcome.ERROR in (b, o):
        return Mark.NOT_JUDGED, (other if o == Outcome.ERROR else base).message
    if b == Outcome.PASSED and o == Outcome.FAILED:
        return failure_mark(other), other.message
    if b == Outcome.FAILED and o == Outcome.PASSED:
        return Mark.FIXED, base.message
    if b == Outcome.FAILED and o == Outcome.FAILED:
        return Mark.FAILING_BOTH, other.message
    if b == Outcome.PASSED and o == Outcome.PASSED and within_noise(other):
        return Mark.NOISE, noise_detail(other)
    if b == Outcome.PASSED and o == Outcome.PASSED and moved:
        return Mark.BITS_CHANGED, bits.describe(moved)
    return Mark.UNCHANGED, ""
