"""Independent NumPy float64 references of jax.nn's functions that work along axes (softmax, log_softmax,
logsumexp, standardize, one_hot, glu) and of their vector-Jacobian products (the gradient a training step takes
with a cotangent v), written from their docstrings' formulas (jax 0.11.2), never from JAX's code. Every function
takes float64 arrays and returns float64; `where` keeps the included elements, as the docstrings define it."""

from __future__ import annotations

import numpy as np


def _mask(x, where):
    return np.ones(x.shape, bool) if where is None else np.broadcast_to(where, x.shape)


def logsumexp(x, axis=None, b=None, keepdims=False, where=None):
    """log sum_i b_i e^(x_i) over the included elements (b = 1 when not given); returns (log |S|, sign S)."""
    keep = _mask(x, where)
    b = np.ones_like(x) if b is None else np.broadcast_to(b, x.shape)
    # A term with b_i = 0 is 0 whatever x_i is: the largest term's exponent is taken over the others (in float64
    # too, a left-out x_i of 1e4 beside kept ones of -1e4 would underflow every kept term).
    terms = keep & (b != 0)
    top = np.max(np.where(terms, x, -np.inf), axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        total = np.sum(np.where(terms, b * np.exp(np.where(terms, x, top) - top), 0.0), axis=axis, keepdims=True)
        out = np.log(np.abs(total)) + top
    sign = np.sign(total)
    if not keepdims:
        out, sign = np.squeeze(out, axis=axis), np.squeeze(sign, axis=axis)
    return out, sign


def softmax(x, axis=-1, where=None):
    """e^(x_i) / sum_j e^(x_j) over the included elements; 0 at the left-out ones."""
    keep = _mask(x, where)
    lse, _ = logsumexp(x, axis=axis, keepdims=True, where=where)
    return np.where(keep, np.exp(np.where(keep, x, 0.0) - lse), 0.0)


def log_softmax(x, axis=-1, where=None):
    """x_i - log sum_j e^(x_j) over the included elements; -inf at the left-out ones."""
    keep = _mask(x, where)
    lse, _ = logsumexp(x, axis=axis, keepdims=True, where=where)
    return np.where(keep, x - lse, -np.inf)


def softmax_vjp(x, v, axis=-1, where=None):
    """y (v - sum_j y_j v_j), y = softmax(x): 0 at the left-out elements."""
    y = softmax(x, axis, where)
    return y * (v - np.sum(y * v, axis=axis, keepdims=True))


def softmax_vjp_scale(x, v, axis=-1, where=None):
    """y (|v| + sum_j |y_j v_j|): the operands of v - <y, v>."""
    y = softmax(x, axis, where)
    return y * (np.abs(v) + np.sum(np.abs(y * v), axis=axis, keepdims=True))


def log_softmax_vjp(x, v, axis=-1, where=None):
    """v - softmax(x) sum_j v_j over the included elements; 0 at the left-out ones."""
    keep = _mask(x, where)
    vin = np.where(keep, v, 0.0)
    return np.where(keep, vin - softmax(x, axis, where) * np.sum(vin, axis=axis, keepdims=True), 0.0)


def log_softmax_vjp_scale(x, v, axis=-1, where=None):
    keep = _mask(x, where)
    vin = np.abs(np.where(keep, v, 0.0))
    return vin + softmax(x, axis, where) * np.sum(vin, axis=axis, keepdims=True)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """(x - <x>) / sqrt(<(x - <x>)^2> + epsilon), the means over the included elements (or those given)."""
    keep = _mask(x, where)
    n = np.sum(keep, axis=axis, keepdims=True)
    m = np.sum(np.where(keep, x, 0.0), axis=axis, keepdims=True) / n if mean is None else mean
    var = (np.sum(np.where(keep, (x - m) ** 2, 0.0), axis=axis, keepdims=True) / n if variance is None
           else variance)
    return (x - m) / np.sqrt(var + epsilon)


def standardize_vjp(x, v, axis=-1, epsilon=1e-5):
    """r (v - <v>) - r^3 (x - <x>) <v (x - <x>)>, r = 1 / sqrt(var + epsilon): the mean and the variance both
    depend on x."""
    d = x - np.mean(x, axis=axis, keepdims=True)
    r = 1.0 / np.sqrt(np.mean(d * d, axis=axis, keepdims=True) + epsilon)
    return r * (v - np.mean(v, axis=axis, keepdims=True)) - r ** 3 * d * np.mean(v * d, axis=axis, keepdims=True)


def standardize_vjp_scale(x, v, axis=-1, epsilon=1e-5):
    """The operands' size: r (|v| + <|v|>) + r^3 |x - <x>| <|v (x - <x>)|>."""
    d = x - np.mean(x, axis=axis, keepdims=True)
    r = 1.0 / np.sqrt(np.mean(d * d, axis=axis, keepdims=True) + epsilon)
    return (r * (np.abs(v) + np.mean(np.abs(v), axis=axis, keepdims=True))
            + r ** 3 * np.abs(d) * np.mean(np.abs(v * d), axis=axis, keepdims=True))


def one_hot(indices, num_classes, axis=-1):
    """1 where the class is the index, 0 elsewhere; an index outside [0, num_classes) gives a row of zeros."""
    out = (indices[..., None] == np.arange(num_classes)).astype(np.float64)
    return np.moveaxis(out, -1, axis)


def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


def glu(x, axis=-1):
    """a sigmoid(b), a and b the two halves of x along the axis."""
    a, b = np.split(x, 2, axis)
    return a * _sigmoid(b)


def glu_vjp(x, v, axis=-1):
    """(v sigmoid(b), v a sigmoid(b) sigmoid(-b)) joined along the axis."""
    a, b = np.split(x, 2, axis)
    return np.concatenate([v * _sigmoid(b), v * a * _sigmoid(b) * _sigmoid(-b)], axis)


def glu_vjp_scale(x, v, axis=-1):
    """(|v sigmoid(b)|, |v a| sigmoid(b)): sigmoid'(b) = sigmoid(b) (1 - sigmoid(b)) has 1 - sigmoid(b) cancel at
    1's scale for positive b."""
    a, b = np.split(x, 2, axis)
    return np.concatenate([np.abs(v * _sigmoid(b)), np.abs(v * a) * _sigmoid(b)], axis)


def standardize_r3(x, axis=-1, epsilon=1e-5):
    """(var + epsilon)^(-3/2), the factor of the vjp's variance term."""
    return (np.var(x, axis=axis, keepdims=True) + epsilon) ** -1.5


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log (1/n sum_i e^(x_i)) = logsumexp(x) - log n, n the number of included elements along the axes."""
    lse, _ = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    count = np.sum(np.broadcast_to(_mask(x, where), x.shape), axis=axis, keepdims=keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        return lse - np.log(count)


def logmeanexp_vjp(x, v, axis=None, where=None, keepdims=False):
    """v (the result's cotangent, spread over the reduced axes) times e^(x_i - logsumexp): the softmax over the
    included elements, 0 at the left-out ones (-log n is a constant)."""
    keep = _mask(x, where)
    lse, _ = logsumexp(x, axis=axis, keepdims=True, where=where)
    if not keepdims:
        v = np.expand_dims(v, tuple(range(x.ndim)) if axis is None else axis)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(keep, v * np.exp(np.where(keep, x, 0.0) - lse), 0.0)
