"""Optax's segmentation and ranking losses and the Fenchel-Young construction against float64 references of
their documented formulas (harness/builtin/reference/losses.py), values golden: multiclass_generalized_dice_loss
(the docstring's weighted mean of per-class dice losses, and which reading holds), dice_loss (per class
1 - (2 sum p t + smooth) / (sum p + sum t + smooth) over the spatial axes, softmax or probabilities, class
weights, the three reductions, the background left out, other axes), binary_dice_loss (sigmoid or not),
ranking_softmax_loss (-sum_i y_i log softmax(s)_i with where, weights and reduce_fn), and
make_fenchel_young_loss(logsumexp), which for one-hot targets is the softmax cross-entropy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import loss_checks as lc
from harness.builtin.reference import losses as ref

pytestmark = pytest.mark.family("losses")

LOGITS = np.sin(np.arange(2 * 3 * 3 * 4) * 1.3).reshape(2, 3, 3, 4) * 2.0  # (batch, H, W, classes)
TARGETS = np.eye(4)[(np.arange(18) * 7 % 4).reshape(2, 3, 3)]
WHY = "1 minus a ratio near 1 where prediction and target overlap"


def _inputs():
    return jnp.asarray(LOGITS, jnp.float32), jnp.asarray(TARGETS, jnp.float32)


def test_dice_loss(check):
    """Per class over H, W of softmax(logits): reduction none (per class), mean (the default) and sum; class
    weights (the per-class losses weighted, then reduced); the background class left out; smooth 0.5;
    probabilities given (apply_softmax=False); the sums over H alone (axis=1)."""
    x, t = _inputs()
    fn, p = lc.loss("dice_loss"), ref.softmax(LOGITS)
    per_class = ref.dice_per_class(p, TARGETS, 1.0, (1, 2))
    lc.judge(check, "dice/none", fn(x, t, reduction="none"), per_class, scale=1.0, why=WHY)
    lc.judge(check, "dice/mean", fn(x, t), per_class.mean(-1), scale=1.0, why=WHY)
    lc.judge(check, "dice/sum", fn(x, t, reduction="sum"), per_class.sum(-1), scale=4.0, why=WHY)
    w = np.array([0.1, 0.2, 0.3, 0.4])
    lc.judge(check, "dice/class_weights", fn(x, t, class_weights=jnp.asarray(w, jnp.float32)),
             (per_class * w).mean(-1), scale=1.0, why=WHY)
    lc.judge(check, "dice/ignore_background", fn(x, t, ignore_background=True), per_class[:, 1:].mean(-1),
             scale=1.0, why=WHY)
    lc.judge(check, "dice/smooth0.5", fn(x, t, smooth=0.5), ref.dice_per_class(p, TARGETS, 0.5, (1, 2)).mean(-1),
             scale=1.0, why=WHY)
    probs = jnp.asarray(p, jnp.float32)
    lc.judge(check, "dice/probabilities", fn(probs, t, apply_softmax=False),
             ref.dice_per_class(lc.f64(probs), TARGETS, 1.0, (1, 2)).mean(-1), scale=1.0, why=WHY)
    lc.judge(check, "dice/axis1", fn(x, t, axis=(1,)), ref.dice_per_class(p, TARGETS, 1.0, (1,)).mean(-1),
             scale=1.0, why=WHY)


def test_binary_dice_loss(check):
    """1 - (2 sum s t + smooth) / (sum s + sum t + smooth) over H, W with s = sigmoid(x), smooth 1 (the default)
    and 0.25; probabilities without the sigmoid: the baseline's outcome (an error) golden."""
    x, t = _inputs()
    fn = lc.loss("binary_dice_loss")
    x0, t0 = x[..., 0], t[..., 0]
    s = ref.sigmoid(LOGITS[..., 0])
    lc.judge(check, "binary_dice", fn(x0, t0), ref.dice_per_class(s, TARGETS[..., 0], 1.0, (1, 2)), scale=1.0, why=WHY)
    lc.judge(check, "binary_dice/smooth0.25", fn(x0, t0, smooth=0.25),
             ref.dice_per_class(s, TARGETS[..., 0], 0.25, (1, 2)), scale=1.0, why=WHY)
    # Probabilities given (apply_sigmoid=False): the baseline checks them as a softmax's, summing to 1 along
    # the last axis, which binary probabilities do not: it raises, for these (B, H, W) and for (B, H, W, 1).
    probs = jnp.asarray(s, jnp.float32)
    check.error_contract("binary_dice/probabilities", fn, probs, t0, apply_sigmoid=False)
    check.error_contract("binary_dice/probabilities_last_axis_1", fn, probs[..., None], t0[..., None],
                         apply_sigmoid=False)


