"""Bit-level movement of observed values: ulps in each value's own dtype, signed zeros, NaN/inf."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.contract.encoding import observed
from harness.model.enums import ComparisonKind
from harness.model.report import EXACT, Comparison
from harness.verdict.bits import _moved, ulps_between


_UINT = {"float64": np.uint64, "float32": np.uint32, "float16": np.uint16, "bfloat16": np.uint16}


def _np_dtype(dtype):
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)


def _step(x, k, dtype):
    """The value k representable values further from zero than x (x >= 0: up; x < 0: down)."""
    a = np.asarray(x, _np_dtype(dtype))
    return (a.view(_UINT[dtype]) + _UINT[dtype](k)).view(_np_dtype(dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("x", [1.0, -3.5, 1e-3, 0.0, 65000.0 / 2])
def test_neighbours_are_one_ulp_apart_in_their_own_dtype(dtype, x):
    a = np.asarray(x, _np_dtype(dtype))
    assert ulps_between(float(_step(a, 1, dtype)), float(a), dtype) == 1


@given(st.floats(-2.0**100, 2.0**100, width=32).filter(lambda v: v != 0), st.integers(0, 1000))
def test_ulps_count_the_float32_values_between(x, k):
    assert ulps_between(float(_step(x, k, "float32")), float(np.float32(x)), "float32") == k


def test_across_zero_the_ulps_add_and_signed_zeros_are_zero_apart():
    tiny = float(np.nextafter(np.float32(0), np.float32(1)))
    assert ulps_between(tiny, -tiny, "float32") == 2
    assert ulps_between(0.0, -0.0, "float32") == 0


def _comparison(values, dtype="float32"):
    return Comparison("golden:x", ComparisonKind.GOLDEN, True, EXACT, dtype, [len(values)],
                      values=observed(np.asarray(values, dtype)))


def test_sign_of_zero_and_nan_are_counted_apart_from_ulps():
    moved = _moved(_comparison([0.0, 1.0, np.nan, 2.0]), _comparison([-0.0, 1.0, 1.0, np.inf]))
    assert moved.values == 3 and moved.sign_flips == 1
    assert moved.nonfinite_vanished == 1 and moved.nonfinite_appeared == 1 and moved.max_ulps == 0


def test_equal_bits_have_equal_digests_and_do_not_move():
    assert _moved(_comparison([0.5, -0.0]), _comparison([0.5, -0.0])) is None
    assert _comparison([0.0]).values.digest != _comparison([-0.0]).values.digest


def test_large_arrays_keep_a_digest_and_a_summary():
    big = _comparison(np.r_[np.zeros(300), -0.0, np.nan])
    assert big.values.values is None and big.values.summary.nan == 1 and big.values.summary.negative_zeros >= 1
    other = _comparison(np.r_[np.zeros(300), 0.0, np.nan])
    assert _moved(big, other).digests_changed == 1


def _equivalence(values, max_abs_err):
    return Comparison("equivalence:jit vs eager", ComparisonKind.EQUIVALENCE, True, EXACT, "float32",
                      [len(values)], max_abs_err=max_abs_err, values=observed(np.asarray(values, np.float32)))


def test_two_paths_that_become_bit_identical_are_named():
    moved = _moved(_equivalence([0.1, 0.2], 1e-9), _equivalence([0.1, 0.2], 0.0))
    assert moved.paths_now_identical == ["equivalence:jit vs eager"] and moved.values == 0
    again = _moved(_equivalence([0.1, 0.2], 0.0), _equivalence([0.1, 0.25], 1e-9))
    assert again.paths_now_differ == ["equivalence:jit vs eager"] and again.values == 1


def _bound(value):
    """A bound's observed value: a statistic (|sample variance / variance - 1|) set against a limit."""
    return Comparison("bound:sample variance", ComparisonKind.BOUND, True, EXACT, "float64", [1],
                      values=observed(np.asarray([value], np.float64)))


def test_a_bounds_statistic_moves_without_an_ulp_count():
    """Two draws of a statistic near zero are billions of float64 ulps apart: an ulp count says nothing about
    it (the bound is what the check holds), so it moves the value count but never the largest move."""
    moved = _moved(_bound(0.0013), _bound(0.0021))
    assert moved.values == 1 and moved.compared == 1 and not moved.max_ulps
    golden = _moved(_comparison([1.0]), _comparison([float(_step(1.0, 3, "float32"))]))
    assert golden.max_ulps == 3  # the values a golden or reference comparison holds keep theirs


def test_a_noise_measured_as_zero_is_said_as_measured_not_as_missing():
    """Found (issue 53): a value the perturbed compilations did not move (its noise measured, 0) was said to have
    "no noise measured"."""
    from harness.model.report import NoiseJudgement
    from harness.verdict.explain import noise_size

    said = noise_size(NoiseJudgement(measured=0.0, allowed=0.0, used=1e9, within=False))
    assert "measured as 0" in said and "no noise measured" not in said
    assert noise_size(NoiseJudgement(measured=1e-7, allowed=4e-7, used=0.5, within=True)) == (
        "0.5x the 4e-07 allowed (4x the noise measured when it was recorded)")
