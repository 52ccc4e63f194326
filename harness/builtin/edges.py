"""The edge inputs of a float dtype that the losses' and activations' gradient checks share: zeros of both
signs, ordinary, saturating and the dtype's largest finite magnitudes, ties, NaN and the infinities (float64
arrays, cast to the dtype by the check). What each function's formula adds (its kinks, its regimes) is in its
own table (loss_edges.py, test_edges_activations.py)."""

from __future__ import annotations

import numpy as np

FLOATS = ("float32", "bfloat16", "float16")
FLOAT32 = ("float32",)
# The dtypes the edges are taken in today: float32. The 16-bit edges wait for a recording on a host without
# native float16 arithmetic (the golden files' AMD EPYC): on one with it (avx512_fp16) a recording changes the
# suite's existing float16 values, and under an XLA cap that keeps AVX-512 XLA still computes float16 natively.
TAKEN_IN = FLOAT32
# The integer widths labels and indices are given in (a loss's labels: test_edges_losses.py; one_hot's indices:
# test_activations_axes.py): every integer dtype JAX holds without x64, signed and unsigned; int64 and uint64
# need x64.
INTEGER_WIDTHS = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


def largest(dtype: str) -> float:
    """The dtype's largest finite value (ml_dtypes knows bfloat16)."""
    import ml_dtypes

    return float(ml_dtypes.finfo(dtype).max)


def elementwise(dtype: str) -> np.ndarray:
    """Zeros of both signs, the ordinary, saturating and the dtype's largest finite magnitudes, NaN and inf."""
    big = largest(dtype)
    return np.array([-big, -1e4, -100.0, -20.0, -1.0, -0.0, 0.0, 1.0, 20.0, 100.0, 1e4, big, np.nan, np.inf, -np.inf])


def finite_elementwise(dtype: str) -> np.ndarray:
    """elementwise without NaN and the infinities (for a function whose elements mix, as a loss's labels do)."""
    return elementwise(dtype)[:12]


def logit_rows(dtype: str) -> np.ndarray:
    """Rows of 4: ordinary, all tied, saturating with a tie at the top, the dtype's extremes."""
    big = largest(dtype)
    return np.array([[1.0, -2.0, 3.0, 0.5], [0.0, 0.0, 0.0, 0.0], [30.0, -30.0, 0.0, 30.0], [big, -big, 0.0, 1.0]])


def nonfinite_rows(dtype: str) -> np.ndarray:
    """A finite row, then a row with NaN, one with +inf, one with -inf: a function that mixes a row's elements
    keeps the finite row finite."""
    return np.array([[1.0, -2.0, 3.0, 0.5], [np.nan, 0.0, 1.0, 2.0], [np.inf, 0.0, 1.0, 2.0], [-np.inf, 0.0, 1.0, 2.0]])


def finiteness(values) -> str:
    """One letter an element: f finite, n NaN, + inf, - -inf (a golden fact: exact at any tolerance)."""
    arr = np.asarray(values, np.float64).ravel()
    return "".join("n" if np.isnan(v) else "+" if v == np.inf else "-" if v == -np.inf else "f" for v in arr)


def value_and_grad(fn):
    """One jitted program: fn(x) and the vjp of a cotangent of ones (the gradient of its sum, as a step takes it)."""
    import jax
    import jax.numpy as jnp

    def both(x):
        value, pull = jax.vjp(fn, x)
        return value, pull(jnp.ones_like(value))[0]

    return jax.jit(both)


def judge(check, key: str, fn, x) -> None:
    """fn's value and gradient at x under `key`: raising is a result too (its error type golden); else each
    element's finiteness an exact fact, the value and the gradient golden at their own scale."""
    __tracebackhide__ = True
    judge_outcome(check, key, check.error_contract(f"{key}/raises", value_and_grad(fn), x))


def judge_computed(check, key: str, value_and_gradient) -> None:
    """judge for a value and gradient one program computed beside others (it raised nothing): the same keys."""
    __tracebackhide__ = True
    judge_outcome(check, key, check.error_contract(f"{key}/raises", lambda: value_and_gradient))


def judge_outcome(check, key: str, done) -> None:
    """The rest of judge, once the call's outcome (its exception, or its value and gradient) is golden."""
    __tracebackhide__ = True
    if isinstance(done, BaseException):
        return
    value, grad = done
    check.golden_fact(f"{key}/finite", {"value": finiteness(value), "grad": finiteness(grad)})
    check.golden(f"{key}/value", np.asarray(value))
    check.golden(f"{key}/grad", np.asarray(grad))
