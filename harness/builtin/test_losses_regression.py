"""Optax's regression losses and label smoothing against float64 references of their documented formulas
(harness/builtin/reference/losses.py), their values golden, and the gradient a training step takes of
them (jax.grad of their sum) against the float64 derivative: squared_error, l2_loss, huber_loss (on,
one float32 ulp inside and outside its delta, where the loss changes formula), log_cosh (at residuals
where cosh overflows float32), cosine_similarity / cosine_distance (epsilon under a zero vector, another
axis, a where mask), smooth_labels; 16-bit inputs; shapes that cannot broadcast."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import loss_checks as lc
from harness.builtin.reference import losses as ref

pytestmark = pytest.mark.family("losses")

P = [-3.0, -1.5, -0.25, 0.0, 0.5, 2.0, 7.0, 40.0]
T = [0.5, -1.0, 0.0, 0.0, 1.5, -2.0, 6.5, -1.0]


def _pt(dtype):
    return jnp.asarray(P, dtype), jnp.asarray(T, dtype)


@pytest.mark.parametrize("dtype", lc.DTYPES)
@pytest.mark.parametrize("name", ["squared_error", "l2_loss"])
def test_squared_losses(check, name, dtype):
    """(p - t)² and ½ (p - t)², with and without targets (None: zeros), and their gradients 2 (p - t) and
    p - t; in every dtype, the value in the inputs' dtype."""
    fn, formula = lc.loss(name), getattr(ref, name)
    p, t = _pt(dtype)
    p64, t64 = lc.f64(p), lc.f64(t)
    lc.judge(check, f"{name}/{dtype}/targets", fn(p, t), formula(p64, t64))
    lc.judge(check, f"{name}/{dtype}/no_targets", fn(p), formula(p64, 0.0))
    factor = 2.0 if name == "squared_error" else 1.0
    grad = jax.grad(lambda q: jnp.sum(fn(q, t)))(p)
    lc.judge(check, f"{name}/{dtype}/grad", grad, factor * (p64 - t64))


def _around(delta, dtype):
    """Residuals one ulp under, at and one ulp over ±delta, 0, and far out (L1 side)."""
    d = np.asarray(delta, dtype)
    inf = np.asarray(np.inf, dtype)
    near = [np.nextafter(d, -inf), d, np.nextafter(d, inf)]
    return np.asarray([*near, *(-v for v in near), 0.0, 0.1, -100.0, 1e4], dtype)


@pytest.mark.parametrize("dtype", lc.DTYPES)
@pytest.mark.parametrize("delta", [1.0, 0.5, 3.0], ids=["default", "0.5", "3"])
def test_huber_loss(check, delta, dtype):
    """½ r² inside delta, delta (|r| - ½ delta) outside, at the switch (r = ±delta, where both forms give
    ½ delta²) and one ulp to either side; the gradient is r clipped to [-delta, delta] (the docstring's
    'clipping gradients of an l2_loss'); the default delta is 1. Targets given and left out."""
    fn = lc.loss("huber_loss")
    r = jnp.asarray(_around(delta, dtype))
    t = jnp.asarray(np.linspace(-1.0, 1.0, r.size), dtype)
    p = jnp.asarray(lc.f64(t) + lc.f64(r), dtype)  # the residual the library sees is p - t, rounded: use it
    p64, t64 = lc.f64(p), lc.f64(t)
    value = fn(p, t) if delta == 1.0 else fn(p, t, delta=delta)
    lc.judge(check, f"huber/{delta}/{dtype}", value, ref.huber(p64, t64, delta))
    grad = jax.grad(lambda q: jnp.sum(fn(q, t, delta=delta)))(p)
    # Measured: in bfloat16 at delta 3 the gradient of a residual 0.1 inside delta came out 0.09375 for 0.1016,
    # one bfloat16 ulp of delta: the quadratic and linear parts' gradients are summed with terms of size delta
    # that cancel inside it, so the rounding is at delta's scale, not the residual's.
    lc.judge(check, f"huber/{delta}/{dtype}/grad", grad, ref.huber_grad(p64, t64, delta), scale=delta,
             why="inside delta the gradient sums terms of size delta that cancel")
    alone = fn(r, delta=delta)
    lc.judge(check, f"huber/{delta}/{dtype}/no_targets", alone, ref.huber(lc.f64(r), 0.0, delta))


@pytest.mark.parametrize("dtype", lc.DTYPES)
def test_log_cosh(check, dtype):
    """log(cosh(r)): ~r²/2 near 0, |r| - log 2 far out, at residuals where cosh overflows the dtype (100 in
    float32 and 16-bit, 1e4); the gradient tanh(r); targets given and left out."""
    fn = lc.loss("log_cosh")
    p, t = _pt(dtype)
    big = jnp.asarray([100.0, -100.0, 1e4], dtype)
    p64, t64 = lc.f64(p), lc.f64(t)
    # Near 0 log cosh r is |r| + log(1 + e^{-2|r|}) - log 2 (the docstring's |r| - log 2 far out): terms of
    # size log 2 that cancel to ~r²/2. Measured: float16 at r = -0.25 gave 0.03076 for 0.03093, 11 ulps at
    # the value, under 1 at log 2.
    lc.judge(check, f"log_cosh/{dtype}", fn(p, t), ref.log_cosh(p64, t64), scale=np.abs(p64 - t64) + np.log(2.0),
             why="near 0 log cosh cancels terms of size log 2 to ~r^2/2")
    lc.judge(check, f"log_cosh/{dtype}/overflowing_cosh", fn(big), ref.log_cosh(lc.f64(big), 0.0))
    grad = jax.grad(lambda q: jnp.sum(fn(q, t)))(p)
    lc.judge(check, f"log_cosh/{dtype}/grad", grad, np.tanh(p64 - t64))


