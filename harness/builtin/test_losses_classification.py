"""Optax's cross-entropies and divergences against float64 references of their documented formulas
(harness/builtin/reference/losses.py), values golden, and the gradient a training step takes (jax.grad of
the summed loss w.r.t. the logits) against its float64 derivative: softmax_cross_entropy (one-hot and soft
labels, another axis, a where mask over classes or rows), its integer-label and safe (-inf logits) forms,
sigmoid_binary_cross_entropy, sigmoid_focal_loss, poly_loss_cross_entropy, the three KL divergences; in
float32 and 16-bit inputs, with logits that saturate (±1e4).

A cross-entropy is log-sum-exp(x) minus a label-weighted logit: operands of the size of the largest logit
that cancel to a loss near 0 for a confident, correct row. Its reference is held at that scale (`scale=`,
the row's largest |logit|, at least 1), the ulps of the value's dtype as everywhere."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import loss_checks as lc
from harness.builtin.reference import losses as ref

pytestmark = pytest.mark.family("losses")

WHY = "log-sum-exp minus a label-weighted logit cancels to a small loss for a confident, correct row"
LOGITS = np.array([[1.0, -2.0, 3.0, 0.5, 0.0],
                   [0.25, 4.0, -1.0, 2.0, -3.0],
                   [0.0, 0.0, 0.0, 0.0, 0.0],
                   [1e4, -1e4, 0.0, 5e3, 1e4]])  # saturating: softmax is exactly one-hot or one half
INT_LABELS = np.array([2, 0, 3, 1])
SOFT = np.array([[0.1, 0.2, 0.3, 0.4, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0], [0.2] * 5, [0.5, 0.0, 0.0, 0.0, 0.5]])


def _scale(logits64, axis=-1):
    return np.maximum(np.max(np.abs(logits64), axis=axis), 1.0)


def _grad(fn, x, *args, **kw):
    return jax.grad(lambda q: jnp.sum(fn(q, *args, **kw)))(x)


@pytest.mark.parametrize("dtype", lc.DTYPES)
@pytest.mark.parametrize("labels", ["one_hot", "soft"])
def test_softmax_cross_entropy(check, labels, dtype):
    """-sum_j y_j log softmax(x)_j per row and the gradient sum(y) softmax(x) - y, with the saturating row."""
    x = jnp.asarray(LOGITS, dtype)
    y = jnp.asarray(ref.one_hot(INT_LABELS, 5) if labels == "one_hot" else SOFT, dtype)
    x64, y64 = lc.f64(x), lc.f64(y)
    fn = lc.loss("softmax_cross_entropy")
    key = f"softmax_cross_entropy/{labels}/{dtype}"
    lc.judge(check, key, fn(x, y), ref.softmax_cross_entropy(x64, y64), scale=_scale(x64), why=WHY)
    lc.judge(check, f"{key}/grad", _grad(fn, x, y), ref.softmax_cross_entropy_grad(x64, y64), scale=1.0,
             why="softmax(x) - y cancels where the predicted probability is the label")


def test_softmax_cross_entropy_axis_and_where(check):
    """axis=0 on the transposed logits is the rows' loss; a class mask (where of the logits' shape) drops
    those classes from the softmax and the sum; a row mask (where of the batch shape) gives 0 for a
    left-out row."""
    fn, x64, y64 = lc.loss("softmax_cross_entropy"), LOGITS[:3], SOFT[:3]
    x, y = jnp.asarray(x64, jnp.float32), jnp.asarray(y64, jnp.float32)
    expected = ref.softmax_cross_entropy(x64, y64)
    lc.judge(check, "softmax_cross_entropy/axis0", fn(x.T, y.T, axis=0), expected, scale=_scale(x64), why=WHY)
    classes = np.array([[1, 1, 1, 1, 0], [1, 1, 0, 1, 1], [0, 1, 1, 1, 1]], bool)
    lc.judge(check, "softmax_cross_entropy/where_classes", fn(x, y, where=jnp.asarray(classes)),
             ref.softmax_cross_entropy(x64, y64, where=classes), scale=_scale(x64), why=WHY)
    rows = np.array([True, False, True])
    lc.judge(check, "softmax_cross_entropy/where_rows", fn(x, y, where=jnp.asarray(rows)),
             np.where(rows, expected, 0.0), scale=_scale(x64), why=WHY)


@pytest.mark.parametrize("dtype", lc.DTYPES)
def test_integer_labels(check, dtype):
    """-log softmax(x)_y for an integer class per row, the gradient softmax(x) - onehot(y); axis=0 on the
    transposed logits; a row mask."""
    fn = lc.loss("softmax_cross_entropy_with_integer_labels")
    x, y = jnp.asarray(LOGITS, dtype), jnp.asarray(INT_LABELS)
    x64 = lc.f64(x)
    expected = ref.integer_cross_entropy(x64, INT_LABELS)
    key = f"integer_labels/{dtype}"
    lc.judge(check, key, fn(x, y), expected, scale=_scale(x64), why=WHY)
    lc.judge(check, f"{key}/grad", _grad(fn, x, y), ref.softmax_cross_entropy_grad(x64, ref.one_hot(INT_LABELS, 5)),
             scale=1.0, why="softmax(x) - onehot(y) cancels where the predicted probability is 1")
    lc.judge(check, f"{key}/axis0", fn(x.T, y, axis=0), expected, scale=_scale(x64), why=WHY)
    lc.judge(check, f"{key}/axis1", fn(x, y, axis=1), expected, scale=_scale(x64), why=WHY)  # -1 spelled 1
    rows = np.array([True, False, True, True])
    lc.judge(check, f"{key}/where_rows", fn(x, y, where=jnp.asarray(rows)), np.where(rows, expected, 0.0),
             scale=_scale(x64), why=WHY)


def test_integer_labels_over_several_axes(check):
    """axis=(1, 2): a label is a flat index into the (3, 4) slice of each batch row (the docstring's
    reading), the softmax over the 12 classes of the slice; with a class mask of the logits' shape."""
    fn = lc.loss("softmax_cross_entropy_with_integer_labels")
    x64 = np.sin(np.arange(2 * 3 * 4) * 0.9).reshape(2, 3, 4) * 4.0
    labels = np.array([5, 11])
    x = jnp.asarray(x64, jnp.float32)
    flat = x64.reshape(2, 12)
    lc.judge(check, "integer_labels/axes12", fn(x, jnp.asarray(labels), axis=(1, 2)),
             ref.integer_cross_entropy(flat, labels), scale=_scale(flat), why=WHY)
    keep = np.ones((2, 3, 4), bool)
    keep[0, 0, :2] = keep[1, 2, 0] = False  # classes whose label is not the row's
    masked = ref.softmax_cross_entropy(flat, ref.one_hot(labels, 12), where=keep.reshape(2, 12))
    lc.judge(check, "integer_labels/axes12/where", fn(x, jnp.asarray(labels), axis=(1, 2), where=jnp.asarray(keep)),
             masked, scale=_scale(flat), why=WHY)


