"""A built-in check judged against the baseline's own values (harness.verdict.against_baseline) sets bits against
bits: a large array's exact values are not kept, its digest is, and two digests that differ are a change; a key
compared several times keeps one example only, which is no reference for a float value (not judged there)."""

from __future__ import annotations

from harness.model.enums import ComparisonKind
from harness.model.report import EXACT, Comparison, ObservedValues, Tolerance
from harness.verdict import against_baseline


def _exact(digest: str, values=None) -> Comparison:
    return Comparison(label="golden:split/keys", kind=ComparisonKind.GOLDEN, passed=False, tolerance=EXACT,
                      dtype="uint32", shape=[300], values=ObservedValues("uint32", [300], digest, values=values))


def test_a_large_exact_array_is_judged_by_its_digest():
    base = _exact("aaaa")
    assert against_baseline._against(base, _exact("aaaa")).passed
    changed = against_baseline._against(base, _exact("bbbb"))
    assert not changed.passed and "values differ from this machine's baseline" in changed.message


def test_a_float_key_compared_several_times_keeps_no_reference_and_is_not_judged():
    def example(observed) -> Comparison:
        return Comparison(label="golden:adam/w", kind=ComparisonKind.GOLDEN, passed=False, tolerance=Tolerance(4),
                          dtype="float32", shape=[1], observed=observed, count=20)

    assert against_baseline._against(example([0.5]), example([0.50000006])) is None
