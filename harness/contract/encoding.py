"""The exact JSON form of an array, shared by golden files and the values a report keeps.

Floats are written as JSON numbers holding the exact value of the float32/bfloat16/float16/float64
element (every such value is exactly a float64, and Python's repr round-trips float64), so the
bits survive a write and a read, the sign of zero included. NaN and infinities, which JSON lacks,
are the strings "nan", "inf" and "-inf".
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from harness.contract.tolerances import is_float_dtype
from harness.model.float_formats import json_float
from harness.model.report import ObservedValues, ValuesSummary

# A report keeps every observed value of arrays up to this size (the bits of each can be compared
# between entries); larger arrays keep a digest of their exact values and a summary.
MAX_EXACT_VALUES = 256


def _from_json_float(x: float | int | str) -> float:
    if isinstance(x, str):
        if x not in ("nan", "inf", "-inf"):
            raise ValueError(f"not a float: {x!r}")
        return float(x)
    return float(x)


def encode_array(value: Any) -> dict:
    """An array-like as {dtype, shape, values}: values exact, flat in C order."""
    arr = np.asarray(value)
    dtype = str(arr.dtype)
    if is_float_dtype(arr.dtype):
        flat = [json_float(float(v)) for v in arr.astype(np.float64).ravel()]
    elif arr.dtype.kind in "iub":
        flat = [v.item() for v in arr.ravel()]
    else:
        raise TypeError(f"golden values must be numeric arrays, got dtype {dtype}")
    return {"dtype": dtype, "shape": list(arr.shape), "values": flat}


def decode_array(entry: dict) -> np.ndarray:
    """The inverse of encode_array, in float64 (or int64/bool) so no bits are lost."""
    shape = tuple(entry["shape"])
    values = entry["values"]
    kind = "f" if is_float_dtype(entry["dtype"]) else np.dtype(entry["dtype"]).kind
    if kind == "f":
        data = np.array([_from_json_float(v) for v in values], dtype=np.float64)
    elif kind == "b":
        data = np.array(values, dtype=bool)
    else:
        data = np.array(values, dtype=np.int64)
    if data.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"{data.size} values do not fill shape {list(shape)}")
    return data.reshape(shape)


def observed(value, exact: bool = False) -> ObservedValues | None:
    """What a report keeps of an observed numeric array: exact values, or a digest and a summary (of a large one,
    unless `exact`: a value the verdict judges element by element, host drift's)."""
    arr = np.asarray(value)
    if not (is_float_dtype(arr.dtype) or arr.dtype.kind in "iub"):
        return None
    if arr.size > MAX_EXACT_VALUES and not exact:  # the digest of the bits themselves: no per-element Python work
        digest = hashlib.sha256(f"{arr.dtype}{arr.shape}".encode() + np.ascontiguousarray(arr).tobytes())
        return ObservedValues(str(arr.dtype), list(arr.shape), digest.hexdigest()[:32], summary=_summary(arr))
    encoded = encode_array(arr)
    digest = hashlib.sha256(json.dumps(encoded).encode()).hexdigest()[:32]
    return ObservedValues(encoded["dtype"], encoded["shape"], digest, values=encoded["values"])


def _summary(arr: np.ndarray) -> ValuesSummary:
    x = arr.astype(np.float64).ravel()
    finite = x[np.isfinite(x)]
    return ValuesSummary(
        min=float(finite.min()) if finite.size else None, max=float(finite.max()) if finite.size else None,
        nan=int(np.isnan(x).sum()), posinf=int((x == np.inf).sum()), neginf=int((x == -np.inf).sum()),
        negative_zeros=int(((x == 0) & np.signbit(x)).sum()),
    )


def jsonable(value):
    """A fact as JSON holds it: tuples as lists, keys as strings (so a recorded fact compares equal)."""
    if isinstance(value, (str, bool, int, float, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value
