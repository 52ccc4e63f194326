"""Measure how far an observed array is from an expected one, and say it in one paragraph.

Pure NumPy, no JAX: the same numbers go into the failure message and into the report.
The closeness rule is numpy.testing.assert_allclose's: |obs - exp| <= atol + rtol * |exp|,
with NaNs equal to NaNs and infinities equal only to themselves.
"""

from __future__ import annotations

import dataclasses

import numpy as np

_SHOW_VALUES = 8  # arrays up to this many elements are printed whole in a failure message
_USED_CAP = 1e9  # tolerance_used is capped so the report stays plain JSON (no Infinity)


@dataclasses.dataclass
class Comparison:
    """The outcome of one comparison of observed against expected."""

    label: str
    passed: bool
    tolerance: dict | str  # {"rtol", "atol"} or "exact"
    dtype: str
    shape: list[int]
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatched: int = 0
    size: int = 0
    tolerance_used: float | None = None  # max over elements of error / allowed error (<= 1 passes)
    expected: object = None
    observed: object = None
    message: str = ""

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _f64(x) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind in "fiub" or str(arr.dtype) == "bfloat16":
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
    return arr if arr.dtype.kind in "fiub" or str(arr.dtype) == "bfloat16" else None


def _small(arr: np.ndarray):
    if arr.size > _SHOW_VALUES:
        return None
    return [None if np.isnan(v) else float(v) for v in arr.astype(np.float64).ravel()]


def errors(observed, expected) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise absolute and relative error, 0 where both sides are the same NaN/inf."""
    obs, exp = _f64(observed), _f64(expected)
    same_special = (np.isnan(obs) & np.isnan(exp)) | (np.isinf(obs) & (obs == exp))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_err = np.where(same_special, 0.0, np.abs(obs - exp))
        abs_err = np.where(np.isnan(abs_err), np.inf, abs_err)
        rel_err = np.where(abs_err == 0, 0.0, np.where(np.isinf(abs_err), np.inf, abs_err / np.abs(exp)))
    return abs_err, rel_err


def compare_close(label: str, observed, expected, rtol: float, atol, dtype: str | None = None) -> Comparison:
    """Elementwise closeness under (rtol, atol), with the error magnitudes the report needs.

    ``atol`` may be one number or one per element (broadcast to the observed shape).
    """
    obs, exp = np.asarray(observed), np.asarray(expected)
    atol_array = np.asarray(atol, dtype=np.float64)
    atol = float(atol_array.max()) if atol_array.size else 0.0  # what the report and message show
    dtype = dtype or str(obs.dtype)
    shape = list(obs.shape)
    if obs.shape != exp.shape:
        return _shape_mismatch(label, obs, exp, {"rtol": rtol, "atol": atol}, dtype)
    abs_err, rel_err = errors(obs, exp)
    with np.errstate(invalid="ignore"):
        bound = np.where(np.isfinite(_f64(exp)), atol_array + rtol * np.abs(_f64(exp)), 0.0)
    bad = ~((abs_err == 0) | (abs_err <= bound))  # abs_err is 0 for identical NaN/inf, whose bound is NaN
    with np.errstate(invalid="ignore", divide="ignore"):
        used = np.where(abs_err == 0, 0.0, np.where(bound > 0, abs_err / bound, np.inf))
    result = _measured(label, obs, exp, bad, abs_err, rel_err, {"rtol": rtol, "atol": atol}, dtype)
    result.tolerance_used = min(float(used.max()), _USED_CAP) if used.size else 0.0
    if not result.passed:
        worst = np.unravel_index(int(np.argmax(np.where(bad, abs_err, -1.0))), obs.shape) if obs.ndim else ()
        result.message = (
            f"{label} [{dtype}, shape {shape}]: {result.mismatched} of {result.size} elements outside "
            f"rtol={rtol:.3g}, atol={atol:.3g}; max abs err {result.max_abs_err:.3g}, "
            f"max rel err {result.max_rel_err:.3g}; worst at index {tuple(int(i) for i in worst)}: "
            f"expected {float(_f64(exp)[worst])!r}, observed {float(_f64(obs)[worst])!r}"
        ) + _values_suffix(result)
    return result


def compare_exact(label: str, observed, expected) -> Comparison:
    """Exact equality: arrays elementwise (-0.0 == 0.0, NaN == NaN), anything else with ==."""
    obs, exp = _numeric(observed), _numeric(expected)
    if obs is None or exp is None:
        passed = observed == expected
        return Comparison(
            label, passed, "exact", type(observed).__name__, [],
            expected=expected, observed=observed,
            message="" if passed else _fact_difference(label, observed, expected),
        )
    dtype = str(obs.dtype)
    if obs.shape != exp.shape:
        return _shape_mismatch(label, obs, exp, "exact", dtype, observed, expected)
    abs_err, rel_err = errors(obs, exp)
    result = _measured(label, obs, exp, abs_err != 0, abs_err, rel_err, "exact", dtype)
    if not result.passed:
        result.message = (
            f"{label} [{dtype}, shape {list(obs.shape)}]: {result.mismatched} of {result.size} elements differ "
            f"(exact contract); max abs err {result.max_abs_err:.3g}"
        ) + _values_suffix(result)
    return result


def _measured(label, obs, exp, bad, abs_err, rel_err, tolerance, dtype) -> Comparison:
    """A Comparison with the error magnitudes filled in; the caller writes the failure message."""
    return Comparison(
        label=label,
        passed=not bad.any(),
        tolerance=tolerance,
        dtype=dtype,
        shape=list(obs.shape),
        max_abs_err=float(abs_err.max()) if abs_err.size else 0.0,
        max_rel_err=float(rel_err.max()) if rel_err.size else 0.0,
        mismatched=int(bad.sum()),
        size=int(obs.size),
        expected=_small(exp),
        observed=_small(obs),
    )


def _shape_mismatch(label, obs, exp, tolerance, dtype, observed=None, expected=None) -> Comparison:
    if isinstance(observed, list) and isinstance(expected, list):  # a list fact: name the items
        message = _fact_difference(label, observed, expected)
    else:
        message = f"{label}: shape {list(obs.shape)} observed, {list(exp.shape)} expected"
    return Comparison(label, False, tolerance, dtype, list(obs.shape), message=message)


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
