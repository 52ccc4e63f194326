"""The floating dtypes the contracts compare, as plain numbers: each one's significand bits and smallest normal
exponent, the spacing of its values at a magnitude (what an ulp is), and a float as the reports spell it. Pure
Python: the host side counts ulps without NumPy (harness.verdict.host_drift), and the contract side's tolerance
policy (harness.contract.tolerances) reads the same table."""

from __future__ import annotations

import math

SIGNIFICAND_BITS = {"float64": 52, "float32": 23, "bfloat16": 7, "float16": 10}
MIN_EXPONENT = {"float64": -1022, "float32": -126, "bfloat16": -126, "float16": -14}  # of the smallest normal


def spacing(magnitude: float, dtype: str) -> float:
    """The spacing of `dtype`'s values at |magnitude|: 2**(exponent - significand bits), the smallest normal's
    below it (subnormals, and zero)."""
    exponent = math.frexp(abs(magnitude))[1] - 1 if magnitude else MIN_EXPONENT[dtype]
    return math.ldexp(1.0, max(exponent, MIN_EXPONENT[dtype]) - SIGNIFICAND_BITS[dtype])


def smallest_normal(dtype: str) -> float:
    return math.ldexp(1.0, MIN_EXPONENT[dtype])


def json_float(x: float) -> float | str:
    """A float as the report and golden files hold it: a number, or "nan", "inf", "-inf"."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def number(value) -> float:
    """A kept value as a number: "nan", "inf" and "-inf" are spelled as strings in JSON."""
    return float(value) if isinstance(value, str) else value
