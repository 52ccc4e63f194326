"""jax.nn.log1mexp and logmeanexp (flax.nnx does not re-export them) against independent references, and what a
training step takes of them: log1mexp, log(1 - e^-x) for x > 0, and its derivative 1 / (e^x - 1) against
80-digit decimal arithmetic (harness/builtin/reference/log1mexp.py) on a grid through both of its cancellation
regions (1 - e^-x near 0, log(1 - u) for small u) and the library's switch between them at log 2, in float32,
bfloat16 and float16; at 0, below it and at non-finite inputs, what it returns is stated or golden. logmeanexp,
logsumexp(x) - log n over the axes (None by default, one, a tuple), a where mask (a row with every element left
out included), keepdims, and its vjp (the cotangent times the softmax over the included elements); values golden.
squareplus's b at its edges (0: relu; an array)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import activation_checks as ac
from harness.builtin.reference import activations as ref_elementwise
from harness.builtin.reference import activations_axes as ref
from harness.builtin.reference import log1mexp as ref_log1mexp

pytestmark = pytest.mark.family("activations")

# x > 0: the smallest float16 subnormal, small x where 1 - e^-x cancels, the switch at log 2 and either side of it,
# large x where log(1 - u) would lose u, e^x past float16's (x > 11.09) and float32's (x > 88.72) largest value.
POSITIVE = np.array([2.0 ** -24, 1e-6, 2.0 ** -10, 0.015625, 0.25, 0.5, 0.6875, np.log(2.0), 0.703125, 1.0, 2.0,
                     5.0, 10.0, 11.0, 11.5, 16.0, 20.0, 50.0, 88.0, 89.0, 100.0, 1e4])
# 0 and -0.0 (log 0 = -inf), below the domain, and the non-finite inputs.
EDGES = np.array([0.0, -0.0, -0.5, -1.0, -1e4, np.inf, -np.inf, np.nan])


def _value_and_grad(fn):
    def both(x):
        y, pull = jax.vjp(fn, x)
        return y, pull(jnp.ones_like(y))[0]

    return jax.jit(both)


def _exp_overflows(x64, dtype):
    """Where e^x exceeds the dtype's largest finite value: measured, the derivative 1 / expm1(x) is then 0, though
    e^-x is still a (subnormal) value of the dtype down to 104 (float32) or 17 (float16)."""
    with np.errstate(over="ignore"):
        return np.exp(x64) > float(jnp.finfo(dtype).max)


@pytest.mark.parametrize("dtype", ac.DTYPES)
def test_log1mexp(check, dtype):
    """log(1 - e^-x) and its derivative 1 / (e^x - 1) in the input's dtype at the rounded input, each held to its
    own value's ulps (the library's two branches avoid both cancellations); where the derivative exceeds the
    dtype's range (float16 near 0) it is inf; where e^x overflows, golden."""
    x = jnp.asarray(POSITIVE, dtype)
    x64 = ac.f64(x)
    value, grad = _value_and_grad(lambda q: ac.nn().log1mexp(q))(x)
    check.exact(f"log1mexp/{dtype}/dtypes", [str(value.dtype), str(grad.dtype)], [dtype, dtype])
    ac.judge(check, f"log1mexp/{dtype}", value, ref_log1mexp.log1mexp(x64))
    grad, expected = np.asarray(grad), ref_log1mexp.log1mexp_grad(x64)
    beyond = expected > float(jnp.finfo(dtype).max)
    over = _exp_overflows(x64, dtype)
    keep = ~beyond & ~over
    ac.judge(check, f"log1mexp/{dtype}/grad", grad[keep], expected[keep])
    if beyond.any():
        check.exact(f"log1mexp/{dtype}/grad/beyond_range", ac.f64(grad[beyond]).tolist(), [np.inf] * int(beyond.sum()))
    if over.any():
        check.golden(f"log1mexp/{dtype}/grad/overflowing", grad[over])


def test_log1mexp_edges(check):
    """log 0 = -inf at 0 and -0.0 (stated); below 0, where the docstring calls it undefined, and at ±inf and NaN,
    the values and the derivatives (1 / expm1(x): finite below 0, ±inf at ±0) are the baseline's, golden."""
    value, grad = _value_and_grad(lambda q: ac.nn().log1mexp(q))(jnp.asarray(EDGES, jnp.float32))
    value, grad = ac.f64(value), ac.f64(grad)
    check.exact("log1mexp/edges/at_zero", value[:2].tolist(), [-np.inf, -np.inf])
    check.golden("log1mexp/edges", value.astype(np.float32))
    check.golden("log1mexp/edges/grad", grad.astype(np.float32))


LOGITS = np.array([[1.0, -2.0, 3.0, 0.5, 0.0],
                   [0.25, 4.0, -1.0, 2.0, -3.0],
                   [0.0, 0.0, 0.0, 0.0, 0.0],  # log n - log n: 0
                   [1e4, -1e4, 0.0, 5e3, 1e4]])  # saturates: the largest logits, minus log 2 - log 5 ... at 1e4's scale
