"""The verdict's differential comparison where a value drifted on its host (harness.verdict.host_drift): the same
judgement the contract side makes (compare_close) with this machine's baseline values in place of the recording,
a value's numerical noise allowed where its run allowed it, a NaN said as such, and a check's outcome following
its comparisons only where they alone ended it."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from harness.contract.encoding import observed as observed_values
from harness.contract.measure import compare_close
from harness.model.enums import CheckKind, ComparisonKind, Mark, Outcome
from harness.model.host import Dimension
from harness.model.report import CheckRecord, Comparison, HostDrift, NoiseJudgement, Tolerance
from harness.verdict import host_drift
from harness.verdict.classify import classify

TOLERANCE = Tolerance(ulps=8)
DRIFT = HostDrift(dimensions=[Dimension.FMA], measured=1e-5, allowed=4e-5, used=0.5, within=True, outside_ulps=True,
                  recorded_on="AMD EPYC (x86_64, AVX512, FMA; OpenBLAS SkylakeX)")
ULP = 2.0 ** -23  # of float32 at 1


def _comparison(values, dtype="float32", host=None, noise=None, passed=True, message="") -> Comparison:
    arr = np.asarray(values, dtype)
    return Comparison("golden:x", ComparisonKind.GOLDEN, passed, TOLERANCE, dtype, list(arr.shape),
                      max_abs_err=0.0, values=observed_values(arr, exact=True), host=host, noise=noise,
                      message=message)


def _check(comparison, outcome=Outcome.PASSED, exception=None, kind=CheckKind.GOLDEN, message="") -> CheckRecord:
    return CheckRecord(id="fam/test_x", nodeid="t.py::test_x", family="fam", kind=kind, outcome=outcome,
                       duration_s=0.0, exception=exception, message=message, falsifying_example=None, examples=None,
                       max_abs_err=None, max_rel_err=None, comparisons=[comparison], errors_observed={}, series={})


@st.composite
def _pairs(draw):
    """A baseline array and another entry's, near it or not, with NaN, infinities, zeros and subnormals, and a
    cancellation scale or none."""
    dtype = draw(st.sampled_from(["float32", "float16", "float64"]))
    info, width = np.finfo(dtype), {"float16": 16, "float32": 32, "float64": 64}[dtype]
    values = hnp.arrays(dtype, 4, elements=hnp.from_dtype(np.dtype(dtype), allow_subnormal=True)
                        | st.floats(-float(info.smallest_normal), float(info.smallest_normal), width=width))
    base = draw(values)
    nudge = draw(hnp.arrays(np.float64, 4, elements=st.floats(-1e-3, 1e-3)))
    other = np.where(draw(hnp.arrays(bool, 4)), draw(values), (base.astype(np.float64) * (1 + nudge)).astype(dtype))
    scale = draw(st.none() | hnp.arrays(np.float64, 4, elements=st.floats(0, 10)))
    return base, other, dtype, scale


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_pairs())
def test_the_differential_judges_as_the_contract_side_does_against_the_baseline(pair):
    """Set against compare_close with the baseline's values as the expected ones: the same pass, the same
    elements outside, whatever the values (an independent implementation: NumPy's there, plain Python here)."""
    base, other, dtype, scale = pair
    drift = dataclasses.replace(DRIFT, scale=None if scale is None else [float(s) for s in scale])
    with np.errstate(all="ignore"):  # infinities and the largest finite values overflow their differences
        expected = compare_close(ComparisonKind.GOLDEN, "golden:x", other, base, TOLERANCE, dtype, scale)
        found = host_drift.differential(_comparison(base, dtype, host=drift), _comparison(other, dtype))
    assert (found.passed, found.mismatched if not found.passed else 0) == (
        expected.passed, expected.mismatched if not expected.passed else 0)


def test_a_value_of_another_stack_may_move_by_its_numerical_noise_there_as_against_its_recording():
    """A team's value: the baseline drifted 20 ulp on this host; the candidate (another stack) is 40 ulp from the
    recording, within 4x its numerical noise: moved within noise, as it is on the recording's host."""
    base = _check(_comparison([1.0 + 20 * ULP], host=DRIFT))
    noise = NoiseJudgement(measured=1e-5, allowed=4e-5, used=0.1, within=True)
    host = dataclasses.replace(DRIFT, outside_ulps=False, noise_allowed=4e-5)
    other = _check(_comparison([1.0 + 40 * ULP], noise=noise, host=host))
    judged = host_drift.rejudged(base, other, True)
    assert judged.outcome == Outcome.PASSED and judged.comparisons[0].passed
    assert classify(base, judged)[0] == Mark.NOISE
    beyond = _check(_comparison([1.0 + 400 * ULP], noise=noise, host=host))  # 380 ulp from the baseline: 45e-6
    assert host_drift.rejudged(base, beyond, True).outcome == Outcome.FAILED


def test_a_check_ended_by_more_than_its_comparisons_keeps_its_outcome():
    """A candidate check whose golden mismatch holds against this machine's baseline passes only where its
    comparisons alone ended it: not where it raised after them, and not a property (stopped at its first)."""
    base = _check(_comparison([1.0 + 20 * ULP], host=DRIFT))
    failing = _comparison([1.0 + 22 * ULP], host=dataclasses.replace(DRIFT, within=False), passed=False,
                          message="golden:x ...")
    plain = _check(failing, Outcome.FAILED, "ContractFailure", message="golden:x ...")
    assert host_drift.rejudged(base, plain, True).outcome == Outcome.PASSED
    raised = _check(failing, Outcome.FAILED, "RaisedAfterMismatches",
                    message="golden:x ...\nafter it, the check raised TypeError: boom")
    assert host_drift.rejudged(base, raised, True).outcome == Outcome.FAILED
    assert "TypeError: boom" in host_drift.rejudged(base, raised, True).message
    prop = _check(failing, Outcome.FAILED, "ContractFailure", kind=CheckKind.PROPERTY, message="golden:x ...")
    assert host_drift.rejudged(base, prop, True).outcome == Outcome.FAILED
    xpass = _check(failing, Outcome.FAILED, None)  # failed by pytest itself (a strict xpass): not its comparisons
    assert host_drift.rejudged(base, xpass, True).outcome == Outcome.FAILED


def test_a_nan_where_the_baseline_had_a_number_is_said_as_such():
    base = _check(_comparison([0.5, 1.0], host=DRIFT))
    judged = host_drift.rejudged(base, _check(_comparison([0.5, math.nan])), True).comparisons[0]
    assert not judged.passed and judged.max_abs_err == math.inf
    assert (judged.worst.index, judged.worst.expected, judged.worst.observed) == ([1], 1.0, "nan")


def test_two_hosts_are_never_set_against_each_other():
    base = _check(_comparison([1.0 + 20 * ULP], host=DRIFT))
    other = _check(_comparison([1.0 + 400 * ULP], host=DRIFT))
    assert host_drift.rejudged(base, other, False) is other
