"""jax.nn.softmax, log_softmax and logsumexp (re-exported by flax.nnx) against float64 references of their
documented formulas (harness/builtin/reference/activations_axes.py), and their vector-Jacobian products with a
fixed cotangent (what backpropagation through them computes), in float32, bfloat16 and float16, with a row of
logits that saturates (±1e4: exactly one-hot and one half) and a constant row; every axis form (-1, 0, a tuple,
None), where masks, and logsumexp's b (signed, with return_sign) and keepdims; values golden.

log-sum-exp is the largest logit plus the log of a sum of at least 1: results of the size of the largest |logit|
that may cancel to near 0 (log_softmax of the largest logit), held at that scale as the losses family does."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import activation_checks as ac
from harness.builtin.reference import activations_axes as ref

pytestmark = pytest.mark.family("activations")

LOGITS = np.array([[1.0, -2.0, 3.0, 0.5, 0.0],
                   [0.25, 4.0, -1.0, 2.0, -3.0],
                   [0.0, 0.0, 0.0, 0.0, 0.0],
                   [1e4, -1e4, 0.0, 5e3, 1e4]])
V = np.round(np.sin(np.arange(LOGITS.size) * 1.7).reshape(LOGITS.shape) * 4.0) / 4.0  # exact in every dtype
WHERE = np.array([[1, 1, 0, 1, 1], [0, 1, 1, 1, 1], [1, 1, 1, 1, 0], [1, 0, 1, 1, 1]], bool)
LSE = "log-sum-exp is the largest logit plus a log: results of that size cancel to near 0"
VJP = "the cotangent minus its softmax-weighted sum cancels"
AXES = {"axis-1": -1, "axis0": 0, "axes01": (0, 1), "axisNone": None}


def _lse_scale(x64, axis, keepdims=True):
    return np.maximum(np.max(np.abs(np.where(np.isfinite(x64), x64, 0.0)), axis=axis, keepdims=keepdims), 1.0)


def _value_and_vjp(fn):
    """One jitted program: fn(x) and the vjp of the cotangent v."""
    def both(x, v):
        y, pull = jax.vjp(fn, x)
        return y, pull(v)[0]

    return jax.jit(both)


def _judge_pair(check, key, name, x64, v64, axis, where, value, vjp):
    scale = _lse_scale(x64, axis) if name == "log_softmax" else None
    check.reference(key, np.asarray(value), getattr(ref, name)(x64, axis, where), scale=scale,
                    why=None if scale is None else LSE)
    check.golden(key, np.asarray(value))
    check.reference(f"{key}/vjp", np.asarray(vjp), getattr(ref, f"{name}_vjp")(x64, v64, axis, where),
                    scale=getattr(ref, f"{name}_vjp_scale")(x64, v64, axis, where), why=VJP)
    check.golden(f"{key}/vjp", np.asarray(vjp))


@pytest.mark.parametrize("dtype", ac.DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(check, name, dtype):
    """softmax(x)_i = e^(x_i) / sum_j e^(x_j) and log_softmax = x_i - log sum_j e^(x_j) along the last axis (the
    default), and their vjps y (v - <y, v>) and v - softmax(x) sum(v); the saturating row exactly one-hot."""
    x, v = jnp.asarray(LOGITS, dtype), jnp.asarray(V, dtype)
    value, vjp = _value_and_vjp(getattr(ac.nn(), name))(x, v)
    check.exact(f"{name}/{dtype}/dtypes", [str(value.dtype), str(vjp.dtype)], [dtype, dtype])
    _judge_pair(check, f"{name}/{dtype}", name, ac.f64(x), ac.f64(v), -1, None, value, vjp)


@pytest.mark.parametrize("axes", sorted(AXES))
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_axes(check, name, axes):
    """axis 0, a tuple of axes and None (all axes) normalise over those axes; float32 (the saturating row left
    out where it would swamp the other rows' columns)."""
    axis = AXES[axes]
    x64 = LOGITS[:3]
    value, vjp = _value_and_vjp(lambda q: getattr(ac.nn(), name)(q, axis=axis))(jnp.asarray(x64, jnp.float32),
                                                                               jnp.asarray(V[:3], jnp.float32))
    _judge_pair(check, f"{name}/{axes}", name, x64, V[:3], axis, None, value, vjp)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_where(check, name):
    """A where mask: the left-out elements give 0 (softmax) or -inf (log_softmax), take no part in the sum, and
    get no gradient; the saturating row included."""
    where = jnp.asarray(WHERE)
    value, vjp = _value_and_vjp(lambda q: getattr(ac.nn(), name)(q, where=where))(jnp.asarray(LOGITS, jnp.float32),
                                                                                   jnp.asarray(V, jnp.float32))
    _judge_pair(check, f"{name}/where", name, LOGITS, V, -1, WHERE, value, vjp)


def _lse_cases():
    b = np.linspace(0.5, 2.0, LOGITS.size).reshape(LOGITS.shape)
    signed = np.where(np.arange(LOGITS.size).reshape(LOGITS.shape) % 3 == 1, -0.25, 1.0)
    # b = 0 at each row's largest logits (the last row keeps only its -1e4): those terms are left out, not made
    # to set the scale the others are taken at
    zeros = np.array([[1, 1, 0, 1, 1], [1, 0, 1, 1, 1], [1, 0, 1, 0, 1], [0, 1, 0, 0, 0]], np.float64)
    negative = np.where(np.arange(LOGITS.shape[0])[:, None] == 1, -1.0, 1.0) * np.ones(LOGITS.shape)  # row 1's sum < 0
    return {
        "default": ({}, {}),
        "axis-1": ({"axis": -1}, {"axis": -1}),
        "axis0/keepdims": ({"axis": 0, "keepdims": True}, {"axis": 0, "keepdims": True}),
        "axes01": ({"axis": (0, 1)}, {"axis": (0, 1)}),
        "b": ({"axis": -1, "b": jnp.asarray(b, jnp.float32)}, {"axis": -1, "b": b}),
        "b_signed/return_sign": ({"axis": -1, "b": jnp.asarray(signed, jnp.float32), "return_sign": True},
                                 {"axis": -1, "b": signed}),
        "where": ({"axis": -1, "where": jnp.asarray(WHERE)}, {"axis": -1, "where": WHERE}),
        "b_zero_at_the_max": ({"axis": -1, "b": jnp.asarray(zeros, jnp.float32)}, {"axis": -1, "b": zeros}),
        "b_negative_sum": ({"axis": -1, "b": jnp.asarray(negative, jnp.float32)}, {"axis": -1, "b": negative}),
    }


LSE_CASES = _lse_cases()


@pytest.mark.parametrize("case", sorted(LSE_CASES))
def test_logsumexp(check, case):
    """log sum_i b_i e^(x_i) over axis (None: all), keepdims, b (signed, with return_sign: log |S| and the sign
    of S; zero at the largest logits; a negative sum without return_sign: NaN, as the docstring says, a constant
    with no gradient), where; the gradient with respect to x (b e^(x - lse), 0 where left out) with a cotangent
    of ones."""
    kwargs, ref_kwargs = LSE_CASES[case]
    x = jnp.asarray(LOGITS, jnp.float32)

    def first(q):
        out = ac.nn().logsumexp(q, **kwargs)
        return out[0] if kwargs.get("return_sign") else out

    value, grad = jax.jit(lambda q: (ac.nn().logsumexp(q, **kwargs), jax.grad(lambda p: jnp.sum(first(p)))(q)))(x)
    expected, sign = ref.logsumexp(LOGITS, **ref_kwargs)
    negative = (sign < 0) if "b" in kwargs and not kwargs.get("return_sign") else np.zeros(sign.shape, bool)
    expected = np.where(negative, np.nan, expected)  # "NaN values if the sums are negative"
    scale = _lse_scale(LOGITS, ref_kwargs.get("axis"), ref_kwargs.get("keepdims", False))
    if kwargs.get("return_sign"):
        value, observed_sign = value
        check.exact(f"logsumexp/{case}/sign", np.asarray(observed_sign).tolist(), sign.tolist())
    check.reference(f"logsumexp/{case}", np.asarray(value), expected, scale=scale, why=LSE)
    check.golden(f"logsumexp/{case}", np.asarray(value))
    full, full_sign = ref.logsumexp(LOGITS, **{**ref_kwargs, "keepdims": True})
    weights = np.broadcast_to(ref_kwargs.get("b", 1.0), LOGITS.shape)
    keep = np.broadcast_to(ref_kwargs.get("where", True), LOGITS.shape)
    terms = keep & (weights != 0)  # d log|S| = b e^x / S; 0 where b is 0 (whatever e^x is) or left out
    expected_grad = np.where(terms, full_sign * weights * np.exp(np.where(terms, LOGITS, full) - full), 0.0)
    if negative.any():  # the NaN rows are a constant: no gradient reaches their logits
        expected_grad = np.where(np.broadcast_to(full_sign < 0, LOGITS.shape), 0.0, expected_grad)
    check.reference(f"logsumexp/{case}/grad", np.asarray(grad), expected_grad)
    check.golden(f"logsumexp/{case}/grad", np.asarray(grad))


@pytest.mark.parametrize("masked", [False, True], ids=["plain", "where"])
def test_softmax_custom_jvp(check, masked):
    """jax_softmax_custom_jvp: its default (off on the baseline; JAX's help says it will be switched on, which
    moves softmax's derivative onto another rule) is a golden fact, and softmax with it on, where mask or not,
    meets the same formula and vjp, the saturating row included."""
    check.golden_fact("softmax/custom_jvp/default", bool(jax.config.jax_softmax_custom_jvp))
    before = jax.config.jax_softmax_custom_jvp
    jax.config.update("jax_softmax_custom_jvp", True)
    try:
        where = jnp.asarray(WHERE) if masked else None
        value, vjp = _value_and_vjp(lambda q: ac.nn().softmax(q, where=where))(jnp.asarray(LOGITS, jnp.float32),
                                                                               jnp.asarray(V, jnp.float32))
    finally:
        jax.config.update("jax_softmax_custom_jvp", before)
    key = f"softmax/custom_jvp/{'where' if masked else 'plain'}"
    _judge_pair(check, key, "softmax", LOGITS, V, -1, WHERE if masked else None, value, vjp)