def test_dice_loss_shapes(check):
    """The shapes dice_loss and binary_dice_loss take apart from (batch, H, W, classes): predictions without the
    class axis beside one-class targets, and the reverse (both given one); one class with the background left out
    (nothing is left out: the class is kept); a batch of one with it left out; binary inputs of height 1 (the last
    axis is width, not a class: sigmoid, not softmax); an empty last axis (the baseline's result, golden)."""
    dice, binary = lc.loss("dice_loss"), lc.loss("binary_dice_loss")
    x, t = _inputs()
    x0, t0 = x[..., 0], t[..., 0]
    one_class = ref.dice_per_class(ref.sigmoid(LOGITS[..., :1]), TARGETS[..., :1], 1.0, (1, 2))
    lc.judge(check, "dice/shapes/predictions_without_class_axis", dice(x0, t0[..., None]), one_class.mean(-1),
             scale=1.0, why=WHY)
    lc.judge(check, "dice/shapes/targets_without_class_axis", dice(x0[..., None], t0), one_class.mean(-1),
             scale=1.0, why=WHY)
    lc.judge(check, "dice/shapes/one_class_background_kept", dice(x[..., :1], t[..., :1], ignore_background=True),
             one_class.mean(-1), scale=1.0, why=WHY)
    per_class = ref.dice_per_class(ref.softmax(LOGITS[:1]), TARGETS[:1], 1.0, (1, 2))
    lc.judge(check, "dice/shapes/batch_of_one_background_left_out", dice(x[:1], t[:1], ignore_background=True),
             per_class[:, 1:].mean(-1), scale=1.0, why=WHY)
    flat_x, flat_t = x[:, :1, :, 0], t[:, :1, :, 0]  # (batch, 1, W): binary maps one row high
    lc.judge(check, "binary_dice/height1", binary(flat_x, flat_t),
             ref.dice_per_class(ref.sigmoid(LOGITS[:, :1, :, 0]), TARGETS[:, :1, :, 0], 1.0, (1, 2)),
             scale=1.0, why=WHY)
    check.golden("binary_dice/empty_last_axis", binary(jnp.zeros((2, 3, 0)), jnp.zeros((2, 3, 0))))
    check.error_contract("dice/unknown_reduction", dice, x, t, reduction="total")


def test_multiclass_generalized_dice_loss(check):
    """The docstring's class weights (inverse squared class frequencies over batch and space, normalised to the
    number of classes) on each sample's per-class dice loss, averaged over batch and classes: smooth 1 (the
    default) and 0.5, probabilities given, the background left out. Which reading the baseline follows (that,
    or Sudre et al.'s ratio of weighted sums the docstring cites) is a golden fact."""
    x, t = _inputs()
    fn, p = lc.loss("multiclass_generalized_dice_loss"), ref.softmax(LOGITS)
    value = np.asarray(fn(x, t), np.float64)
    readings = {"weighted mean of the per-class dice losses": ref.weighted_mean_dice(p, TARGETS, 1.0),
                "Sudre et al.'s ratio of weighted sums": ref.generalized_dice(p, TARGETS, 1.0, (0, 1, 2))}
    check.golden_fact("generalized_dice/reading", sorted(k for k, v in readings.items()
                                                         if np.allclose(value, v, rtol=1e-5, atol=0)))
    lc.judge(check, "generalized_dice", value.astype(np.float32), ref.weighted_mean_dice(p, TARGETS, 1.0), scale=1.0,
             why=WHY)
    lc.judge(check, "generalized_dice/smooth0.5", fn(x, t, smooth=0.5), ref.weighted_mean_dice(p, TARGETS, 0.5),
             scale=1.0, why=WHY)
    probs = jnp.asarray(p, jnp.float32)
    lc.judge(check, "generalized_dice/probabilities", fn(probs, t, apply_softmax=False),
             ref.weighted_mean_dice(lc.f64(probs), TARGETS, 1.0), scale=1.0, why=WHY)
    lc.judge(check, "generalized_dice/ignore_background", fn(x, t, ignore_background=True),
             ref.weighted_mean_dice(p, TARGETS, 1.0, ignore_background=True), scale=1.0, why=WHY)


SCORES = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 3.0], [0.0, 0.0, 1.0, -2.0]])
RELEVANCE = np.array([[0.0, 1.0, 2.0, 0.0], [1.0, 0.0, 0.0, 3.0], [2.0, 0.0, 1.0, 1.0]])


