"""Measure how far an observed array is from an expected one, and say it in one paragraph.

Pure NumPy, no JAX: the same numbers go into the failure message and into the report.
Closeness is counted in ulps of the dtype at each expected value (harness.contract.tolerances),
with NaNs equal to NaNs and infinities equal only to themselves.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from harness.contract import allclose
from harness.contract.encoding import json_float, observed as observed_values
from harness.contract.tolerances import is_float_dtype, policy_dtype, tiny_normal, ulp
from harness.model.enums import ComparisonKind
from harness.model.report import EXACT, Comparison, Tolerance, WorstElement

_SHOW_VALUES = 8  # arrays up to this many elements are printed whole in a failure message
FLUSH_WHY = "expected values below the smallest normal: XLA on CPU flushes them to zero"
_USED_CAP = 1e9  # tolerance_used is capped so the report stays plain JSON (no Infinity)


def _is_numeric(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "iub" or is_float_dtype(arr.dtype)


def _f64(x) -> np.ndarray:
    arr = np.asarray(x)
    if _is_numeric(arr):
        return arr.astype(np.float64)
    raise TypeError(f"cannot compare values of dtype {arr.dtype} numerically")


def _numeric(x) -> np.ndarray | None:
    """x as a numeric array, or None for strings, None, and nested non-numeric data."""
    if x is None or isinstance(x, (str, dict)):
        return None
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError):
        return None
    return arr if _is_numeric(arr) else None


def _small(arr: np.ndarray):
    if arr.size > _SHOW_VALUES:
        return None
    return [json_float(float(v)) for v in arr.astype(np.float64).ravel()]


def errors(observed, expected) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise absolute and relative error, 0 where both sides are the same NaN/inf."""
    return _errors64(_f64(observed), _f64(expected))