def _vectors(dtype):
    a = np.array([[1.0, -2.0, 3.0, 0.5], [0.0, 0.0, 0.0, 0.0], [1e-3, 0.0, -2e-3, 0.0]])
    b = np.array([[2.0, 1.0, -1.0, 4.0], [1.0, 2.0, 3.0, 4.0], [3.0, -1.0, 0.5, 2.0]])
    return jnp.asarray(a, dtype), jnp.asarray(b, dtype)


@pytest.mark.parametrize("name", ["cosine_similarity", "cosine_distance"])
def test_cosine(check, name):
    """<p, t> / (max(|p|, eps) max(|t|, eps)) (distance: 1 minus it): with eps 0 a zero vector gives the
    baseline's value (golden), with eps 0.1 it gives 0 and a vector shorter than eps is divided by eps;
    along axis 0; with a where mask leaving elements out of the sums."""
    fn = lc.loss(name)
    flip = (lambda v: 1.0 - v) if name == "cosine_distance" else (lambda v: v)
    p, t = _vectors("float32")
    p64, t64 = lc.f64(p), lc.f64(t)
    check.golden(f"{name}/eps0", fn(p, t))
    lc.judge(check, f"{name}/eps0/nonzero", fn(p, t)[::2], flip(ref.cosine_similarity(p64, t64)[::2]))
    # The docstring's epsilon is the least norm; the baseline floors the squared norm at it (least norm
    # sqrt(epsilon)): which reading holds is a golden fact, and the values are held to the baseline's.
    value, eps = np.asarray(fn(p, t, epsilon=0.1), np.float64), 0.1
    readings = {"norm floored at epsilon": eps, "squared norm floored at epsilon": np.sqrt(eps)}
    check.golden_fact(f"{name}/epsilon_reading", sorted(k for k, m in readings.items() if np.allclose(
        value, flip(ref.cosine_similarity(p64, t64, m)), rtol=1e-5, atol=0)))
    lc.judge(check, f"{name}/eps0.1", fn(p, t, epsilon=eps), flip(ref.cosine_similarity(p64, t64, np.sqrt(eps))))
    lc.judge(check, f"{name}/axis0", fn(p, t, axis=0), flip(ref.cosine_similarity(p64, t64, axis=0)))
    where = np.array([[1, 1, 0, 1], [1, 1, 1, 1], [1, 0, 1, 1]], bool)
    masked = ref.cosine_similarity(np.where(where, p64, 0.0), np.where(where, t64, 0.0), np.sqrt(0.1))
    lc.judge(check, f"{name}/where", fn(p, t, epsilon=0.1, where=jnp.asarray(where)), flip(masked))


@pytest.mark.parametrize("dtype", lc.DTYPES)
@pytest.mark.parametrize("alpha", [0.0, 0.1, 1.0])
def test_smooth_labels(check, alpha, dtype):
    """(1 - alpha) y + alpha / K over K = 5 classes, for one-hot and soft labels; alpha 0 leaves them as they
    are, 1 makes them uniform."""
    labels = np.array([[0.0, 1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4, 0.0]])
    y = jnp.asarray(labels, dtype)
    lc.judge(check, f"smooth_labels/{alpha}/{dtype}", lc.loss("smooth_labels")(y, alpha),
             ref.smooth_labels(lc.f64(y), alpha))
    y3 = jnp.stack([y, y[::-1]], axis=1)  # (2, 2, 5): the classes are still the last axis
    lc.judge(check, f"smooth_labels/{alpha}/{dtype}/3d", lc.loss("smooth_labels")(y3, alpha),
             ref.smooth_labels(lc.f64(y3), alpha))


ERRORS = {
    "squared_error/unbroadcastable": lambda L: L.squared_error(jnp.ones(3), jnp.ones(4)),
    "l2_loss/unbroadcastable": lambda L: L.l2_loss(jnp.ones((2, 3)), jnp.ones((3, 2))),
    "huber_loss/unbroadcastable": lambda L: L.huber_loss(jnp.ones(3), jnp.ones(4)),
    "log_cosh/unbroadcastable": lambda L: L.log_cosh(jnp.ones(3), jnp.ones(4)),
    "cosine_similarity/unbroadcastable": lambda L: L.cosine_similarity(jnp.ones((2, 3)), jnp.ones((2, 4))),
    "cosine_distance/bad_axis": lambda L: L.cosine_distance(jnp.ones((2, 3)), jnp.ones((2, 3)), axis=2),
    "smooth_labels/scalar": lambda L: L.smooth_labels(jnp.float32(1.0), 0.1),
    "huber_loss/integer_inputs": lambda L: L.huber_loss(jnp.arange(3), jnp.zeros(3, jnp.int32)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_regression_errors(check, case):
    """Shapes that cannot broadcast, an axis the inputs lack, a scalar to smooth, integer inputs: the
    exception type (or no error) is the baseline's."""
    check.error_contract(f"errors/{case}", ERRORS[case], lc.module())
