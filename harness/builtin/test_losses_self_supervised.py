"""Optax's self-supervised losses against float64 references (harness/builtin/reference/losses.py), values
golden: triplet_margin_loss (max(d(a, p) - d(a, n) + margin, 0), d the q-norm of the difference with eps under
the root; which reading of an odd q the baseline follows, a golden fact; its gradient in the anchors) and ntxent
(NT-Xent over cosine similarities at a temperature, groups of two and three and a label of its own; its
gradient in the embeddings against float64 central differences of the reference)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import loss_checks as lc
from harness.builtin.reference import losses as ref

pytestmark = pytest.mark.family("losses")

ANCHORS = np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 0.5], [-0.5, 2.0, 0.0], [0.3, -0.7, 1.2]])
POSITIVES = ANCHORS + np.array([[0.1, 0.1, 0.0], [0.5, -0.25, 0.5], [0.2, 0.2, 0.2], [-0.4, 0.3, 0.1]])
NEGATIVES = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.5], [-0.5, 2.5, 0.5], [2.0, 2.0, -1.0]])
WHY_TRIPLET = "the difference of two distances plus the margin, cancelling where the loss is near 0"
EMBEDDINGS = np.sin(np.arange(7 * 3) * 0.9).reshape(7, 3) + np.array([0.1, 0.2, 0.3])
LABELS = np.array([0, 0, 1, 1, 2, 2, 2])  # and, in one case, a label of its own


def _triplet_inputs(dtype="float32"):
    return (jnp.asarray(ANCHORS, dtype), jnp.asarray(POSITIVES, dtype), jnp.asarray(NEGATIVES, dtype))


def _triplet_scale(q=2, margin=1.0, eps=1e-6):
    """The magnitude of the terms the loss subtracts: both distances and the margin."""
    def dist(x, y):
        return (np.sum(np.abs(x - y) ** q, axis=-1) + eps) ** (1.0 / q)
    return dist(ANCHORS, POSITIVES) + dist(ANCHORS, NEGATIVES) + margin


@pytest.mark.parametrize("dtype", lc.DTYPES)
def test_triplet_margin_loss(check, dtype):
    """The defaults (q 2, margin 1, eps 1e-6) in every dtype, margin 0.5 and eps 0.1 (both inside the root and the
    hinge: some rows clamp at 0), the distances along axis 0 (the inputs transposed)."""
    fn = lc.loss("triplet_margin_loss")
    a, p, n = _triplet_inputs(dtype)
    a64, p64, n64 = lc.f64(a), lc.f64(p), lc.f64(n)
    lc.judge(check, f"triplet/{dtype}", fn(a, p, n), ref.triplet_margin(a64, p64, n64), scale=_triplet_scale(),
             why=WHY_TRIPLET)
    if dtype != "float32":
        return
    lc.judge(check, "triplet/margin0.5", fn(a, p, n, margin=0.5), ref.triplet_margin(a64, p64, n64, margin=0.5),
             scale=_triplet_scale(margin=0.5), why=WHY_TRIPLET)
    lc.judge(check, "triplet/eps0.1", fn(a, p, n, eps=0.1), ref.triplet_margin(a64, p64, n64, eps=0.1),
             scale=_triplet_scale(eps=0.1), why=WHY_TRIPLET)
    lc.judge(check, "triplet/axis0", fn(a.T, p.T, n.T, axis=0), ref.triplet_margin(a64, p64, n64),
             scale=_triplet_scale(), why=WHY_TRIPLET)


# For norm_degree 3: differences a - p and a - n with a negative element whose cube the others outweigh, so
# the signed sum stays positive (a real root) and differs from the sum of absolute cubes.
D_POS = np.array([[0.5, -0.2, 0.3], [0.4, 0.1, -0.3], [0.2, 0.2, -0.1], [0.6, -0.5, 0.1]])
D_NEG = np.array([[1.0, -0.5, 0.2], [0.9, 0.3, -0.6], [0.8, -0.7, 0.5], [1.2, 0.4, -1.0]])


def test_triplet_margin_loss_odd_norm_degree(check):
    """norm_degree 3: the docstring's norm takes |a - p|; the baseline raises the signed difference (for an even
    degree the same). Which reading it follows is a golden fact (inputs where the two differ and the signed sum
    stays positive), and the values are held to it."""
    fn = lc.loss("triplet_margin_loss")
    a, p, n = (jnp.asarray(v, jnp.float32) for v in (ANCHORS, ANCHORS - D_POS, ANCHORS - D_NEG))
    a64, p64, n64 = lc.f64(a), lc.f64(p), lc.f64(n)
    value = np.asarray(fn(a, p, n, norm_degree=3), np.float64)
    readings = {"signed difference cubed": True, "absolute difference cubed (the 3-norm)": False}
    check.golden_fact("triplet/q3/reading", sorted(k for k, signed in readings.items() if np.allclose(
        value, ref.triplet_margin(a64, p64, n64, q=3, signed=signed), rtol=1e-5, atol=0)))
    scale = 2.0 + 1.0  # both distances are under 1.1 here, the margin 1
    lc.judge(check, "triplet/q3", value.astype(np.float32), ref.triplet_margin(a64, p64, n64, q=3), scale=scale,
             why=WHY_TRIPLET)


def test_triplet_margin_loss_gradient(check):
    """The gradient in the anchors a step takes, rows with a positive loss: (a - p)/d(a, p) - (a - n)/d(a, n)."""
    fn = lc.loss("triplet_margin_loss")
    a, p, n = _triplet_inputs()
    grad = jax.grad(lambda x: jnp.sum(fn(x, p, n)))(a)
    a64, p64, n64 = lc.f64(a), lc.f64(p), lc.f64(n)
    d_p = np.sqrt(np.sum((a64 - p64) ** 2, -1, keepdims=True) + 1e-6)
    d_n = np.sqrt(np.sum((a64 - n64) ** 2, -1, keepdims=True) + 1e-6)
    active = ref.triplet_margin(a64, p64, n64)[:, None] > 0
    lc.judge(check, "triplet/grad", grad, np.where(active, (a64 - p64) / d_p - (a64 - n64) / d_n, 0.0), scale=2.0,
             why="the difference of two unit vectors")


def _ntxent_scale(temperature):
    """log-sum-exp of similarities bounded by 1 / temperature, minus one of them."""
    return 2.0 / temperature + np.log(len(LABELS))


@pytest.mark.parametrize("temperature", [None, 0.5], ids=["default", "0.5"])
def test_ntxent(check, temperature):
    """Pairs and a group of three (the default temperature 0.07, and 0.5); the last embedding given a label of its
    own (a negative to every other, in no positive pair)."""
    fn, x = lc.loss("ntxent"), jnp.asarray(EMBEDDINGS, jnp.float32)
    t = 0.07 if temperature is None else temperature
    call = (lambda e, y: fn(e, y)) if temperature is None else (lambda e, y: fn(e, y, temperature=t))
    for name, labels in (("groups", LABELS), ("own_label", np.array([0, 0, 1, 1, 2, 2, 3]))):
        lc.judge(check, f"ntxent/{t}/{name}", call(x, jnp.asarray(labels)), ref.ntxent(EMBEDDINGS, labels, t),
                 scale=_ntxent_scale(t), why="log-sum-exp of the similarities minus the positive's")


def test_ntxent_gradient(check):
    """The gradient in the embeddings against float64 central differences of the reference (step 1e-6: an
    error near 1e-9 relative, under a float32 ulp)."""
    fn, x = lc.loss("ntxent"), jnp.asarray(EMBEDDINGS, jnp.float32)
    grad = jax.grad(lambda e: fn(e, jnp.asarray(LABELS), temperature=0.5))(x)
    x64, h = lc.f64(x), 1e-6
    numeric = np.zeros_like(x64)
    for index in np.ndindex(x64.shape):
        step = np.zeros_like(x64)
        step[index] = h
        numeric[index] = (ref.ntxent(x64 + step, LABELS, 0.5) - ref.ntxent(x64 - step, LABELS, 0.5)) / (2 * h)
    lc.judge(check, "ntxent/grad", grad, numeric, scale=np.max(np.abs(numeric)), why="sums of terms of both signs")


ERRORS = {
    "triplet/unequal_shapes": lambda L: L.triplet_margin_loss(jnp.ones((2, 3)), jnp.ones((2, 3)), jnp.ones((2, 4))),
    "triplet/integer_inputs": lambda L: L.triplet_margin_loss(jnp.ones((2, 3), int), jnp.ones((2, 3), int),
                                                              jnp.zeros((2, 3), int)),
    "ntxent/labels_too_short": lambda L: L.ntxent(jnp.ones((4, 3)), jnp.array([0, 0, 1])),
    "ntxent/integer_embeddings": lambda L: L.ntxent(jnp.ones((4, 3), int), jnp.array([0, 0, 1, 1])),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_self_supervised_errors(check, case):
    """Shapes that do not match, integer inputs, labels of another length: the baseline's exception type."""
    check.error_contract(f"errors/{case}", ERRORS[case], lc.module())