def test_safe_softmax_cross_entropy(check):
    """As softmax_cross_entropy, and 0 log 0 = 0 where a logit is -inf and its label 0 (the plain form's NaN,
    pinned beside it as the baseline gives it); the gradient sum(y) softmax(x) - y."""
    x64 = np.array([[1.0, -np.inf, 3.0, 0.5], [-np.inf, 4.0, -1.0, -np.inf], [2.0, 1.0, 0.0, -1.0]])
    y64 = np.array([[0.5, 0.0, 0.5, 0.0], [0.0, 1.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    x, y = jnp.asarray(x64, jnp.float32), jnp.asarray(y64, jnp.float32)
    fn = lc.loss("safe_softmax_cross_entropy")
    lc.judge(check, "safe_softmax_cross_entropy", fn(x, y), ref.softmax_cross_entropy(x64, y64),
             scale=_scale(np.where(np.isinf(x64), 0.0, x64)), why=WHY)
    finite = jnp.asarray(LOGITS, jnp.float32)
    lc.judge(check, "safe_softmax_cross_entropy/grad", _grad(fn, finite, jnp.asarray(SOFT, jnp.float32)),
             ref.softmax_cross_entropy_grad(LOGITS, SOFT), scale=1.0, why="softmax(x) - y cancels")
    # A training step takes value and gradient together: the value from the differentiated path too, and the
    # gradient where a logit is -inf (0 there: its probability is 0 and its label 0).
    value, grad = jax.value_and_grad(lambda q: jnp.sum(fn(q, y)))(x)
    lc.judge(check, "safe_softmax_cross_entropy/value_with_grad", value, np.sum(ref.softmax_cross_entropy(x64, y64)),
             scale=np.sum(_scale(np.where(np.isinf(x64), 0.0, x64))), why=WHY)
    lc.judge(check, "safe_softmax_cross_entropy/grad_minus_inf", grad, ref.softmax_cross_entropy_grad(x64, y64),
             scale=1.0, why="softmax(x) - y cancels")
    check.golden("softmax_cross_entropy/minus_inf_logits", lc.loss("softmax_cross_entropy")(x, y))


BCE_LOGITS = np.array([-1e4, -100.0, -20.0, -2.0, -0.5, 0.0, 0.5, 3.0, 20.0, 100.0, 1e4])


@pytest.mark.parametrize("dtype", lc.DTYPES)
@pytest.mark.parametrize("labels", ["zeros", "ones", "soft"])
def test_sigmoid_binary_cross_entropy(check, labels, dtype):
    """-(y log s(x) + (1 - y) log(1 - s(x))) = log(1 + e^x) - x y elementwise, saturating logits included
    (±100, ±1e4: the loss is |x| or 0, never inf or NaN); the gradient s(x) - y."""
    x = jnp.asarray(BCE_LOGITS, dtype)
    y64 = {"zeros": np.zeros(11), "ones": np.ones(11), "soft": np.linspace(0.0, 1.0, 11)}[labels]
    y = jnp.asarray(y64, dtype)
    x64, y64 = lc.f64(x), lc.f64(y)
    fn, key = lc.loss("sigmoid_binary_cross_entropy"), f"sigmoid_bce/{labels}/{dtype}"
    lc.judge(check, key, fn(x, y), ref.sigmoid_bce(x64, y64), scale=np.abs(x64 * y64),
             why="log(1 + e^x) - x y cancels for a large logit whose label agrees with it")
    lc.judge(check, f"{key}/grad", _grad(fn, x, y), ref.sigmoid(x64) - y64, scale=1.0,
             why="s(x) - y cancels where the prediction is the label")


@pytest.mark.parametrize("alpha", [None, 0.25], ids=["alpha_none", "alpha0.25"])
@pytest.mark.parametrize("gamma", [2.0, 0.0, 0.5], ids=["gamma2", "gamma0", "gamma0.5"])
def test_sigmoid_focal_loss(check, alpha, gamma):
    """-alpha_t (1 - p_t)^gamma log p_t with binary labels, alpha None (no weighting) or 0.25, gamma 2 (the
    default), 0 (the binary cross-entropy) and 0.5 (the docstring's gamma < 2 case)."""
    x64 = BCE_LOGITS[1:-1]
    y64 = (np.arange(x64.size) % 2).astype(np.float64)
    x, y = jnp.asarray(x64, jnp.float32), jnp.asarray(y64, jnp.float32)
    fn = lc.loss("sigmoid_focal_loss")
    value = fn(x, y, alpha=alpha, gamma=gamma) if gamma != 2.0 else fn(x, y, alpha=alpha)
    lc.judge(check, f"sigmoid_focal/{alpha}/{gamma}", value, ref.sigmoid_focal(x64, y64, alpha, gamma),
             scale=np.abs(x64 * y64), why="as the binary cross-entropy it is weighted from")
    rows = fn(x.reshape(3, 3), y.reshape(3, 3), alpha=alpha, gamma=gamma)  # a batch of rows: elementwise still
    lc.judge(check, f"sigmoid_focal/{alpha}/{gamma}/2d", rows, ref.sigmoid_focal(x64, y64, alpha, gamma).reshape(3, 3),
             scale=np.abs(x64 * y64).reshape(3, 3), why="as the binary cross-entropy it is weighted from")


@pytest.mark.parametrize("epsilon", [2.0, -1.0, 0.5], ids=["default", "-1", "0.5"])
def test_poly_loss_cross_entropy(check, epsilon):
    """-log P_t + epsilon (1 - P_t), P_t = sum_j y_j softmax(x)_j (Poly-1); epsilon 2 is the default;
    axis=0 on the transposed logits; a class mask (softmax and sum over the included classes)."""
    fn, x64, y64 = lc.loss("poly_loss_cross_entropy"), LOGITS[:3], SOFT[:3]
    x, y = jnp.asarray(x64, jnp.float32), jnp.asarray(y64, jnp.float32)
    expected = ref.poly_loss(x64, y64, epsilon)
    scale = _scale(x64) + abs(epsilon)
    value = fn(x, y) if epsilon == 2.0 else fn(x, y, epsilon=epsilon)
    lc.judge(check, f"poly_loss/{epsilon}", value, expected, scale=scale, why=WHY)
    lc.judge(check, f"poly_loss/{epsilon}/axis0", fn(x.T, y.T, epsilon=epsilon, axis=0), expected, scale=scale,
             why=WHY)
    # Only classes whose label is 0 are left out: with label mass on a left-out class the docstring leaves
    # the loss undefined (the labels are no longer a distribution over the included classes).
    classes = np.array([[1, 1, 1, 1, 0], [1, 1, 0, 1, 1], [1, 1, 1, 1, 1]], bool)
    lc.judge(check, f"poly_loss/{epsilon}/where_classes", fn(x, y, epsilon=epsilon, where=jnp.asarray(classes)),
             ref.poly_loss(x64, y64, epsilon, where=classes), scale=scale, why=WHY)


def _distributions():
    q = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1], [1e-6, 0.5, 0.5 - 1e-6]])
    p = np.array([[0.1, 0.6, 0.3], [0.0, 0.5, 0.5], [0.3, 0.3, 0.4]])
    return np.log(q), p