def test_ranking_softmax_loss(check):
    """-sum_i y_i log softmax(s)_i per list, reduced by its mean (the default), its sum, or not at all (None);
    items left out by where; per-item weights."""
    fn = lc.loss("ranking_softmax_loss")
    s, y = jnp.asarray(SCORES, jnp.float32), jnp.asarray(RELEVANCE, jnp.float32)
    per_list = ref.ranking_softmax(SCORES, RELEVANCE)
    scale = np.sum(RELEVANCE, -1) * (np.max(np.abs(SCORES)) + np.log(4))
    why = "log-sum-exp minus the label-weighted scores"
    lc.judge(check, "ranking/mean", fn(s, y), per_list.mean(), scale=scale.mean(), why=why)
    lc.judge(check, "ranking/sum", fn(s, y, reduce_fn=jnp.sum), per_list.sum(), scale=scale.sum(), why=why)
    lc.judge(check, "ranking/none", fn(s, y, reduce_fn=None), per_list, scale=scale, why=why)
    where = np.array([[1, 1, 1, 0], [1, 0, 1, 1], [1, 1, 1, 1]], bool)
    lc.judge(check, "ranking/where", fn(s, y, where=jnp.asarray(where), reduce_fn=None),
             ref.ranking_softmax(SCORES, np.where(where, RELEVANCE, 0.0), where=where), scale=scale, why=why)
    stacked = fn(jnp.stack([s, s[::-1]]), jnp.stack([y, y[::-1]]), reduce_fn=None)  # lists of lists
    lc.judge(check, "ranking/3d", stacked, np.stack([per_list, per_list[::-1]]), scale=np.stack([scale, scale[::-1]]),
             why=why)
    w = np.array([[1.0, 2.0, 0.5, 1.0], [1.0, 1.0, 1.0, 3.0], [0.0, 1.0, 2.0, 1.0]])
    lc.judge(check, "ranking/weights", fn(s, y, weights=jnp.asarray(w, jnp.float32), reduce_fn=None),
             ref.ranking_softmax(SCORES, RELEVANCE, weights=w), scale=scale * 3.0, why=why)


def test_ranking_softmax_loss_empty_lists(check):
    """A list with no valid item (where all False) and one with no relevant item (labels all 0): the loss of
    each, unreduced (0: nothing to rank), and the mean over the batch: the baseline's values golden, the
    non-empty lists' against float64."""
    fn = lc.loss("ranking_softmax_loss")
    s, y = jnp.asarray(SCORES, jnp.float32), jnp.asarray(RELEVANCE, jnp.float32)
    where = np.array([[1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]], bool)
    labels = np.array(RELEVANCE)
    labels[2] = 0.0
    per_list = fn(s, jnp.asarray(labels, jnp.float32), where=jnp.asarray(where), reduce_fn=None)
    check.golden("ranking/empty/none", per_list)
    check.golden_exact("ranking/empty/none/no_valid_item", per_list[1])
    lc.judge(check, "ranking/empty/none/first", per_list[:1], ref.ranking_softmax(SCORES[:1], RELEVANCE[:1]),
             scale=np.sum(RELEVANCE[0]) * (np.max(np.abs(SCORES)) + np.log(4)), why="log-sum-exp minus the scores")
    check.golden("ranking/empty/mean", fn(s, jnp.asarray(labels, jnp.float32), where=jnp.asarray(where)))
    check.golden("ranking/empty/sum", fn(s, jnp.asarray(labels, jnp.float32), where=jnp.asarray(where),
                                         reduce_fn=jnp.sum))


def test_ranking_softmax_loss_nothing_valid(check):
    """A batch in which no list has a valid item: its mean loss is 0, not the NaN of an empty mean; a NaN
    score in a valid list stays NaN through the mean (golden, exact: zeros and NaN the contract states)."""
    fn = lc.loss("ranking_softmax_loss")
    s, y = jnp.asarray(SCORES, jnp.float32), jnp.asarray(RELEVANCE, jnp.float32)
    nothing = jnp.zeros(SCORES.shape, bool)
    check.golden_exact("ranking/nothing_valid/mean", fn(s, y, where=nothing))
    check.golden_exact("ranking/nothing_valid/none", fn(s, y, where=nothing, reduce_fn=None))
    with_nan = s.at[0, 1].set(jnp.nan)
    first_only = jnp.asarray(np.arange(3)[:, None] == 0).repeat(4, axis=1)
    check.golden_exact("ranking/nan_score/mean", fn(with_nan, y, where=first_only))


def test_make_fenchel_young_loss(check):
    """The Fenchel-Young loss of logsumexp, max*(s) - <s, y> + Omega(y): for one-hot y (Omega = the negative
    entropy, 0 there) the softmax cross-entropy; its gradient softmax(s) - y."""
    fy = lc.module().make_fenchel_young_loss(jax.scipy.special.logsumexp)
    s = jnp.asarray(SCORES, jnp.float32)
    y = ref.one_hot(np.array([2, 3, 0]), 4)
    yj = jnp.asarray(y, jnp.float32)
    scale = np.max(np.abs(SCORES)) + np.log(4)
    value = jax.vmap(fy)(s, yj)
    lc.judge(check, "fenchel_young/logsumexp", value, ref.softmax_cross_entropy(SCORES, y), scale=scale,
             why="log-sum-exp minus the true score")
    grad = jax.grad(lambda q: jnp.sum(jax.vmap(fy)(q, yj)))(s)
    lc.judge(check, "fenchel_young/logsumexp/grad", grad, ref.softmax_cross_entropy_grad(SCORES, y), scale=1.0,
             why="softmax(s) - y cancels where the prediction is the label")
