"""Closeness and exactness: the same rule as numpy.testing, with the magnitudes the report needs."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harness.contract.measure import compare_close, compare_exact
from harness.model.enums import ComparisonKind

GOLDEN, EXACT = ComparisonKind.GOLDEN, ComparisonKind.EXACT

from harness.contract.tolerances import ulp
from harness.model.report import Tolerance

finite = st.floats(-1e6, 1e6, width=32)


def close(observed, expected, ulps=8, dtype="float32", **kw):
    return compare_close(GOLDEN, "x", observed, expected, Tolerance(ulps=ulps), dtype, **kw)


@example(np.zeros(4, np.float32), np.full(4, 1.112541e-39, np.float32), 1)  # found drawn: a subnormal expected
@given(hnp.arrays(np.float32, 4, elements=finite), hnp.arrays(np.float32, 4, elements=finite),
       st.sampled_from([1, 8, 64]))
def test_close_allows_k_float32_ulps_at_each_expected_value(obs, exp, k):
    """Independent of the harness: NumPy's own spacing of float32, the smallest normal's below it; an expected
    subnormal may be observed flushed to zero (XLA on CPU), so there the smallest normal itself is allowed."""
    tiny = np.float64(np.finfo(np.float32).smallest_normal)
    spacing = np.maximum(np.spacing(np.abs(exp)), np.spacing(np.finfo(np.float32).smallest_normal)).astype(np.float64)
    subnormal = (exp != 0) & (np.abs(exp) < tiny)
    allowed = np.where(subnormal, np.maximum(k * spacing, tiny), k * spacing)
    inside = np.abs(obs.astype(np.float64) - exp.astype(np.float64)) <= allowed
    assert close(obs, exp, k).passed == bool(inside.all())


@pytest.mark.parametrize("dtype, x, spacing", [
    ("float32", 1.0, 2.0**-23), ("float32", 0.0, 2.0**-149), ("float32", 1e-42, 2.0**-149),
    ("bfloat16", 3.0, 2.0**-6), ("float16", 1.0, 2.0**-10), ("float16", 1e-6, 2.0**-24), ("float64", 1.0, 2.0**-52)])
def test_ulp_is_the_spacing_of_the_dtype(dtype, x, spacing):
    assert ulp(x, dtype) == spacing


def test_failure_message_gives_counts_magnitudes_and_ulps():
    result = close(np.array([1.0, 2.5, 3.0], np.float32), np.array([1.0, 2.0, 3.0]))
    assert not result.passed and result.mismatched == 1 and result.size == 3
    assert result.max_abs_err == pytest.approx(0.5) and result.max_rel_err == pytest.approx(0.25)
    assert "1 of 3 elements outside 8 ulp" in result.message and "worst at index (1,)" in result.message
    assert "expected 2.0, observed 2.5 (2.1e+06 ulp)" in result.message
    assert result.allowed_ulps == 8 and result.allowed_rel == pytest.approx(8 * 2.0**-23)


def test_a_small_value_is_held_to_its_own_ulps_not_to_a_floor_near_one():
    tiny = np.float32(1e-6)
    assert not close(np.float32(0.0), tiny).passed and not close(np.float32(4e-6), tiny).passed
    assert close(np.nextafter(tiny, np.float32(1)), tiny).passed


def test_a_cancellation_scale_takes_the_ulps_at_the_operands():
    result = close(np.float32(1e-7), 0.0, scale=1.0, override="a - b with |a|, |b| ~ 1")
    assert result.passed and result.override and result.allowed_ulps >= 1e9  # capped: infinitely many at 0


@example(np.array([1e-7, 0.0], np.float32), np.array([0.0, 1.112541e-39]), np.array([1.0, 0.0]))
@given(hnp.arrays(np.float32, 5, elements=finite), hnp.arrays(np.float64, 5, elements=st.floats(-1e6, 1e6)),
       hnp.arrays(np.float64, 5, elements=st.floats(0, 1e6)))
def test_one_scale_per_element_judges_each_element_as_its_own_call(obs, exp, scale):
    """A vector with one operand scale per element (the schedules' closed forms) fails exactly where one
    call per element, each with its own scale, fails: the allowance is elementwise."""
    one = close(obs, exp, scale=scale, override="cancellation")
    each = [close(o, e, scale=float(s), override="cancellation") for o, e, s in zip(obs, exp, scale)]
    assert one.mismatched == sum(not c.passed for c in each)
    assert one.passed == all(c.passed for c in each)
    assert one.allowed_ulps == max(c.allowed_ulps for c in each)


def test_nan_and_inf_equal_only_themselves():
    assert close(np.array([np.nan, np.inf], np.float32), [np.nan, np.inf]).passed
    assert not close(np.float32(np.inf), -np.inf).passed
    assert not close(np.float32(np.nan), 0.0).passed


def test_shape_mismatch_fails_with_both_shapes():
    result = close(np.zeros((2, 3), np.float32), np.zeros((3, 2)))
    assert not result.passed and "[2, 3] observed, [3, 2] expected" in result.message


def test_exact_treats_signed_zero_as_equal_but_not_one_ulp():
    assert compare_exact(EXACT, "z", np.float32(-0.0), 0.0).passed
    one_ulp = np.nextafter(np.float32(1), np.float32(2))
    assert not compare_exact(EXACT, "z", one_ulp, np.float32(1)).passed


def test_exact_facts_name_only_the_items_that_changed():
    result = compare_exact(EXACT, "layout", [["a", "int32"], ["b", "float32"]], [["a", "int32"], ["b", "bfloat16"]])
    assert not result.passed
    assert "item 1" in result.message and "item 0" not in result.message


def test_list_fact_of_another_length_names_the_items():
    result = compare_exact(EXACT, "steps", [0, 1, 3], [0, 1, 3, 7])
    assert not result.passed and "length 4 -> 3" in result.message and "gone 7" in result.message


def test_a_subnormal_expected_value_may_be_observed_flushed_to_zero():
    """XLA on CPU flushes subnormal results to zero: the allowance below the smallest normal is it."""
    subnormal = -1.1739001269236743e-38
    result = close(np.float32(-0.0), subnormal)
    assert result.passed and "flushes" in result.override
    assert not close(np.float32(-5e-38), subnormal).passed  # more than the smallest normal off still fails
    assert close(np.float32(1.0), 1.0).override is None


@given(hnp.arrays(np.float64, st.sampled_from([(), (3,), (2, 2)]), elements=st.floats(-1e300, 1e300)),
       st.data())
def test_errors_of_finite_values_are_the_plain_differences(exp, data):
    """errors() takes a shorter path when nothing is NaN or infinite: the same absolute and relative
    errors as written from their definition (0 relative error where the values are equal)."""
    from harness.contract.measure import errors

    obs = data.draw(hnp.arrays(np.float64, exp.shape, elements=st.floats(-1e300, 1e300)))
    abs_err, rel_err = errors(obs, exp)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        plain = np.abs(obs - exp)
        relative = np.where(plain == 0, 0.0, plain / np.abs(exp))
    assert isinstance(abs_err, np.ndarray) and abs_err.shape == exp.shape
    np.testing.assert_array_equal(abs_err, plain)
    np.testing.assert_array_equal(rel_err, relative)
