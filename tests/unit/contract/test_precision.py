"""A golden value is judged in the precision it was computed in: `float(loss)` of a float32 loss is a
float64 holding a float32 value, and a one-float32-ulp move of it is bits changed, not 2**29 float64 ulps."""


import ml_dtypes
import numpy as np
import pytest

from harness.contract import precision

LOSS32 = np.float32(0.6931472)  # a float32 loss
LOSSES32 = np.array([0.6931472, 0.5123457, 0.40213, 0.3300001], np.float32)


def test_a_python_float_of_float32_values_is_judged_as_float32():
    found = precision.of(float(LOSS32), np.asarray(float(LOSS32)))
    assert found.dtype == "float32" and "float(x)" in found.why
    values = [float(v) for v in LOSSES32]
    assert precision.of(values, np.asarray(values)).dtype == "float32"


def test_a_float64_value_keeps_float64():
    third = 1.0 / 3.0  # needs 53 bits
    assert precision.of(third, np.asarray(third)) == precision.Precision("float64")


def test_nothing_narrower_than_float32_is_guessed():
    """1.25, 0.625 and 100.0 fit bfloat16 too: a float32 result judged in bfloat16 ulps would let a 0.4%
    change pass, so a 16-bit precision is only ever stated."""
    nice = np.array([1.25, 0.625, 100.0, 7.0])
    assert precision.of(nice, nice).dtype == "float32"
    bf16 = np.array([0.69140625, 0.51171875], ml_dtypes.bfloat16).astype(np.float64)
    assert precision.of(bf16, bf16).dtype == "float32"
    assert precision.of(bf16, bf16, "bfloat16").dtype == "bfloat16"


def test_a_value_with_nothing_to_judge_in_ulps_keeps_its_dtype():
    """Zeros, NaN and inf hold in every format: there is no evidence, and no ulp to judge them in."""
    for values in ([0.0, -0.0], [np.nan, np.nan], [np.inf, 0.0]):
        arr = np.asarray(values)
        assert precision.of(values, arr) == precision.Precision("float64")


def test_an_array_that_carries_its_dtype_is_not_second_guessed():
    class Float64Array:  # a JAX array under x64: its dtype is the computation's
        dtype = np.dtype("float64")

        def __array__(self, dtype=None, copy=None):
            return np.asarray([0.5, 0.6931471824645996])

    found = precision.of(Float64Array(), np.asarray(Float64Array()))
    assert found == precision.Precision("float64")


def test_a_stated_dtype_must_hold_the_value():
    assert precision.of(float(LOSS32), np.asarray(float(LOSS32)), "float32").why.startswith("the contract states")
    with pytest.raises(TypeError, match="not exactly a float32 value"):
        precision.of(1.0 / 3.0, np.asarray(1.0 / 3.0), "float32")
    with pytest.raises(TypeError, match="give one of"):
        precision.of(0.5, np.asarray(0.5), "float8")
