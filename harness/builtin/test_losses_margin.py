"""Optax's margin losses against float64 references of their textbook formulas (the docstrings name them:
the binary hinge max(0, 1 - y s), the perceptron max(0, -y s), their multiclass forms, the sparsemax loss
of Martins & Astudillo 2016 whose zero the docstring states), values golden; the hinge's and perceptron's
gradients against -y on the side where the loss is linear and 0 beyond, and at the kink itself (y s = 1,
y s = 0), where the function has no derivative, the baseline's choice golden; bad shapes and labels."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import loss_checks as lc
from harness.builtin.reference import losses as ref

pytestmark = pytest.mark.family("losses")

SCORES = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0, 1e4])
TARGETS = np.array([1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0])


@pytest.mark.parametrize("dtype", lc.DTYPES)
@pytest.mark.parametrize("name,kink", [("hinge_loss", 1.0), ("perceptron_loss", 0.0)], ids=["hinge", "perceptron"])
def test_binary_margin_losses(check, name, kink, dtype):
    """max(0, kink - y s) (kink 1: the hinge; 0: the perceptron), targets in {-1, 1}; the gradient -y where
    y s < kink, 0 where y s > kink; at y s = kink (every score whose margin sits on it) the baseline's
    subgradient, golden."""
    fn = lc.loss(name)
    s, y = jnp.asarray(SCORES, dtype), jnp.asarray(TARGETS, dtype)
    s64, y64 = lc.f64(s), lc.f64(y)
    formula = ref.hinge if kink == 1.0 else ref.perceptron
    lc.judge(check, f"{name}/{dtype}", fn(s, y), formula(s64, y64))
    grad = np.asarray(jax.grad(lambda q: jnp.sum(fn(q, y)))(s), np.float64)
    margin = y64 * s64
    smooth = margin != kink
    lc.judge(check, f"{name}/{dtype}/grad", grad[smooth], np.where(margin < kink, -y64, 0.0)[smooth])
    at_kink = jnp.asarray([kink, -kink, kink], dtype), jnp.asarray([1.0, -1.0, -1.0], dtype)
    check.golden(f"{name}/{dtype}/at_kink", fn(*at_kink))
    check.golden(f"{name}/{dtype}/grad_at_kink", jax.grad(lambda q: jnp.sum(fn(q, at_kink[1])))(at_kink[0]))


MULTI = np.array([[1.0, -2.0, 3.0, 0.5], [0.25, 4.0, -1.0, 2.0], [0.0, 0.0, 0.0, 0.0], [2.0, 1.5, -1.0, 1.0]])
MULTI_LABELS = np.array([2, 0, 1, 0])  # a correct row by more than 1, a wrong one, a tie, one inside the margin


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", ["multiclass_hinge_loss", "multiclass_perceptron_loss", "multiclass_sparsemax_loss"])
def test_multiclass_margin_losses(check, name, dtype):
    """max_j (s_j + [j != y]) - s_y, max_j s_j - s_y, and the sparsemax loss <p, s> - |p|²/2 + 1/2 - s_y with
    p = sparsemax(s), per row: rows correct by more than the margin (0), wrong, tied and inside it."""
    formula = {"multiclass_hinge_loss": ref.multiclass_hinge, "multiclass_perceptron_loss": ref.multiclass_perceptron,
               "multiclass_sparsemax_loss": ref.multiclass_sparsemax}[name]
    s = jnp.asarray(MULTI, dtype)
    lc.judge(check, f"{name}/{dtype}", lc.loss(name)(s, jnp.asarray(MULTI_LABELS)), formula(lc.f64(s), MULTI_LABELS),
             scale=np.max(np.abs(MULTI), axis=-1) + 1.0, why="a max of scores minus the true score cancels to 0")


def test_sparsemax_loss(check):
    """The binary sparsemax loss: the multiclass one of the scores (x, 0) with x the true class's score for
    y = 1; zero exactly where the docstring says, sparse_sigmoid(x) = clip((x + 1)/2, 0, 1) equal to y."""
    x64 = np.array([-3.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.0, -2.0, 0.5, 1.5])
    y = np.array([1, 1, 0, 1, 0, 1, 1, 0, 1, 0])
    x = jnp.asarray(x64, jnp.float32)
    value = lc.loss("sparsemax_loss")(x, jnp.asarray(y))
    lc.judge(check, "sparsemax_loss", value, ref.binary_sparsemax(x64, y), scale=np.abs(x64) + 1.0,
             why="a sum of the score's terms that cancels to 0 where the prediction is the label")
    zero = np.clip((x64 + 1.0) / 2.0, 0.0, 1.0) == y
    check.exact("zero where sparse_sigmoid(x) = y", (np.asarray(value) == 0.0).tolist(), zero.tolist())
    batch = lc.loss("sparsemax_loss")(x.reshape(2, 5), jnp.asarray(y.reshape(2, 5)))  # a batch of rows
    lc.judge(check, "sparsemax_loss/2d", batch, ref.binary_sparsemax(x64, y).reshape(2, 5),
             scale=np.abs(x64.reshape(2, 5)) + 1.0, why="as above")


ERRORS = {
    "softmax_cross_entropy/labels_of_another_width": lambda L: L.softmax_cross_entropy(
        jnp.ones((2, 3)), jnp.ones((2, 4))),
    "softmax_cross_entropy/where_of_higher_rank": lambda L: L.softmax_cross_entropy(
        jnp.ones((2, 3)), jnp.ones((2, 3)), where=jnp.ones((1, 2, 3), bool)),
    "softmax_cross_entropy/bad_axis": lambda L: L.softmax_cross_entropy(jnp.ones((2, 3)), jnp.ones((2, 3)), axis=2),
    "integer_labels/float_labels": lambda L: L.softmax_cross_entropy_with_integer_labels(jnp.ones((2, 3)), jnp.ones(2)),
    "integer_labels/labels_of_another_batch": lambda L: L.softmax_cross_entropy_with_integer_labels(
        jnp.ones((2, 3)), jnp.zeros(3, jnp.int32)),
    "integer_labels/one_hot_labels": lambda L: L.softmax_cross_entropy_with_integer_labels(
        jnp.ones((2, 3)), jnp.zeros((2, 3), jnp.int32)),
    "safe_softmax_cross_entropy/labels_of_another_width": lambda L: L.safe_softmax_cross_entropy(
        jnp.ones((2, 3)), jnp.ones((2, 4))),
    "sigmoid_bce/unbroadcastable": lambda L: L.sigmoid_binary_cross_entropy(jnp.ones(3), jnp.ones(4)),
    "sigmoid_focal/unbroadcastable": lambda L: L.sigmoid_focal_loss(jnp.ones(3), jnp.ones(4)),
    "poly_loss/labels_of_another_width": lambda L: L.poly_loss_cross_entropy(jnp.ones((2, 3)), jnp.ones((2, 4))),
    "kl_divergence/unbroadcastable": lambda L: L.kl_divergence(jnp.ones((2, 3)), jnp.ones((2, 4))),
    "kl_divergence_with_log_targets/unbroadcastable": lambda L: L.kl_divergence_with_log_targets(
        jnp.ones((2, 3)), jnp.ones((2, 4))),
    "convex_kl_divergence/unbroadcastable": lambda L: L.convex_kl_divergence(jnp.ones((2, 3)), jnp.ones((2, 4))),
    "hinge_loss/unbroadcastable": lambda L: L.hinge_loss(jnp.ones(3), jnp.ones(4)),
    "perceptron_loss/unbroadcastable": lambda L: L.perceptron_loss(jnp.ones(3), jnp.ones(4)),
    "multiclass_hinge_loss/labels_of_another_batch": lambda L: L.multiclass_hinge_loss(
        jnp.ones((2, 3)), jnp.zeros(3, jnp.int32)),
    "multiclass_perceptron_loss/float_labels": lambda L: L.multiclass_perceptron_loss(jnp.ones((2, 3)), jnp.ones(2)),
    "multiclass_sparsemax_loss/labels_of_another_batch": lambda L: L.multiclass_sparsemax_loss(
        jnp.ones((2, 3)), jnp.zeros(3, jnp.int32)),
    "sparsemax_loss/unbroadcastable": lambda L: L.sparsemax_loss(jnp.ones(3), jnp.ones(4, jnp.int32)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_classification_errors(check, case):
    """Labels of another width or batch, float labels where integers are documented, an axis the logits lack,
    shapes that cannot broadcast: the exception type (or no error) is the baseline's."""
    check.error_contract(f"errors/{case}", ERRORS[case], lc.module())
