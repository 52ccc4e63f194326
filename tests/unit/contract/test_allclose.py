"""The (rtol, atol) each comparison records: numpy.testing.assert_allclose with it passes on every value
the ulps comparison accepts, and fails on a value one representable step outside the allowance at the
elements that set the pair, in float64/float32/bfloat16/float16 and near zero."""


import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harness.contract import allclose
from harness.contract.checks import Check
from harness.contract.measure import compare_bound, compare_close, compare_exact, compare_identical
from harness.contract.tolerances import tiny_normal, ulp
from harness.model.allclose import AllClose
from harness.model.enums import ComparisonKind
from harness.model.report import Tolerance

GOLDEN, EXACT = ComparisonKind.GOLDEN, ComparisonKind.EXACT
DTYPES = {"float64": np.float64, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}
UINT = {8: np.uint64, 4: np.uint32, 2: np.uint16}


def _step(x, dtype: str, up: bool):
    """The next representable value of `dtype` above (or below) x, from its bits (NumPy has no nextafter
    for bfloat16)."""
    x = np.asarray(x, DTYPES[dtype]).copy()
    if x == 0:
        x = np.asarray(0.0 if up else -0.0, DTYPES[dtype])
    bits = x.view(UINT[x.itemsize])
    away = (x > 0) == up or (x == 0)  # moving away from zero increments the magnitude's bits
    return (bits + 1 if away else bits - 1).astype(UINT[x.itemsize]).view(DTYPES[dtype])


def _edge(e: float, allowed: float, dtype: str, up: bool):
    """The representable value farthest from e (above or below) within `allowed` of it."""
    v = np.asarray(e + allowed if up else e - allowed, DTYPES[dtype])
    while abs(float(v) - e) > allowed:
        v = _step(v, dtype, not up)
    return v


def _outside(e: float, allowed: float, dtype: str, up: bool):
    return _step(_edge(e, allowed, dtype, up), dtype, up)


def _allowances(expected, dtype, ulps, scale=None):
    """Each element's allowance as compare_close sets it (read back from a comparison at the edge)."""
    exp = np.asarray(expected, np.float64)
    at = np.abs(exp) if scale is None else np.maximum(np.abs(exp), np.abs(scale))
    allowed = ulps * ulp(at, dtype)
    flushed = (exp != 0) & (np.abs(exp) < tiny_normal(dtype))
    return np.where(flushed, np.maximum(allowed, tiny_normal(dtype)), allowed)


def _judge(observed, expected, dtype, ulps, scale=None):
    return compare_close(GOLDEN, "x", np.asarray(observed, DTYPES[dtype]), np.asarray(expected, np.float64),
                         Tolerance(ulps=ulps), dtype, scale=scale, override="test" if scale is not None else None)


def _allclose_passes(observed, expected, pair: AllClose) -> bool:
    try:
        np.testing.assert_allclose(np.asarray(observed, np.float64), np.asarray(expected, np.float64),
                                   rtol=pair.rtol, atol=pair.atol)
    except AssertionError:
        return False
    return True


