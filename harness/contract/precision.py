"""The precision a golden value is judged in: the dtype it was computed in, which a Python float has lost.

`float(loss)` of a float32 loss is a float64 that holds exactly a float32 value. Held to 8 ulps of
float64, a move of one float32 ulp would read as 2**29 ulps: a false alarm on every recompiled kernel.
So a float64 value that does not come from an array carrying its dtype (a Python float, a NumPy float64
made from one) is judged in the narrowest of bfloat16, float16 and float32 that holds every element
exactly, the golden file records that precision and why, and `check.golden(..., dtype="float32")`
states it outright. Elements with fewer than INFORMATIVE_BITS significant bits (0, 1, 0.5, 0.75, ...)
fit every format and say nothing of where they came from; when no element says more, float32 (what
JAX computes in unless x64 is on) is taken. A value computed in float64 on purpose that happens to fit
float32 exactly must say dtype="float64".
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

NARROWEST_FIRST = ("bfloat16", "float16", "float32")
INFORMATIVE_BITS = 3  # significant bits an element needs before its fit to a format says anything
DEFAULT = "float32"
INFERRED_WHY = ("a float64 that holds exactly {dtype} values: computed in {dtype} and converted (float(x), "
                "np.float64), so judged in ulps of {dtype}; state check.golden(..., dtype=...) to override")
STATED_WHY = "the contract states the value was computed in {dtype} (check.golden(..., dtype=...))"


@dataclasses.dataclass(frozen=True)
class Precision:
    """The dtype whose ulps judge a golden value, and why when it is not the value's own."""

    dtype: str
    why: str | None = None


def numpy_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def holds(values: np.ndarray, dtype: str) -> bool:
    """Whether every element of a float64 array is exactly a value of `dtype` (NaN and inf included)."""
    x = np.asarray(values, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        back = x.astype(numpy_dtype(dtype)).astype(np.float64)
    return bool(np.all((back == x) | (np.isnan(back) & np.isnan(x))))


def significant_bits(values: np.ndarray) -> np.ndarray:
    """Bits of significand each finite nonzero float64 element needs (0 for zeros, NaN and inf)."""
    x = np.asarray(values, np.float64).ravel()
    finite = np.isfinite(x) & (x != 0)
    fraction, _ = np.frexp(np.where(finite, np.abs(x), 0.5))  # 0.5 <= fraction < 1
    significand = np.ldexp(fraction, 53).astype(np.uint64)  # the 53-bit integer significand
    lowest_set = significand & (~significand + np.uint64(1))
    trailing_zeros = np.log2(lowest_set.astype(np.float64)).astype(np.int64)
    return np.where(finite, 53 - trailing_zeros, 0)


def _carries_dtype(value) -> bool:
    """An array of JAX (or another framework) keeps the dtype it was computed in: its float64 is float64."""
    return hasattr(value, "dtype") and not isinstance(value, (np.ndarray, np.generic))


def of(value, arr: np.ndarray, stated: str | None = None) -> Precision:
    """The precision `value` (as the array `arr`) is judged in: stated, inferred, or its own dtype."""
    own = str(arr.dtype)
    if stated is not None:
        if stated not in NARROWEST_FIRST + ("float64",):
            raise TypeError(f"dtype={stated!r}: give one of {', '.join(NARROWEST_FIRST + ('float64',))}")
        if not holds(arr, stated):
            raise TypeError(f"dtype={stated!r}: the value is not exactly a {stated} value; state the dtype it "
                            f"was computed in")
        return Precision(stated, None if stated == own else STATED_WHY.format(dtype=stated))
    if own != "float64" or _carries_dtype(value) or not holds(arr, DEFAULT):
        return Precision(own)
    inferred = infer(arr)
    return Precision(inferred, INFERRED_WHY.format(dtype=inferred))


def infer(arr: np.ndarray) -> str:
    """The narrowest format holding every element exactly, judged by the informative elements only."""
    informative = np.asarray(arr, np.float64).ravel()[significant_bits(arr) >= INFORMATIVE_BITS]
    if informative.size == 0:
        return DEFAULT
    return next(d for d in NARROWEST_FIRST if holds(arr, d))  # float32, the last, holds: checked by of()
