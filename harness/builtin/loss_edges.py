"""The edges of every loss's formula, where releases change what a training step gets: for each loss the
coverage ledger lists (area "loss"), calls that differentiate it w.r.t. its first float input at the inputs
where its formula saturates, ties, divides by a vanishing norm or branches (read from the formula and its
docstring), at each dtype's largest finite value, and with NaN and inf or labels outside the class range, and
(for labels given as integers) more classes than an 8-bit width counts (test_edges_losses.py judges them, a
loss given integers with them in every width).

A row's `call(losses, x)` is the loss of x with the row's other arguments fixed; `x(dtype)` the input in
float64 for that dtype (its largest finite value depends on it). Rows that put NaN or inf into a loss that
mixes a row's elements keep them in a row of their own, so the finite rows beside them stay pinned too.
Out of range and non-finite inputs have no documented result: the baseline's (raise, propagate, zero, clip)
is what is pinned.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from typing import Callable, Iterator

import numpy as np

from harness.builtin import edges
from harness.builtin.edges import FLOAT32, largest


@dataclasses.dataclass(frozen=True)
class Edge:
    case: str  # the golden key's part: what edge of the formula it holds
    call: Callable  # (optax.losses, x) -> the loss (any shape; a tuple's first element is the loss)
    x: Callable[[str], np.ndarray]  # dtype -> the differentiable input, in float64
    dtypes: tuple[str, ...] = edges.TAKEN_IN


INTEGER_WIDTHS = edges.INTEGER_WIDTHS  # int32 is the width the other edges take
_WIDTH: contextvars.ContextVar[str] = contextvars.ContextVar("labels_width", default="int32")
_BATCH: contextvars.ContextVar[int | None] = contextvars.ContextVar("batch", default=None)
_PASSED: contextvars.ContextVar[list | None] = contextvars.ContextVar("integers_passed", default=None)


@contextlib.contextmanager
def integers_as(width: str) -> Iterator[None]:
    """Every integer array an edge's call builds (its labels, indices, class ids) in `width` while the block
    runs (a jitted call traces inside it). Values a width cannot hold wrap as NumPy casts them (-1 is 255 in
    uint8): out of the class range either way."""
    token = _WIDTH.set(width)
    try:
        yield
    finally:
        _WIDTH.reset(token)


class _AnyLoss:
    """A stand-in for optax.losses whose every loss returns 0: what an edge's call builds for the loss is read
    without the stack's library (the same answer on a stack that lacks the loss, or has it changed)."""

    def __getattr__(self, name: str):
        import jax.numpy as jnp

        return lambda *args, **kwargs: (lambda *a, **k: jnp.zeros(())) if name.startswith("make_") else jnp.zeros(())


@contextlib.contextmanager
def batch_of(rows: int) -> Iterator[None]:
    """Every array an edge's call builds beside its input (labels, targets, paddings) cut to its first `rows`
    along the leading axis, the batch's, while the block runs: the edge's own call on a batch of that many (0:
    an empty batch, the last of an epoch that divides it exactly)."""
    token = _BATCH.set(rows)
    try:
        yield
    finally:
        _BATCH.reset(token)


def _batch(values) -> np.ndarray:
    values = np.asarray(values)
    rows = _BATCH.get()
    return values if rows is None else values[:rows]


def batch_is_as_long_as_another_axis(x: np.ndarray) -> bool:
    """Whether the input's leading axis (the batch) has the length of one of its other axes."""
    return x.ndim >= 2 and x.shape[0] in x.shape[1:]


def passes_integers(edge: "Edge") -> bool:
    """Whether the edge's call builds an integer array for its loss (traced abstractly, the loss a stand-in:
    nothing compiles, no library is asked)."""
    import jax
    import jax.numpy as jnp

    passed: list = []
    token = _PASSED.set(passed)
    try:
        x = edge.x("float32")
        jax.eval_shape(lambda q: edge.call(_AnyLoss(), q), jax.ShapeDtypeStruct(x.shape, jnp.float32))
    finally:
        _PASSED.reset(token)
    return bool(passed)


def _array(values: np.ndarray, dtype):
    """values as a JAX array of dtype; an empty one made by jnp.zeros (the same array): jax 0.7.1 crashes the
    process (a segmentation fault) on a zero-size constant in multiclass_sparsemax_loss's gradient."""
    import jax.numpy as jnp

    return jnp.zeros(values.shape, dtype) if values.size == 0 else jnp.asarray(values, dtype)


def _ints(values):
    if (passed := _PASSED.get()) is not None:
        passed.append(values)
    return _array(_batch(values).astype(_WIDTH.get()), _WIDTH.get())


def _like(x, values):
    return _array(_batch(values), x.dtype)


