"""Exact only where the contract is exact: a float a formula computes is judged in ulps, even in a
degenerate case, and golden_exact refuses one; counters and flags are compared exactly."""

from pathlib import Path

import numpy as np
import pytest

from harness.contract.checks import Check, ContractFailure
from harness.contract.families import Family
from harness.contract.golden import GoldenStore
from harness.model.allclose import AllClose
from harness.model.report import EXACT

GOLDEN = Path(__file__).resolve().parents[3] / "golden"
DEGENERATE = "degenerate/max_norm=-1/nonzero_grads/b_then_w"  # t / norm * max_norm with max_norm = -1


def _baseline(key: str) -> np.ndarray:
    """The recorded baseline value, as the library computed it (float32)."""
    values, entry = GoldenStore(GOLDEN).get_array(Family("clipping"), key)
    assert entry["dtype"] == "float32"
    return values.astype(np.float32)


def _check(recording=False, directory=GOLDEN) -> Check:
    return Check("clipping/test_degenerate_max_norm[max_norm=-1/nonzero_grads]", "clipping",
                 GoldenStore(directory), recording=recording)


def test_degenerate_max_norm_is_judged_in_ulps_not_bit_for_bit():
    """The recorded -max_norm * g / norm moved by one float32 ulp (a recompiled kernel): within the golden
    ulps, while the former exact comparison failed on it, and golden_exact now refuses the key."""
    moved = np.nextafter(_baseline(DEGENERATE), np.float32(0))
    check = _check()
    check.golden(DEGENERATE, moved)
    assert check.comparisons[f"golden:{DEGENERATE}"].passed
    with pytest.raises(TypeError, match="judged in ulps: use check.golden"):
        _check().golden_exact(DEGENERATE, moved)


def test_a_degenerate_formula_still_catches_a_changed_value():
    flipped = -_baseline(DEGENERATE)  # the sign of a negative max_norm no longer applied
    check = _check()
    with pytest.raises(ContractFailure, match="outside 8 ulp"):
        check.golden(DEGENERATE, flipped)


def test_nan_from_zero_over_zero_stays_equal_only_to_nan():
    key = "degenerate/max_norm=0/zero_grads/b_then_w"
    check = _check()
    check.golden(key, np.full(3, np.nan, np.float32))
    assert check.comparisons[f"golden:{key}"].passed
    with pytest.raises(ContractFailure):
        _check().golden(key, np.zeros(3, np.float32))


@pytest.mark.parametrize("value", [np.zeros(3, np.float32), np.array([-0.0, np.nan, np.inf], np.float32),
                                   np.array([0, 3], np.int32), np.array([True, False])])
def test_golden_exact_records_counters_flags_and_literal_zeros(tmp_path, value):
    check = _check(recording=True, directory=tmp_path)
    check.golden_exact("k", value)
    assert "k" in check.store.recorded[Family("clipping")]


def test_golden_exact_refuses_to_record_a_formula_value(tmp_path):
    with pytest.raises(TypeError, match=r"golden_exact\('k'\): float32 values other than zeros"):
        _check(recording=True, directory=tmp_path).golden_exact("k", np.array([0.0, 0.25], np.float32))


def test_a_zero_that_became_nonzero_is_a_failed_comparison_not_a_refusal():
    """The refusal reads the recording: a literal zero the candidate no longer emits is a change."""
    key = "guide/u1"  # MultiSteps' zero update between emissions
    check = Check("accumulation/test_guide_case", "accumulation", GoldenStore(GOLDEN))
    with pytest.raises(ContractFailure, match="exact contract"):
        check.golden_exact(key, np.array([-0.2], np.float32))


def test_an_integer_golden_is_a_counter_compared_exactly():
    check = Check("clipping/test_per_example_documented_case[C=0]", "clipping", GoldenStore(GOLDEN))
    check.golden("per_example/doc/C=0/count", np.int32(3))
    comparison = check.comparisons["golden:per_example/doc/C=0/count"]
    assert comparison.passed and comparison.tolerance == EXACT and comparison.allclose == AllClose(0.0, 0.0)