@pytest.mark.parametrize("name", ["kl_divergence", "kl_divergence_with_log_targets", "convex_kl_divergence"])
def test_kl_divergences(check, name):
    """sum p (log p - log q) (0 log 0 = 0), its log-target form, and the convex sum p (log p - log q) - p + q;
    along axis 0; with a where mask; the gradient w.r.t. log q (-p; -p + q for the convex form)."""
    log_q64, p64 = _distributions()
    log_q = jnp.asarray(log_q64, jnp.float32)
    lq = lc.f64(log_q)
    if name == "kl_divergence_with_log_targets":
        targets = jnp.asarray(np.log(np.where(p64 > 0, p64, 1e-30)), jnp.float32)
        log_p64 = lc.f64(targets)
        p64 = np.exp(log_p64)

        def formula(a, axis=-1):
            return ref.kl_divergence_log_targets(a, log_p64 if axis == -1 else log_p64.T, axis)
    else:
        targets = jnp.asarray(p64, jnp.float32)
        p64 = lc.f64(targets)
        kl = ref.convex_kl_divergence if name == "convex_kl_divergence" else ref.kl_divergence

        def formula(a, axis=-1):
            return kl(a, p64 if axis == -1 else p64.T, axis)
    fn = lc.loss(name)
    scale = np.sum(p64 * (np.abs(np.log(np.maximum(p64, 1e-30))) + np.abs(lq)), axis=-1) + 1.0
    why = "a sum of p log p and p log q terms that cancel to a small divergence"
    lc.judge(check, name, fn(log_q, targets), formula(lq), scale=scale, why=why)
    lc.judge(check, f"{name}/axis0", fn(log_q.T, targets.T, axis=0), formula(lq.T, axis=0), scale=scale, why=why)
    rows = np.array([True, False, True])
    lc.judge(check, f"{name}/where", fn(log_q, targets, where=jnp.asarray(np.broadcast_to(rows[:, None], (3, 3)))),
             np.where(rows, formula(lq), 0.0), scale=scale, why=why)
    grad = _grad(fn, log_q, targets)
    expected = -p64 + (np.exp(lq) if name == "convex_kl_divergence" else 0.0)
    lc.judge(check, f"{name}/grad", grad, expected, scale=1.0, why="-p + q cancels where q = p")