ONE_HOT = np.eye(4)[[2, 0, 0, 1]]  # the label of each logit row: the top logit, a tie, a saturated top, the largest
SOFT = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.5, 0.0, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0]])
CLASS = [2, 0, 0, 1]
OUT_OF_RANGE = [4, -1, 0, 1]  # the class count and -1 in the first two rows


MANY_CLASSES = 260  # more than an 8-bit width counts: a class id made in the labels' width wraps past 255
MANY_LABEL = [3]  # a class 256 ids below the last: where such a wrap lands a second 1


def _many_classes(dtype: str) -> np.ndarray:
    """One row of MANY_CLASSES ordinary logits (its label's not the largest)."""
    return 3.0 * np.sin(0.7 * np.arange(MANY_CLASSES))[None, :]


def _binary_labels(correct: bool) -> Callable:
    """Labels for the elementwise grid: each logit's sign right (confident and correct) or wrong."""
    def labels(x):
        import jax.numpy as jnp

        return jnp.where(x > 0, 1.0, 0.0).astype(x.dtype) if correct else jnp.where(x > 0, 0.0, 1.0).astype(x.dtype)
    return labels


def _focal(alpha, gamma, correct):
    def call(L, x):
        return L.sigmoid_focal_loss(x, _binary_labels(correct)(x), alpha=alpha, gamma=gamma)
    return call


def _bce(correct):
    return lambda L, x: L.sigmoid_binary_cross_entropy(x, _binary_labels(correct)(x))


def _pair_rows(dtype: str) -> np.ndarray:
    """Rows of 3: ordinary, a zero vector (norm 0), tiny, the dtype's largest magnitude. No row is parallel to
    its target: there the gradient is 0 in exact arithmetic, and its computed residue (7e-9 under XLA's AVX2 code,
    0 under AVX-512, measured) is the host's rounding, not the release's."""
    big = largest(dtype)
    return np.array([[1.0, -2.0, 0.5], [0.0, 0.0, 0.0], [1e-3, 0.0, -1e-3], [big, -big, 1.0]])


TARGETS3 = np.array([[0.5, 1.0, -2.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 1.0, 0.0]])


def _log_probs(dtype: str) -> np.ndarray:
    """log-predictions: ordinary, a probability of exactly 0 (-inf), the dtype's most negative, all equal."""
    big = largest(dtype)
    return np.array([[np.log(0.2), np.log(0.3), np.log(0.5)], [-np.inf, np.log(0.5), np.log(0.5)],
                     [-big, 0.0, -big], [np.log(1 / 3)] * 3])


KL_TARGETS = np.array([[0.1, 0.6, 0.3], [0.0, 0.5, 0.5], [0.0, 1.0, 0.0], [1 / 3] * 3])


def _masks(dtype: str) -> np.ndarray:
    """Dice predictions (logits before the sigmoid or softmax), a batch of 2 maps of 2x2 pixels and 3 classes:
    ordinary, and saturated with a tie."""
    big = largest(dtype)
    return np.array([[[[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]], [[30.0, -30.0, 0.0], [-1.0, 2.0, 1.0]]],
                     [[[big, -big, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [100.0, 100.0, -100.0]]]])


MASK_TARGETS = np.eye(3)[[[[0, 2], [1, 0]], [[0, 1], [2, 2]]]]
EMPTY_TARGETS = np.zeros((2, 2, 2, 3))  # no pixel of any class: the smooth term is all that is left


def _ctc(dtype: str) -> np.ndarray:
    """Logits of 2 sequences, 4 frames, 3 classes: ordinary, and one saturated toward the blank."""
    big = largest(dtype)
    return np.array([[[1.0, -2.0, 0.5], [0.0, 0.0, 0.0], [2.0, 1.0, -1.0], [0.5, 0.5, 3.0]],
                     [[big, -big, 0.0], [100.0, -100.0, 0.0], [0.0, 30.0, -30.0], [1.0, 2.0, 3.0]]])


def _ctc_call(with_probs: bool):
    def call(L, x):
        args = (x, _like(x, np.zeros((2, 4))), _ints([[1, 2], [2, 2]]), _like(x, np.zeros((2, 2))))
        return (L.ctc_loss_with_forward_probs if with_probs else L.ctc_loss)(*args)
    return call


def _embeddings(dtype: str) -> np.ndarray:
    """4 embeddings of 3: two identical (distance 0), one zero vector, one at the dtype's largest magnitude."""
    big = largest(dtype)
    return np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [big, -big, 1.0]])


def _triplet(swap_negatives: bool):
    def call(L, x):
        anchors, positives = x[:2], x[1:3]
        negatives = x[2:4] if not swap_negatives else x[:2]
        return L.triplet_margin_loss(anchors, positives, negatives)
    return call


