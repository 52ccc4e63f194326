"""The precision a golden value is judged in: the dtype it was computed in, which a Python float has lost.

`float(loss)` of a float32 loss is a float64 that holds exactly a float32 value. Held to 8 ulps of
float64, a move of one float32 ulp would read as 2**29 ulps: a false alarm on every recompiled kernel.
So a float64 value that does not come from an array carrying its dtype (a Python float, a NumPy float64
made from one) and whose finite nonzero elements are all exactly float32 values is judged in float32
ulps, and the golden file records that precision and why. Nothing narrower is ever guessed: "nice"
values (1.25, 0.625, 100.0) fit bfloat16 too, and judging a float32 result in bfloat16 ulps would let a
0.4% change pass. A bfloat16 or float16 result converted to a Python float says so with
`check.golden(..., dtype="bfloat16")`; a float64 result that happens to fit float32 says dtype="float64".
A value with no finite nonzero element (zeros, NaN, inf) keeps its own dtype: there is nothing to judge
in ulps.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

from harness.model.enums import ComparisonKind
from harness.model.report import EXACT, Comparison

STATED = ("float64", "float32", "bfloat16", "float16")  # what dtype= may say
INFERRED = "float32"  # the one precision guessed from a float64's bits
INFERRED_WHY = ("a float64 whose values are all exactly float32 values: computed in float32 and converted "
                "(float(x), np.float64), so judged in ulps of float32; check.golden(..., dtype=...) overrides")
STATED_WHY = "the contract states the value was computed in {dtype} (check.golden(..., dtype=...))"


@dataclasses.dataclass(frozen=True)
class Precision:
    """The dtype whose ulps judge a golden value, and why when it is not the value's own."""

    dtype: str
    why: str | None = None


def numpy_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def check_stated(dtype: str) -> None:
    if dtype not in STATED:
        raise TypeError(f"dtype={dtype!r}: give one of {', '.join(STATED)}, the dtype the value was computed in")


def holds(values: np.ndarray, dtype: str) -> bool:
    """Whether every element of a float64 array is exactly a value of `dtype` (NaN and inf included)."""
    x = np.asarray(values, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        back = x.astype(numpy_dtype(dtype)).astype(np.float64)
    return bool(np.all((back == x) | (np.isnan(back) & np.isnan(x))))


def _carries_dtype(value) -> bool:
    """An array of JAX (or another framework) keeps the dtype it was computed in: its float64 is float64."""
    return hasattr(value, "dtype") and not isinstance(value, (np.ndarray, np.generic))


def of(value, arr: np.ndarray, stated: str | None = None) -> Precision:
    """The precision `value` (as the array `arr`) is recorded in: stated, inferred, or its own dtype."""
    own = str(arr.dtype)
    if stated is not None:
        check_stated(stated)
        if not holds(arr, stated):
            raise TypeError(f"dtype={stated!r}: the value is not exactly a {stated} value; state the dtype it "
                            f"was computed in")
        return Precision(stated, None if stated == own else STATED_WHY.format(dtype=stated))
    return Precision(INFERRED, INFERRED_WHY) if inferred_float32(value, arr) else Precision(own)


def inferred_float32(value, arr: np.ndarray) -> bool:
    """A float64 that lost its dtype and whose finite nonzero elements are all exactly float32 values."""
    if str(arr.dtype) != "float64" or _carries_dtype(value):
        return False
    x = np.asarray(arr, np.float64)
    return bool(np.any(np.isfinite(x) & (x != 0))) and holds(x, INFERRED)


def noted(value, arr: np.ndarray, stated: str | None, exact: bool) -> dict:
    """What a golden entry records beside its dtype: the precision it is judged in and why, when that
    is not its own dtype (nothing for exact comparisons, which have no ulps)."""
    judged = Precision(str(arr.dtype)) if exact else of(value, arr, stated)
    return {"precision": judged.dtype, "why": judged.why} if judged.why else {}


def refuse_exact_formula(key: str, values: np.ndarray, dtype: str) -> None:
    """An exact golden comparison only of what a contract states exactly: a float golden value with a finite
    nonzero element is a formula's result, which a recompiled kernel may move by an ulp."""
    x = np.asarray(values, np.float64) if dtype in STATED or np.dtype(numpy_dtype(dtype)).kind == "f" else None
    if x is not None and np.any(np.isfinite(x) & (x != 0)):
        raise TypeError(f"golden_exact({key!r}): {dtype} values other than zeros, NaN and inf are computed by a "
                        f"formula and are judged in ulps: use check.golden({key!r}, value); golden_exact is for "
                        f"counters, flags and the literal zeros a contract states")


def _changed(label: str, arr: np.ndarray, recorded: str, now: str, message: str) -> Comparison:
    """A failed golden comparison of two dtype names (the verdict marks it a dtype/state change)."""
    return Comparison(label, ComparisonKind.GOLDEN, False, EXACT, now, list(arr.shape), expected=recorded,
                      observed=now, message=message)


def dtype_changed(label: str, arr: np.ndarray, recorded: str) -> Comparison:
    observed = str(arr.dtype)
    return _changed(label, arr, recorded, observed, f"{label}: dtype {observed} observed, {recorded} recorded at baseline")


def no_longer_fits(label: str, arr: np.ndarray, recorded: str) -> Comparison | None:
    """A dtype change when the value no longer fits the precision it was recorded in (the computation now
    runs wider than at the baseline); None when it fits."""
    if holds(arr, recorded):
        return None
    now = INFERRED if holds(arr, INFERRED) else str(arr.dtype)
    return _changed(label, arr, recorded, now, f"{label}: computed in {now} now (its values are not all exactly "
                                               f"{recorded}), in {recorded} at baseline")