def _errors64(obs: np.ndarray, exp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """errors() of two float64 arrays."""
    if np.isfinite(obs).all() and np.isfinite(exp).all():  # the usual case, in fewer steps: no NaN/inf to match
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            abs_err = np.asarray(np.abs(obs - exp))  # a 0-d array stays an array, as np.where returns
            return abs_err, np.where(abs_err == 0, 0.0, abs_err / np.abs(exp))
    same_special = (np.isnan(obs) & np.isnan(exp)) | (np.isinf(obs) & (obs == exp))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_err = np.where(same_special, 0.0, np.abs(obs - exp))
        abs_err = np.where(np.isnan(abs_err), np.inf, abs_err)
        rel_err = np.where(abs_err == 0, 0.0, np.where(np.isinf(abs_err), np.inf, abs_err / np.abs(exp)))
    return abs_err, rel_err


def compare_close(kind: ComparisonKind, label: str, observed, expected, tolerance: Tolerance, dtype: str,
                  scale=None, override: str | None = None, keep_values: bool = True,
                  absolute: float = 0.0) -> Comparison:
    """Elementwise closeness in ulps: |obs - exp| <= ulps * ulp(max(|exp|, scale)) in the tolerance's dtype,
    NaN equal to NaN and infinities only to themselves; with the magnitudes the report needs.

    ``scale`` (None, a number or one per element) is the operands' magnitude where a documented
    cancellation needs it; ``override`` says why the allowance may exceed the plain policy; ``absolute``, an
    allowance no element goes below (a golden value's numerical noise: harness.contract.noise).

    A contract run makes tens of thousands of these, most of them on a few elements, so each
    intermediate is computed once (a property's schedule checks call it once per element).
    """
    obs, exp = np.asarray(observed), np.asarray(expected)
    if obs.shape != exp.shape:
        return _shape_mismatch(kind, label, obs, exp, tolerance, dtype, keep_values=keep_values)
    ulp_dtype = tolerance.ulp_dtype or policy_dtype(dtype)
    exp64, obs64 = _f64(exp), _f64(obs)
    tiny = tiny_normal(ulp_dtype)
    magnitude = np.abs(exp64)
    at = magnitude if scale is None else np.maximum(magnitude, np.abs(np.asarray(scale, np.float64)))
    finite = np.isfinite(exp64)
    spacing_at = ulp(np.where(finite, at, 0.0), ulp_dtype)
    # the spacing at the expected value itself (ulp() takes |x|): the one above when there is no scale
    spacing = spacing_at if scale is None else ulp(np.where(finite, exp64, 0.0), ulp_dtype)
    allowed = np.where(finite, np.maximum(tolerance.ulps * spacing_at, absolute) if absolute else tolerance.ulps * spacing_at, 0.0)
    # XLA on CPU flushes subnormal results to zero: an expected value below the smallest normal may be
    # observed as a zero (of either sign), so there the allowance is the smallest normal itself.
    flushed = finite & (exp64 != 0) & (magnitude < tiny)
    if flushed.any():
        allowed = np.where(flushed, np.maximum(allowed, tiny), allowed)
        override = "; ".join(filter(None, [override, FLUSH_WHY]))
    abs_err, rel_err = _errors64(obs64, exp64)
    bad = ~((abs_err == 0) | (abs_err <= allowed))  # abs_err is 0 for identical NaN/inf
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        used = np.where(abs_err == 0, 0.0, np.where(allowed > 0, abs_err / allowed, np.inf))
        at_value = np.minimum(allowed / spacing, _USED_CAP)
        # relative to normal values only: below the smallest normal the policy allows the normals' spacing
        normal = finite & (magnitude >= tiny)
        relative = np.where(normal, allowed / magnitude, 0.0)
    result = _measured(
        kind, label, obs, exp, bad, abs_err, rel_err, tolerance, dtype, keep_values,
        tolerance_used=min(float(used.max()), _USED_CAP) if used.size else 0.0,
        allowed_ulps=float(at_value.max()) if at_value.size else None,
        allowed_rel=float(relative.max()) if relative.size else None, override=override,
        allclose=allclose.pair(exp64, allowed, normal & (at <= magnitude)))
    if result.passed:
        return result
    worst = np.unravel_index(int(np.argmax(np.where(bad, used, -1.0))), obs.shape) if obs.ndim else ()
    result = dataclasses.replace(result, worst=_worst(worst, exp64, obs, abs_err, ulp_dtype))
    message = (
        f"{label} [{dtype}, shape {list(obs.shape)}]: {result.mismatched} of {result.size} elements outside "
        f"{tolerance.ulps:g} ulp{f' of {ulp_dtype}' if ulp_dtype != dtype else ''}"
        f"{' at the operands scale' if scale is not None else ''} (assert_allclose {result.allclose.shown}); "
        f"max abs err {result.max_abs_err:.3g}, "
        f"max rel err {result.max_rel_err:.3g}; worst at index {tuple(int(i) for i in worst)}: "
        f"expected {float(exp64[worst])!r}, observed {float(obs64[worst])!r} "
        f"({float(abs_err[worst] / ulp(exp64[worst], ulp_dtype)):.3g} ulp)"
    )
    return dataclasses.replace(result, message=message + _values_suffix(result))


def _worst(index: tuple, exp64: np.ndarray, obs: np.ndarray, abs_err: np.ndarray, ulp_dtype: str) -> WorstElement:
    """The element at `index`, its values exactly and its distance in ulps of `ulp_dtype` at the expected value
    (None where that is not a finite number)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ulps = float(abs_err[index] / ulp(exp64[index], ulp_dtype))
    return WorstElement([int(i) for i in index], json_float(float(exp64[index])), json_float(float(_f64(obs)[index])),
                        ulps if np.isfinite(ulps) else None)


def compare_exact(kind: ComparisonKind, label: str, observed, expected, keep_values: bool = True) -> Comparison:
    """Exact equality: arrays elementwise (-0.0 == 0.0, NaN == NaN), anything else with ==."""
    obs, exp = _numeric(observed), _numeric(expected)
    if obs is None or exp is None:
        passed = _facts_equal(observed, expected)
        return Comparison(label, kind, passed, EXACT, type(observed).__name__, [], expected=expected,
                          observed=observed, message="" if passed else _fact_difference(label, observed, expected))
    dtype = str(obs.dtype)
    if obs.shape != exp.shape:
        return _shape_mismatch(kind, label, obs, exp, EXACT, dtype, observed, expected, keep_values)
    abs_err, rel_err = errors(obs, exp)
    result = _measured(kind, label, obs, exp, abs_err != 0, abs_err, rel_err, EXACT, dtype, keep_values,
                       allclose=allclose.EXACT)
    if result.passed:
        return result
    if is_float_dtype(obs.dtype) or is_float_dtype(exp.dtype):
        worst = np.unravel_index(int(np.argmax(abs_err)), obs.shape) if obs.ndim else ()
        result = dataclasses.replace(result, worst=_worst(worst, _f64(exp), obs, abs_err, policy_dtype(dtype)))
    message = (f"{label} [{dtype}, shape {list(obs.shape)}]: {result.mismatched} of {result.size} elements differ "
               f"(exact contract, assert_allclose {allclose.EXACT.shown}); max abs err {result.max_abs_err:.3g}")
    return dataclasses.replace(result, message=message + _values_suffix(result))


def compare_identical(label: str, observed, expected, keep_values: bool = True) -> Comparison:
    """Bit-for-bit identity: dtype, shape and every bit (-0.0 differs from 0.0)."""
    a, b = np.asarray(observed), np.asarray(expected)
    same = a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    result = Comparison(label, ComparisonKind.EXACT, same, EXACT, str(a.dtype), list(a.shape), size=int(a.size),
                        values=observed_values(a) if keep_values else None)
    if same:
        return result
    message = f"{label}: not bit-identical: {a.dtype}{list(a.shape)} observed, {b.dtype}{list(b.shape)} expected"
    if a.shape != b.shape or a.dtype != b.dtype:
        return dataclasses.replace(result, message=message)
    a_bytes = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.itemsize)
    b_bytes = np.ascontiguousarray(b).reshape(-1).view(np.uint8).reshape(b.size, b.itemsize)
    abs_err, rel_err = errors(a, b)
    max_abs = float(abs_err.max())
    return dataclasses.replace(result, mismatched=int((a_bytes != b_bytes).any(axis=1).sum()), max_abs_err=max_abs,
                               max_rel_err=float(rel_err.max()), message=f"{message}; max abs err {max_abs:.3g}")


def compare_bound(label: str, value, limit, tolerance: Tolerance, dtype: str, scale=None,
                  keep_values: bool = True) -> Comparison:
    """Every element of value is <= limit, allowing `ulps` ulps of the dtype at the limit (or at the
    operands' `scale`, where the bounded value is a difference of larger operands) above it."""
    value = np.asarray(value)
    limit_arr = np.broadcast_to(np.asarray(limit, dtype=np.float64), value.shape)
    excess = np.maximum(value.astype(np.float64) - limit_arr, 0.0)
    at = np.abs(limit_arr) if scale is None else np.maximum(np.abs(limit_arr), np.abs(np.asarray(scale, np.float64)))
    allowed = tolerance.ulps * ulp(at, tolerance.ulp_dtype or policy_dtype(dtype))
    bad = ~(excess <= allowed)
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.where(limit_arr != 0, allowed / np.abs(limit_arr), 0.0)
    result = Comparison(
        label, ComparisonKind.BOUND, not bad.any(), tolerance, dtype, list(value.shape),
        max_abs_err=float(excess.max()) if excess.size else 0.0,
        max_rel_err=float((excess / np.maximum(np.abs(limit_arr), 1e-300)).max()) if excess.size else 0.0,
        mismatched=int(bad.sum()), size=int(value.size), values=observed_values(value) if keep_values else None,
        allowed_ulps=float((allowed / ulp(limit_arr, tolerance.ulp_dtype or policy_dtype(dtype))).max())
        if allowed.size else None, allowed_rel=float(relative.max()) if relative.size else None,
    )
    if result.passed:
        return result
    return dataclasses.replace(result, message=(
        f"{label} [{dtype}]: {result.mismatched} of {result.size} elements exceed "
        f"the limit by up to {result.max_abs_err:.3g} (allowed {float(allowed.max()):.3g}, {tolerance.ulps:g} ulp)"))


def kept(previous: Comparison | None, comparison: Comparison) -> Comparison:
    """What a check keeps of a label compared again (a property's examples, a loop): the worst comparison, with
    the count of them and the loosest allowance any had (no values: they are one example's)."""
    if previous is None:
        return comparison
    worse = (comparison.max_abs_err or 0) > (previous.max_abs_err or 0) or not comparison.passed
    return dataclasses.replace(
        comparison if previous.passed and worse else previous, count=previous.count + 1, values=None,
        allowed_ulps=_max(previous.allowed_ulps, comparison.allowed_ulps),
        allowed_rel=_max(previous.allowed_rel, comparison.allowed_rel),
        allclose=allclose.loosest(previous.allclose, comparison.allclose),
        override=previous.override or comparison.override)


def _max(a, b):
    return b if a is None else a if b is None else max(a, b)


def _facts_equal(observed, expected) -> bool:
    """== for facts; an array against a non-array (a shape that became None, say) is simply unequal."""
    try:
        return bool(observed == expected)
    except (ValueError, TypeError):
        return False


def _measured(kind, label, obs, exp, bad, abs_err, rel_err, tolerance, dtype, keep_values=True,
              **fields) -> Comparison:
    """A Comparison with the error magnitudes (and the caller's other `fields`) filled in; the caller
    writes the failure message."""
    return Comparison(
        label=label, kind=kind, passed=not bad.any(), tolerance=tolerance, dtype=dtype, shape=list(obs.shape),
        max_abs_err=float(abs_err.max()) if abs_err.size else 0.0,
        max_rel_err=float(rel_err.max()) if rel_err.size else 0.0,
        mismatched=int(bad.sum()), size=int(obs.size), expected=_small(exp), observed=_small(obs),
        values=observed_values(obs) if keep_values else None, **fields,
    )


def _shape_mismatch(kind, label, obs, exp, tolerance, dtype, observed=None, expected=None,
                    keep_values=True) -> Comparison:
    if isinstance(observed, list) and isinstance(expected, list):  # a list fact: name the items
        message = _fact_difference(label, observed, expected)
    else:
        message = f"{label}: shape {list(obs.shape)} observed, {list(exp.shape)} expected"
    return Comparison(label, kind, False, tolerance, dtype, list(obs.shape), message=message,
                      values=observed_values(obs) if keep_values else None)


def _values_suffix(result: Comparison) -> str:
    """Small arrays are shown whole after the magnitudes."""
    if result.expected is None:
        return ""
    return f"; expected {result.expected}, observed {result.observed}"


def _fact_difference(label: str, observed, expected) -> str:
    """Name only the items that differ, so a changed state layout reads in one line."""
    if isinstance(observed, list) and isinstance(expected, list):
        diffs = [f"item {i}: {e!r} -> {o!r}" for i, (e, o) in enumerate(zip(expected, observed)) if e != o]
        if len(observed) != len(expected):
            diffs.append(f"length {len(expected)} -> {len(observed)}")
            extra = [x for x in observed if x not in expected]
            gone = [x for x in expected if x not in observed]
            diffs += [f"new {x!r}" for x in extra[:5]] + [f"gone {x!r}" for x in gone[:5]]
        return f"{label}: changed from the baseline: " + "; ".join(diffs[:12])
    return f"{label}: expected {expected!r}, observed {observed!r}"
