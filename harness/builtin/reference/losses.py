"""Independent NumPy float64 references of Optax's loss functions and of the gradients a training step takes
of them, written from their documented formulas (the docstrings; where a docstring names a loss without its
formula, the textbook definition it names: the hinge, the perceptron, the L2 loss ½ r²), never from Optax's
code. Every function takes float64 arrays (the library's inputs upcast) and returns float64."""

from __future__ import annotations

import numpy as np


def _log_softmax(x, axis=-1, where=None):
    """log(exp(x_j) / sum_k exp(x_k)) over the included classes (where), -inf elsewhere."""
    x = np.where(where, x, -np.inf) if where is not None else x
    top = np.max(x, axis=axis, keepdims=True)
    return x - top - np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))


def softmax(x, axis=-1):
    return np.exp(_log_softmax(x, axis))


# -- regression ----------------------------------------------------------------------------------------------------
def squared_error(p, t):
    return (p - t) ** 2


def l2_loss(p, t):
    return 0.5 * (p - t) ** 2


def huber(p, t, delta):
    """½ r² for |r| <= delta, delta (|r| - ½ delta) beyond: L2 near zero, L1 away from it."""
    r = np.abs(p - t)
    return np.where(r <= delta, 0.5 * r ** 2, delta * (r - 0.5 * delta))


def huber_grad(p, t, delta):
    """d/dp: the residual clipped to [-delta, delta] (the docstring's 'clipping gradients of an l2_loss')."""
    return np.clip(p - t, -delta, delta)


def log_cosh(p, t):
    """log(cosh(r)), as |r| + log1p(exp(-2|r|)) - log 2 so that float64 does not overflow at large |r|."""
    r = np.abs(p - t)
    return r + np.log1p(np.exp(-2.0 * r)) - np.log(2.0)


def cosine_similarity(p, t, min_norm=0.0, axis=-1):
    """<p, t> / (max(|p|, m) max(|t|, m)): the cosine of the angle, m the least norm in the denominator.

    The docstring calls `epsilon` that least norm (m = epsilon); optax 0.2.6 computes it as the least
    *squared* norm (m = sqrt(epsilon)): the contract passes m = sqrt(epsilon) and records which reading
    the library follows as a golden fact (losses/test_cosine), so either change shows."""
    norm_p = np.maximum(np.sqrt(np.sum(p * p, axis=axis)), min_norm)
    norm_t = np.maximum(np.sqrt(np.sum(t * t, axis=axis)), min_norm)
    return np.sum(p * t, axis=axis) / (norm_p * norm_t)


def smooth_labels(labels, alpha):
    """(1 - alpha) y + alpha / K, K the number of classes (the last axis)."""
    return (1.0 - alpha) * labels + alpha / labels.shape[-1]


# -- classification ------------------------------------------------------------------------------------------------
def softmax_cross_entropy(logits, labels, axis=-1, where=None):
    """-sum_j y_j log softmax(x)_j over the axis (the included classes only, where a mask is given)."""
    logp = _log_softmax(logits, axis, where)
    terms = np.where(labels == 0, 0.0, labels * logp)
    if where is not None:
        terms = np.where(where, terms, 0.0)
    return -np.sum(terms, axis=axis)


def softmax_cross_entropy_grad(logits, labels, axis=-1):
    """d/dx of sum over rows: sum_j(y_j) softmax(x) - y."""
    return np.sum(labels, axis=axis, keepdims=True) * softmax(logits, axis) - labels


def integer_cross_entropy(logits, labels):
    """-log softmax(x)_y for an integer class y per row (last axis)."""
    logp = _log_softmax(logits)
    return -np.take_along_axis(logp, labels[..., None], axis=-1)[..., 0]


def one_hot(labels, classes):
    return (labels[..., None] == np.arange(classes)).astype(np.float64)


def sigmoid_bce(logits, labels):
    """-(y log s(x) + (1 - y) log(1 - s(x))) = log(1 + e^x) - x y, with s the logistic sigmoid."""
    return np.logaddexp(0.0, logits) - logits * labels


def sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


def hinge(scores, targets):
    """max(0, 1 - y s) for y in {-1, 1}."""
    return np.maximum(0.0, 1.0 - targets * scores)


def perceptron(scores, targets):
    """max(0, -y s) for y in {-1, 1}."""
    return np.maximum(0.0, -targets * scores)