V = np.round(np.cos(np.arange(LOGITS.size) * 2.1).reshape(LOGITS.shape) * 4.0) / 4.0  # exact in every dtype
WHERE = np.array([[1, 1, 0, 1, 1], [0, 0, 0, 0, 0], [1, 1, 1, 1, 0], [1, 0, 1, 1, 1]], bool)  # row 1: all left out
LME = "logsumexp - log n: the largest logit plus a log, minus log n; results of that size cancel to near 0"
CASES = {
    "default": {},
    "axis-1": {"axis": -1},
    "axis0/keepdims": {"axis": 0, "keepdims": True},
    "axes01": {"axis": (0, 1)},
    "where": {"axis": -1, "where": WHERE},
    "where/keepdims": {"axis": -1, "where": WHERE, "keepdims": True},
}


def _scale(x64, axis, keepdims):
    biggest = np.max(np.abs(x64), axis=axis, keepdims=keepdims)
    return np.maximum(biggest, 1.0) + np.log(x64.size if axis is None else np.prod(
        [x64.shape[a] for a in np.atleast_1d(axis)]))


def _logmeanexp(x, v, **kwargs):
    """One jitted program: logmeanexp(x, **kwargs) and the vjp of v (shaped as the result)."""
    kwargs = {k: jnp.asarray(w) if k == "where" else w for k, w in kwargs.items()}

    def both(q, c):
        y, pull = jax.vjp(lambda p: ac.nn().logmeanexp(p, **kwargs), q)
        return y, pull(c.reshape(y.shape))[0]

    return jax.jit(both)(x, v)


def _cotangent(kwargs):
    out = ref.logmeanexp(LOGITS, **kwargs)
    return np.resize(V.ravel(), np.shape(out))


@pytest.mark.parametrize("case", sorted(CASES))
def test_logmeanexp(check, case):
    """log (1/n sum_i e^(x_i)) over the axes (all by default), keepdims, a where mask (n the included elements;
    a row with none included: the baseline's, golden), and the vjp: the cotangent times the softmax over the
    included elements, 0 at the others; float32."""
    kwargs = CASES[case]
    v64 = _cotangent(kwargs)
    value, vjp = _logmeanexp(jnp.asarray(LOGITS, jnp.float32), jnp.asarray(v64, jnp.float32), **kwargs)
    _judge(check, f"logmeanexp/{case}", LOGITS, v64, kwargs, np.asarray(value), np.asarray(vjp))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_logmeanexp_16bit(check, dtype):
    """The last axis in bfloat16 and float16 (the saturating row's 1e4 finite in both): the value and the vjp in
    the input's dtype."""
    x = jnp.asarray(LOGITS, dtype)
    v64 = ac.f64(jnp.asarray(_cotangent({"axis": -1}), dtype))
    value, vjp = _logmeanexp(x, jnp.asarray(v64, dtype), axis=-1)
    check.exact(f"logmeanexp/{dtype}/dtypes", [str(value.dtype), str(vjp.dtype)], [dtype, dtype])
    _judge(check, f"logmeanexp/{dtype}", ac.f64(x), v64, {"axis": -1}, np.asarray(value), np.asarray(vjp))


def _judge(check, key, x64, v64, kwargs, value, vjp):
    axis, where, keepdims = kwargs.get("axis"), kwargs.get("where"), kwargs.get("keepdims", False)
    expected = ref.logmeanexp(x64, axis=axis, where=where, keepdims=keepdims)
    defined = np.isfinite(expected)  # a row with every element left out: log 0 - log 0
    scale = _scale(x64, axis, keepdims)
    check.reference(key, value[defined], expected[defined], scale=np.broadcast_to(scale, expected.shape)[defined],
                    why=LME)
    check.golden(key, value)
    expected_vjp = ref.logmeanexp_vjp(x64, v64, axis, where, keepdims)
    check.reference(f"{key}/vjp", vjp[np.isfinite(expected_vjp)], expected_vjp[np.isfinite(expected_vjp)])
    check.golden(f"{key}/vjp", vjp)


SQUAREPLUS_B = {"b0": 0.0, "b_array": np.array([0.0, 1.0, 4.0, 16.0, 0.25, 4.0, 1.0])}
SQUAREPLUS_X = np.array([-3.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0])


@pytest.mark.parametrize("case", sorted(SQUAREPLUS_B))
def test_squareplus_b(check, case):
    """b = 0: (x + |x|) / 2, relu (exactly: a sum of x and |x| or 0); b as an array broadcast against x, each
    element with its own b: the value and the derivative against the formula; float32."""
    b = SQUAREPLUS_B[case]
    x = jnp.asarray(SQUAREPLUS_X, jnp.float32)
    value, grad = _value_and_grad(lambda q: ac.nn().squareplus(q, jnp.asarray(b, jnp.float32)))(x)
    expected = ref_elementwise.squareplus(SQUAREPLUS_X, b)
    if case == "b0":
        check.exact("squareplus/b0/relu", ac.f64(value).tolist(), np.maximum(SQUAREPLUS_X, 0.0).tolist())
    scales = [ac.Scale(lambda q: of(q, b), why) for of, why in (
        (ref_elementwise.squareplus_scale, "x + sqrt(x^2 + b) cancels for negative x"),
        (ref_elementwise.squareplus_grad_scale, "1 + x / sqrt(x^2 + b) cancels for negative x (measured: -1.5e-8 "
                                                "for 0 at x = -3, b = 0)"))]
    ac.judge(check, f"squareplus/{case}", value, expected, scales[0], SQUAREPLUS_X)
    ac.judge(check, f"squareplus/{case}/grad", grad, ref_elementwise.squareplus_grad(SQUAREPLUS_X, b), scales[1],
             SQUAREPLUS_X)