def _fenchel_young(L, x):
    import jax

    loss = L.make_fenchel_young_loss(jax.scipy.special.logsumexp)
    return jax.vmap(loss)(x, _like(x, ONE_HOT))


EDGES: dict[str, tuple[Edge, ...]] = {
    "optax.sigmoid_binary_cross_entropy": (
        Edge("labels_right", _bce(True), edges.finite_elementwise), Edge("labels_wrong", _bce(False), edges.finite_elementwise),
        Edge("nonfinite", _bce(True), edges.elementwise)),
    "optax.sigmoid_focal_loss": tuple(
        Edge(f"alpha{alpha}/gamma{gamma}/labels_{'right' if right else 'wrong'}", _focal(alpha, gamma, right),
             edges.finite_elementwise)
        # gamma 0 (the binary cross-entropy), below 1 and between 1 and 2 (where (1 - p_t)^gamma has no finite
        # derivative at p_t = 1: the docstring's gamma < 2 note), 2 (the default)
        for alpha in (None, 0.25) for gamma in (0.0, 0.5, 1.5, 2.0) for right in (True, False)),
    "optax.softmax_cross_entropy": (
        Edge("one_hot", lambda L, x: L.softmax_cross_entropy(x, _like(x, ONE_HOT)), edges.logit_rows),
        Edge("soft", lambda L, x: L.softmax_cross_entropy(x, _like(x, SOFT)), edges.logit_rows),
        Edge("nonfinite", lambda L, x: L.softmax_cross_entropy(x, _like(x, ONE_HOT)), edges.nonfinite_rows)),
    "optax.safe_softmax_cross_entropy": (
        Edge("one_hot", lambda L, x: L.safe_softmax_cross_entropy(x, _like(x, ONE_HOT)), edges.logit_rows),
        Edge("nonfinite", lambda L, x: L.safe_softmax_cross_entropy(x, _like(x, ONE_HOT)), edges.nonfinite_rows)),
    "optax.softmax_cross_entropy_with_integer_labels": (
        Edge("labels", lambda L, x: L.softmax_cross_entropy_with_integer_labels(x, _ints(CLASS)), edges.logit_rows),
        Edge("labels_out_of_range",
             lambda L, x: L.softmax_cross_entropy_with_integer_labels(x, _ints(OUT_OF_RANGE)), edges.logit_rows),
        Edge("many_classes",
             lambda L, x: L.softmax_cross_entropy_with_integer_labels(x, _ints(MANY_LABEL)), _many_classes),
        Edge("nonfinite", lambda L, x: L.softmax_cross_entropy_with_integer_labels(x, _ints(CLASS)), edges.nonfinite_rows)),
    "optax.losses.poly_loss_cross_entropy": tuple(
        Edge(f"epsilon{eps}", (lambda e: lambda L, x: L.poly_loss_cross_entropy(x, _like(x, ONE_HOT), epsilon=e))(eps),
             edges.logit_rows)
        for eps in (2.0, -1.0, 0.0)),
    "optax.losses.multiclass_hinge_loss": (
        Edge("labels", lambda L, x: L.multiclass_hinge_loss(x, _ints(CLASS)), edges.logit_rows),
        Edge("labels_out_of_range", lambda L, x: L.multiclass_hinge_loss(x, _ints(OUT_OF_RANGE)), edges.logit_rows),
        Edge("many_classes", lambda L, x: L.multiclass_hinge_loss(x, _ints(MANY_LABEL)), _many_classes)),
    "optax.losses.multiclass_perceptron_loss": (
        Edge("labels", lambda L, x: L.multiclass_perceptron_loss(x, _ints(CLASS)), edges.logit_rows),
        Edge("labels_out_of_range", lambda L, x: L.multiclass_perceptron_loss(x, _ints(OUT_OF_RANGE)), edges.logit_rows),
        Edge("many_classes", lambda L, x: L.multiclass_perceptron_loss(x, _ints(MANY_LABEL)), _many_classes)),
    "optax.losses.multiclass_sparsemax_loss": (
        Edge("labels", lambda L, x: L.multiclass_sparsemax_loss(x, _ints(CLASS)), edges.logit_rows),
        Edge("labels_out_of_range", lambda L, x: L.multiclass_sparsemax_loss(x, _ints(OUT_OF_RANGE)), edges.logit_rows),
        Edge("many_classes", lambda L, x: L.multiclass_sparsemax_loss(x, _ints(MANY_LABEL)), _many_classes)),
    "optax.losses.sparsemax_loss": (
        Edge("labels_right", lambda L, x: L.sparsemax_loss(x, _binary_labels(True)(x)), edges.finite_elementwise),
        Edge("labels_wrong", lambda L, x: L.sparsemax_loss(x, _binary_labels(False)(x)), edges.finite_elementwise)),
    "optax.hinge_loss": (
        Edge("targets", lambda L, x: L.hinge_loss(x, _like(x, np.resize([1.0, -1.0], 15))), edges.elementwise),),
    "optax.losses.perceptron_loss": (
        Edge("targets", lambda L, x: L.perceptron_loss(x, _like(x, np.resize([1.0, -1.0], 15))), edges.elementwise),),
    "optax.squared_error": (Edge("no_targets", lambda L, x: L.squared_error(x), edges.elementwise),),
    "optax.l2_loss": (Edge("no_targets", lambda L, x: L.l2_loss(x), edges.elementwise),),
    "optax.huber_loss": tuple(
        Edge(f"delta{d}", (lambda d: lambda L, x: L.huber_loss(x, delta=d))(d), edges.elementwise) for d in (1.0, 20.0)),
    "optax.log_cosh": (Edge("no_targets", lambda L, x: L.log_cosh(x), edges.elementwise),),
    "optax.cosine_similarity": tuple(
        Edge(f"epsilon{e}", (lambda e: lambda L, x: L.cosine_similarity(x, _like(x, TARGETS3), epsilon=e))(e),
             _pair_rows) for e in (0.0, 1e-3)),
    "optax.cosine_distance": tuple(
        Edge(f"epsilon{e}", (lambda e: lambda L, x: L.cosine_distance(x, _like(x, TARGETS3), epsilon=e))(e),
             _pair_rows) for e in (0.0, 1e-3)),
    "optax.kl_divergence": (
        Edge("targets", lambda L, x: L.kl_divergence(x, _like(x, KL_TARGETS)), _log_probs),),
    "optax.convex_kl_divergence": (
        Edge("targets", lambda L, x: L.convex_kl_divergence(x, _like(x, KL_TARGETS)), _log_probs),),
    "optax.losses.kl_divergence_with_log_targets": (
        Edge("log_targets", lambda L, x: L.kl_divergence_with_log_targets(x, _like(x, _log_probs(str(x.dtype))[::-1])),
             _log_probs),),
    "optax.losses.binary_dice_loss": (
        Edge("targets", lambda L, x: L.binary_dice_loss(x[..., 0], _like(x, MASK_TARGETS[..., 0])), _masks),
        Edge("no_positives", lambda L, x: L.binary_dice_loss(x[..., 0], _like(x, EMPTY_TARGETS[..., 0])), _masks)),
    "optax.losses.dice_loss": (
        Edge("targets", lambda L, x: L.dice_loss(x, _like(x, MASK_TARGETS)), _masks),
        Edge("no_positives", lambda L, x: L.dice_loss(x, _like(x, EMPTY_TARGETS)), _masks)),
    "optax.losses.multiclass_generalized_dice_loss": (
        Edge("targets", lambda L, x: L.multiclass_generalized_dice_loss(x, _like(x, MASK_TARGETS)), _masks),
        Edge("no_positives", lambda L, x: L.multiclass_generalized_dice_loss(x, _like(x, EMPTY_TARGETS)), _masks)),
    "optax.losses.ranking_softmax_loss": (
        Edge("relevance", lambda L, x: L.ranking_softmax_loss(x, _like(x, SOFT), reduce_fn=None), edges.logit_rows),
        Edge("no_relevant_item", lambda L, x: L.ranking_softmax_loss(x, _like(x, np.zeros((4, 4))), reduce_fn=None),
             edges.logit_rows)),
    "optax.losses.make_fenchel_young_loss": (Edge("logsumexp", _fenchel_young, edges.logit_rows),),
    "optax.ctc_loss": (Edge("labels", _ctc_call(False), _ctc),),
    "optax.ctc_loss_with_forward_probs": (Edge("labels", _ctc_call(True), _ctc),),
    "optax.losses.triplet_margin_loss": (
        Edge("coincident", _triplet(False), _embeddings), Edge("negatives_are_anchors", _triplet(True), _embeddings)),
    "optax.ntxent": (
        Edge("coincident", lambda L, x: L.ntxent(x, _ints([0, 0, 1, 1])), _embeddings, FLOAT32),),
    "optax.smooth_labels": tuple(
        Edge(f"alpha{a}", (lambda a: lambda L, x: L.smooth_labels(x, a))(a), edges.logit_rows) for a in (0.0, 0.1, 1.0)),
}


def integer_label_edges(names) -> dict[str, tuple[Edge, ...]]:
    """Of the losses `names`, each one some edge of which gives it integers -> those edges (their labels' widths
    are then a dtype the loss accepts: test_edges_losses.py takes each)."""
    given = {name: tuple(edge for edge in EDGES.get(name, ()) if passes_integers(edge)) for name in names}
    return {name: edges_given for name, edges_given in given.items() if edges_given}
