"""Closeness and exactness: the same rule as numpy.testing, with the magnitudes the report needs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harness.contract.measure import compare_close, compare_exact
from harness.model.enums import ComparisonKind

GOLDEN, EXACT = ComparisonKind.GOLDEN, ComparisonKind.EXACT

finite = st.floats(-1e6, 1e6, width=32)


@given(hnp.arrays(np.float32, 4, elements=finite), hnp.arrays(np.float32, 4, elements=finite),
       st.sampled_from([1e-6, 1e-3, 0.0]), st.sampled_from([1e-6, 1e-2, 0.0]))
def test_close_agrees_with_numpy_testing(obs, exp, rtol, atol):
    result = compare_close(GOLDEN, "x", obs, exp, rtol, atol)
    try:
        np.testing.assert_allclose(obs.astype(np.float64), exp.astype(np.float64), rtol=rtol, atol=atol)
        numpy_passes = True
    except AssertionError:
        numpy_passes = False
    assert result.passed == numpy_passes


def test_failure_message_gives_counts_and_magnitudes():
    result = compare_close(GOLDEN, "golden:u", np.array([1.0, 2.5, 3.0], np.float32), np.array([1.0, 2.0, 3.0]), 1e-6, 1e-7)
    assert not result.passed and result.mismatched == 1 and result.size == 3
    assert result.max_abs_err == pytest.approx(0.5) and result.max_rel_err == pytest.approx(0.25)
    assert "1 of 3 elements" in result.message and "worst at index (1,)" in result.message
    assert "expected 2.0, observed 2.5" in result.message


def test_nan_and_inf_equal_only_themselves():
    assert compare_close(GOLDEN, "n", [np.nan, np.inf], [np.nan, np.inf], 0, 0).passed
    assert not compare_close(GOLDEN, "n", [np.inf], [-np.inf], 1, 1).passed
    assert not compare_close(GOLDEN, "n", [np.nan], [0.0], 1, 1).passed


def test_shape_mismatch_fails_with_both_shapes():
    result = compare_close(GOLDEN, "s", np.zeros((2, 3)), np.zeros((3, 2)), 1, 1)
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