def multiclass_hinge(scores, labels):
    """max_j (s_j + [j != y]) - s_y: the Crammer-Singer multiclass hinge."""
    margin = 1.0 - one_hot(labels, scores.shape[-1])
    return np.max(scores + margin, axis=-1) - np.take_along_axis(scores, labels[..., None], -1)[..., 0]


def multiclass_perceptron(scores, labels):
    """max_j s_j - s_y."""
    return np.max(scores, axis=-1) - np.take_along_axis(scores, labels[..., None], -1)[..., 0]


def poly_loss(logits, labels, epsilon, axis=-1, where=None):
    """-log P_t + epsilon (1 - P_t), P_t = sum_j y_j softmax(x)_j (Poly-1), over the included classes."""
    probs = np.exp(_log_softmax(logits, axis, where))
    p_t = np.sum(labels * probs, axis=axis)
    return softmax_cross_entropy(logits, labels, axis, where) + epsilon * (1.0 - p_t)


def kl_divergence(log_q, p, axis=-1):
    """sum p (log p - log q), 0 log 0 = 0."""
    return np.sum(np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - log_q), 0.0), axis=axis)


def kl_divergence_log_targets(log_q, log_p, axis=-1):
    """sum e^{log p} (log p - log q)."""
    return np.sum(np.exp(log_p) * (log_p - log_q), axis=axis)


def convex_kl_divergence(log_q, p, axis=-1):
    """The generalised KL, jointly convex: sum p (log p - log q) - p + q with q = e^{log q}."""
    return kl_divergence(log_q, p, axis) + np.sum(np.exp(log_q) - p, axis=axis)


def sigmoid_focal(logits, labels, alpha, gamma):
    """-alpha_t (1 - p_t)^gamma log p_t, p_t = p if y = 1 else 1 - p (binary labels), alpha_t = alpha or
    1 - alpha, no weighting for alpha None."""
    log_p, log_not_p = -np.logaddexp(0.0, -logits), -np.logaddexp(0.0, logits)
    log_pt = np.where(labels == 1, log_p, log_not_p)
    loss = -((1.0 - np.exp(log_pt)) ** gamma) * log_pt
    return loss if alpha is None else np.where(labels == 1, alpha, 1.0 - alpha) * loss


def sparsemax(x):
    """The Euclidean projection of x onto the simplex (Martins & Astudillo 2016): max(x - tau, 0)."""
    z = np.sort(x, axis=-1)[..., ::-1]
    k = np.arange(1, x.shape[-1] + 1)
    cssv = np.cumsum(z, axis=-1)
    support = (1.0 + k * z) > cssv
    k_z = np.sum(support, axis=-1, keepdims=True)
    tau = (np.take_along_axis(cssv, k_z - 1, -1) - 1.0) / k_z
    return np.maximum(x - tau, 0.0)


def multiclass_sparsemax(scores, labels):
    """The sparsemax loss (Martins & Astudillo 2016, eq. 21): -s_y + ½ sum_{j in S} (s_j² - tau²) + ½, i.e.
    <p, s> - ½|p|² + ½ - s_y with p = sparsemax(s)."""
    p = sparsemax(scores)
    s_y = np.take_along_axis(scores, labels[..., None], -1)[..., 0]
    return np.sum(p * scores, -1) - 0.5 * np.sum(p * p, -1) + 0.5 - s_y


def binary_sparsemax(logits, labels):
    """The multiclass sparsemax loss of the scores (x, 0) with class 1 - y (y = 1: x is the true score)."""
    scores = np.stack([logits, np.zeros_like(logits)], axis=-1)
    return multiclass_sparsemax(scores, (1 - labels).astype(np.int64))


def ctc(logits, logit_paddings, labels, label_paddings, blank=0):
    """-log p(labels | logits) per sequence (Graves et al. 2006): the sum over every alignment of the
    unpadded frames that collapses (merge repeats, drop blanks) to the unpadded labels, by the forward
    recursion over the labels with blanks interleaved, in log space; per-frame probabilities softmax."""
    losses = []
    for b in range(logits.shape[0]):
        frames = _log_softmax(logits[b][logit_paddings[b] == 0])
        ys = labels[b][label_paddings[b] == 0]
        ext = [blank]
        for y in ys:
            ext += [int(y), blank]
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = frames[0, ext[0]]
        if len(ext) > 1:
            alpha[1] = frames[0, ext[1]]
        for t in range(1, len(frames)):
            prev = alpha.copy()
            for s in range(len(ext)):
                terms = [prev[s]] + ([prev[s - 1]] if s >= 1 else [])
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    terms.append(prev[s - 2])
                alpha[s] = np.logaddexp.reduce(terms) + frames[t, ext[s]]
        losses.append(-np.logaddexp.reduce(alpha[-2:] if len(ext) > 1 else alpha[-1:]))
    return np.array(losses)