# Expected values of each dtype: normals at the bottom and top of a binade, a value near the smallest
# normal, signed zeros, and (float16, float32, bfloat16) a subnormal, which XLA may flush.
CASES = {
    "float64": ([1.0, -1.9999, 3e-300, 0.0, -0.0], 8),
    "float32": ([1.0, 1.5, -3.0e-5, 1.2e-38, 0.0, 5e-42], 8),
    "bfloat16": ([1.0, -1.5, 0.3, 0.0, -0.0, 3e-39], 1),
    "float16": ([1.0, 1.5, -7e-5, 0.0, 3e-6], 2),
    "float32 reference": ([2.0, -0.75, 0.0], 64),
    "bfloat16 reference": ([1.0, 0.01, 0.0], 8),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_pair_passes_at_every_edge_and_fails_one_step_outside_the_elements_that_set_it(case):
    dtype = case.split()[0]
    values, ulps = CASES[case]
    expected = np.asarray(np.asarray(values, DTYPES[dtype]), np.float64)  # exactly values of the dtype
    allowed = _allowances(expected, dtype, ulps)
    for up in (True, False):
        edges = np.array([float(_edge(e, a, dtype, up)) for e, a in zip(expected, allowed)])
        result = _judge(edges, expected, dtype, ulps)
        assert result.passed and _allclose_passes(edges, expected, result.allclose)
        pair = result.allclose
        normal = np.abs(expected) >= tiny_normal(dtype)
        setters = [int(np.argmax(np.where(normal, allowed / np.where(normal, np.abs(expected), 1), -1)))]
        setters += [int(np.argmax(np.where(normal, -1, allowed)))] if (~normal).any() else []
        for i in setters:
            moved = edges.copy()
            moved[i] = float(_outside(expected[i], allowed[i], dtype, up))
            assert not _judge(moved, expected, dtype, ulps).passed
            assert not _allclose_passes(moved, expected, pair), f"{case}: element {i}, {pair}"
    # rtol is the allowance at the loosest normal element, relative to it; atol that of zeros and subnormals
    normal = np.abs(expected) >= tiny_normal(dtype)
    assert pair.rtol == pytest.approx((allowed[normal] / np.abs(expected[normal])).max(), rel=1e-15)
    assert pair.atol == (allowed[~normal].max() if (~normal).any() else 0.0)


def test_a_cancellation_scale_goes_into_atol_not_rtol():
    """ulps taken at the operands' scale are an absolute allowance: as rtol they would loosen every element."""
    # 1e-8 cancelled below an ulp of its operands (1.0); 1024 is held at its own value
    expected, scale = np.array([1e-8, 1024.0], np.float32).astype(np.float64), np.array([1.0, 0.0])
    allowed = _allowances(expected, "float32", 64, scale)
    edges = np.array([float(_edge(e, a, "float32", True)) for e, a in zip(expected, allowed)])
    result = _judge(edges, expected, "float32", 64, scale=scale)
    assert result.passed and result.allclose.atol == allowed[0] and result.allclose.rtol == pytest.approx(64 * 2.0**-23)
    for i in (0, 1):
        moved = edges.copy()
        moved[i] = float(_outside(expected[i], allowed[i], "float32", True))
        assert not _judge(moved, expected, "float32", 64, scale=scale).passed
        assert not _allclose_passes(moved, expected, result.allclose)


def test_at_the_rtol_element_atol_adds_to_the_allowance():
    """What the pair does not reproduce, as documented: beside an atol larger than an ulp of the rtol
    element (here 64 ulp of the operands' scale, 1.0, at 1e-3), one step outside that element passes."""
    expected, scale = np.array([1e-3, 1.0], np.float32).astype(np.float64), np.array([1.0, 0.0])
    allowed = _allowances(expected, "float32", 64, scale)
    edges = np.array([float(_edge(e, a, "float32", True)) for e, a in zip(expected, allowed)])
    pair = _judge(edges, expected, "float32", 64, scale=scale).allclose
    moved = edges.copy()
    moved[1] = float(_outside(expected[1], allowed[1], "float32", True))
    assert pair.atol > moved[1] - edges[1]
    assert not _judge(moved, expected, "float32", 64, scale=scale).passed and _allclose_passes(moved, expected, pair)


def test_nan_and_infinities_are_reproduced_as_equal_only_to_themselves():
    expected = np.array([np.nan, np.inf, -np.inf, 1.0])
    result = _judge(expected, expected, "float32", 8)
    assert result.passed and _allclose_passes(expected, expected, result.allclose)
    for bad in ([0.0, np.inf, -np.inf, 1.0], [np.nan, -np.inf, -np.inf, 1.0], [np.nan, np.inf, -np.inf, np.nan]):
        assert not _judge(bad, expected, "float32", 8).passed and not _allclose_passes(bad, expected, result.allclose)


@pytest.mark.parametrize("dtype, ulps", [("float32", 8), ("bfloat16", 1), ("float16", 2), ("float32", 64)])
@settings(deadline=None)  # no wall-time assertion: a first example took 683 ms on a loaded 2-core machine, then 2 ms
@given(data=st.data())
def test_property_whatever_the_comparison_accepts_assert_allclose_accepts(dtype, ulps, data):
    """Soundness on any values of the dtype (normals, subnormals, zeros of either sign), each observed at
    a drawn edge of its allowance or inside it."""
    raw = data.draw(hnp.arrays(np.float32, st.integers(1, 6), elements=st.floats(-1e4, 1e4, width=32)))
    expected = np.asarray(raw.astype(DTYPES[dtype]), np.float64)
    allowed = _allowances(expected, dtype, ulps)
    ups = data.draw(hnp.arrays(bool, expected.shape))
    edge = data.draw(hnp.arrays(bool, expected.shape))
    observed = np.array([float(_edge(e, a, dtype, u)) if at_edge else e
                         for e, a, u, at_edge in zip(expected, allowed, ups, edge)])
    result = _judge(observed, expected, dtype, ulps)
    assert result.passed and _allclose_passes(observed, expected, result.allclose)


def test_rtol_is_rounded_up_so_the_product_is_never_below_the_allowance():
    expected = np.array([1.1, 1.3, 1.7, 1.9, 3.3], np.float32).astype(np.float64)
    allowed = _allowances(expected, "float32", 8)
    pair = allclose.pair(expected, allowed, np.ones(expected.shape, bool))
    assert np.all(pair.rtol * np.abs(expected) >= allowed)


def test_exact_numeric_comparisons_record_zero_zero_and_it_reproduces_them():
    result = compare_exact(EXACT, "z", np.array([-0.0, np.nan, 2.0], np.float32), np.array([0.0, np.nan, 2.0]))
    assert result.passed and result.allclose == AllClose(0.0, 0.0)
    assert _allclose_passes([-0.0, np.nan, 2.0], [0.0, np.nan, 2.0], result.allclose)
    one_ulp = float(np.nextafter(np.float32(2), np.float32(3)))
    assert not compare_exact(EXACT, "z", np.float32(one_ulp), np.float32(2)).passed
    assert not _allclose_passes([one_ulp], [2.0], result.allclose)
    failed = compare_exact(EXACT, "z", np.float32(one_ulp), np.float32(2))
    assert "assert_allclose rtol=0, atol=0" in failed.message


def test_no_pair_where_assert_allclose_cannot_reproduce_the_judgement():
    """A bound is one-sided, bit-identity sees -0.0 and NaN payloads, a fact is not a number."""
    assert compare_bound("b", np.float32(1), 2.0, Tolerance(ulps=8), "float32").allclose is None
    assert compare_identical("i", np.float32(-0.0), np.float32(0.0)).allclose is None
    assert compare_exact(EXACT, "f", ["float32"], ["float32"]).allclose is None


def test_a_failure_message_shows_the_pair_rounded_up():
    result = _judge([1.5], [1.0], "float32", 8)
    assert not result.passed and "(assert_allclose rtol=9.54e-07, atol=0)" in result.message
    assert AllClose(rtol=9.536743164062500e-07, atol=1.401298464324817e-45).shown == "rtol=9.54e-07, atol=1.41e-45"
    assert AllClose(rtol=1e-3, atol=0.0).shown == "rtol=0.001, atol=0"  # exact digits are not bumped


def test_repeated_comparisons_keep_the_loosest_pair():
    check = Check("demo/test_x", "demo", store=None)
    check.reference("x", np.float32([1.0]), [1.0])
    check.reference("x", np.float32([1.0, 0.0]), [1.0, 0.0])
    check.reference("x", np.float32([1.5]), [1.5])
    kept = check.comparisons["reference:x"]
    assert kept.count == 3 and kept.allclose.rtol == pytest.approx(64 * 2.0**-23) and kept.allclose.atol == 64 * 2.0**-149