# -- segmentation and ranking -----------------------------------------------------------------------------------------
def dice_per_class(p, t, smooth, axes):
    """1 - (2 sum p t + smooth) / (sum p + sum t + smooth), the sums over the spatial axes: per class."""
    inter = np.sum(p * t, axis=axes)
    return 1.0 - (2.0 * inter + smooth) / (np.sum(p, axis=axes) + np.sum(t, axis=axes) + smooth)


def generalized_dice(p, t, smooth, axes):
    """Sudre et al. 2017: 1 - 2 sum_c w_c sum_i p t / sum_c w_c sum_i (p + t), w_c = 1 / (sum_i t_ic)²; smooth
    added to numerator and denominator as in dice_loss."""
    w = 1.0 / np.sum(t, axis=axes) ** 2
    num = 2.0 * np.sum(w * np.sum(p * t, axis=axes), axis=-1) + smooth
    den = np.sum(w * np.sum(p + t, axis=axes), axis=-1) + smooth
    return 1.0 - num / den


def weighted_mean_dice(p, t, smooth, ignore_background=False):
    """The docstring of multiclass_generalized_dice_loss read as it says: class weights the inverse squared class
    frequencies (counted over the batch and the spatial axes), normalised to sum to the number of classes; the
    scalar the average over batch and classes of each per-class dice loss (dice_per_class over the spatial axes)
    times its weight, the background class left out when asked. Not Sudre et al.'s ratio of weighted sums
    (generalized_dice): which of the two the baseline follows is a golden fact (the contract's)."""
    w = 1.0 / np.sum(t, axis=tuple(range(t.ndim - 1))) ** 2
    per_class = dice_per_class(p, t, smooth, tuple(range(1, p.ndim - 1))) * (w / np.sum(w) * w.size)
    return np.mean(per_class[..., 1:] if ignore_background else per_class)


# -- self-supervised --------------------------------------------------------------------------------------------------
def triplet_margin(a, pos, neg, q=2, margin=1.0, eps=1e-6, signed=True):
    """max(d(a, pos) - d(a, neg) + margin, 0) per row, d(x, y) = (sum_j (x - y)_j^q + eps)^(1/q) over the last
    axis: for an even q the q-norm of the difference (the docstring's 'norm degree'), eps under the root. The
    baseline raises the signed difference to q, so for an odd q the two readings differ (signed=False: the
    absolute difference, the norm): the contract records which one it follows."""
    def dist(x, y):
        d = x - y if signed else np.abs(x - y)
        return (np.sum(d ** q, axis=-1) + eps) ** (1.0 / q)
    return np.maximum(dist(a, pos) - dist(a, neg) + margin, 0.0)


def ntxent(x, labels, temperature):
    """NT-Xent (Chen et al. 2020, as pytorch-metric-learning states it): over every ordered positive pair (i, j),
    j != i with the same label, -log(exp(s_ij) / (exp(s_ij) + sum_k exp(s_ik))), k over i's negatives (the other
    labels), s the cosine similarity over the temperature; the mean over the pairs."""
    unit = x / np.linalg.norm(x, axis=-1, keepdims=True)
    s = unit @ unit.T / temperature
    same = labels[:, None] == labels[None, :]
    terms = []
    for i, j in zip(*np.nonzero(same & ~np.eye(len(labels), dtype=bool))):
        negatives = np.exp(s[i][~same[i]])
        terms.append(np.log(np.exp(s[i, j]) + np.sum(negatives)) - s[i, j])
    return np.mean(terms)


def ranking_softmax(logits, labels, where=None, weights=None):
    """-sum_i w_i y_i log softmax(s)_i over the valid items (where), per list (the docstring's formula, the
    weights multiplying each item's term)."""
    labels = labels if weights is None else labels * weights
    return softmax_cross_entropy(logits, labels, where=where)
