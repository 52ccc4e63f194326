"""Independent NumPy float64 references of jax.nn's activations and of their derivatives, written from the
formulas in their docstrings (jax 0.11.2, jax/_src/nn/functions.py), never from JAX's code. At a kink the
derivative is the docstrings' stated one (relu'(0) = 0, relu6'(0) = relu6'(6) = 0) or, where a docstring gives
the function by cases, the derivative of the case that holds at the point (`x <= 0` for elu at 0). Every
function takes float64 arrays (the library's inputs upcast) and returns float64."""

from __future__ import annotations

import math

import numpy as np

SELU_ALPHA = 1.6732632423543772848170429916717  # the docstring's alpha and lambda
SELU_SCALE = 1.0507009873554804934193349852946
_GELU_C = math.sqrt(2.0 / math.pi)
_GELU_A = 0.044715


def sigmoid(x):
    """1 / (1 + e^-x), as e^-log(1 + e^-x) so that float64 does not overflow."""
    return np.exp(-np.logaddexp(0.0, -x))


def sigmoid_grad(x):
    return sigmoid(x) * sigmoid(-x)


def log_sigmoid(x):
    """log sigmoid(x) = -log(1 + e^-x)."""
    return -np.logaddexp(0.0, -x)


def softplus(x):
    """log(1 + e^x)."""
    return np.logaddexp(0.0, x)


def relu_grad(x):
    """1 for x > 0, 0 elsewhere: the docstring's relu'(0) = 0."""
    return (x > 0).astype(np.float64)


def relu6(x):
    """min(max(x, 0), 6)."""
    return np.minimum(np.maximum(x, 0.0), 6.0)


def relu6_grad(x):
    """1 on (0, 6), 0 elsewhere: the docstring's relu6'(0) = relu6'(6) = 0."""
    return ((x > 0) & (x < 6)).astype(np.float64)


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return relu6(x + 3.0) / 6.0


def hard_sigmoid_grad(x):
    """relu6'(x + 3) / 6: 0 at the switch points -3 and 3, as relu6's stated derivative at 0 and 6 gives."""
    return relu6_grad(x + 3.0) / 6.0


def hard_silu(x):
    """x hard_sigmoid(x)."""
    return x * hard_sigmoid(x)


def hard_silu_grad(x):
    return hard_sigmoid(x) + x * hard_sigmoid_grad(x)


def hard_tanh(x):
    """-1 below -1, x on [-1, 1], 1 above."""
    return np.clip(x, -1.0, 1.0)


def hard_tanh_grad(x):
    """1 on the closed [-1, 1] (the docstring's middle case holds at ±1), 0 outside."""
    return ((x >= -1) & (x <= 1)).astype(np.float64)


def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope x below."""
    return np.where(x >= 0, x, negative_slope * x)


def leaky_relu_grad(x, negative_slope=1e-2):
    return np.where(x >= 0, 1.0, negative_slope)


def elu(x, alpha=1.0):
    """x for x > 0, alpha (e^x - 1) for x <= 0."""
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))


def elu_grad(x, alpha=1.0):
    """1 for x > 0, alpha e^x for x <= 0 (alpha at 0)."""
    return np.where(x > 0, 1.0, alpha * np.exp(np.minimum(x, 0.0)))


def celu(x, alpha=1.0):
    """x for x > 0, alpha (e^(x / alpha) - 1) for x <= 0."""
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0) / alpha))


def celu_grad(x, alpha=1.0):
    return np.where(x > 0, 1.0, np.exp(np.minimum(x, 0.0) / alpha))


def selu(x):
    """lambda x for x > 0, lambda (alpha e^x - alpha) for x <= 0."""
    return SELU_SCALE * elu(x, SELU_ALPHA)


def selu_grad(x):
    return SELU_SCALE * elu_grad(x, SELU_ALPHA)


def gelu_exact(x):
    """x / 2 erfc(-x / sqrt 2)."""
    return 0.5 * x * np.vectorize(math.erfc)(-x / math.sqrt(2.0))


def gelu_exact_grad(x):
    """Phi(x) + x phi(x): erfc(-x / sqrt 2) / 2 + x e^(-x^2 / 2) / sqrt(2 pi)."""
    return 0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2.0)) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _gelu_tanh(x):
    with np.errstate(over="ignore"):
        return np.tanh(_GELU_C * (x + _GELU_A * x ** 3))


def gelu_approx(x):
    """x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + _gelu_tanh(x))


def gelu_approx_grad(x):
    """(1 + t) / 2 + x / 2 (1 - t^2) sqrt(2 / pi) (1 + 3 0.044715 x^2), t the tanh above."""
    return 0.5 * (1.0 + _gelu_tanh(x)) + _gelu_approx_second(x)


def _gelu_approx_second(x):
    t = _gelu_tanh(x)
    with np.errstate(over="ignore", invalid="ignore"):
        term = 0.5 * x * (1.0 - t * t) * _GELU_C * (1.0 + 3.0 * _GELU_A * x * x)
    return np.where(1.0 - t * t == 0.0, 0.0, term)


def gelu_approx_scale(x):
    """The operands' size: |x| / 2 (1 + |t|), the product whose 1 + t cancels for negative x."""
    return 0.5 * np.abs(x) * (1.0 + np.abs(_gelu_tanh(x)))


def gelu_approx_grad_scale(x):
    """(1 + |t|) / 2 + |the second term|: 1 + t cancels, and so do the two terms, for negative x."""
    return 0.5 * (1.0 + np.abs(_gelu_tanh(x))) + np.abs(_gelu_approx_second(x))


def gelu_exact_grad_scale(x):
    """|Phi(x)| + |x phi(x)|: they cancel for negative x."""
    return np.abs(0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2.0))) + np.abs(x * np.exp(-0.5 * x * x)) / math.sqrt(
        2.0 * math.pi)


def silu(x):
    """x sigmoid(x)."""
    return x * sigmoid(x)


def silu_grad(x):
    """sigmoid(x) + x sigmoid(x) (1 - sigmoid(x))."""
    return sigmoid(x) + x * sigmoid_grad(x)


def silu_grad_scale(x):
    """|sigmoid(x)| + |x sigmoid'(x)|: they cancel near the derivative's zero and for negative x."""
    return sigmoid(x) + np.abs(x * sigmoid_grad(x))


def soft_sign(x):
    """x / (|x| + 1)."""
    return x / (np.abs(x) + 1.0)


def soft_sign_grad(x):
    return 1.0 / (np.abs(x) + 1.0) ** 2


def tanh_grad(x):
    return 1.0 - np.tanh(x) ** 2


def mish(x):
    """x tanh(softplus(x))."""
    return x * np.tanh(softplus(x))


def _sech2_softplus(x):
    """1 - tanh^2(softplus(x)) as 1 / cosh^2 (no cancellation at 1's scale; 0 once cosh overflows)."""
    with np.errstate(over="ignore"):
        return 1.0 / np.cosh(softplus(x)) ** 2


def mish_grad(x):
    """tanh(softplus(x)) + x sigmoid(x) (1 - tanh^2(softplus(x))): softplus' = sigmoid."""
    return np.tanh(softplus(x)) + x * sigmoid(x) * _sech2_softplus(x)


def mish_grad_scale(x):
    """|tanh(softplus(x))| + |x| sigmoid(x) (1 + tanh^2): the terms cancel near the derivative's zero, and
    1 - tanh^2 cancels at 1's scale for positive x."""
    t = np.tanh(softplus(x))
    return np.abs(t) + np.abs(x) * sigmoid(x) * (1.0 + t * t)


def squareplus(x, b=4.0):
    """(x + sqrt(x^2 + b)) / 2 (Barron 2021)."""
    return 0.5 * (x + np.sqrt(x * x + b))


def squareplus_grad(x, b=4.0):
    """(1 + x / sqrt(x^2 + b)) / 2."""
    return 0.5 * (1.0 + x / np.sqrt(x * x + b))


def squareplus_scale(x, b=4.0):
    """(|x| + sqrt(x^2 + b)) / 2: x + sqrt(...) cancels for negative x."""
    return 0.5 * (np.abs(x) + np.sqrt(x * x + b))


def squareplus_grad_scale(x, b=4.0):
    """(1 + |x| / sqrt(x^2 + b)) / 2: 1 + x / sqrt(...) cancels for negative x."""
    return 0.5 * (1.0 + np.abs(x) / np.sqrt(x * x + b))


def sparse_plus(x):
    """0 for x <= -1, (x + 1)^2 / 4 on (-1, 1), x for x >= 1."""
    return np.where(x <= -1, 0.0, np.where(x >= 1, x, (x + 1.0) ** 2 / 4.0))


def sparse_plus_grad(x):
    """0 for x <= -1, (x + 1) / 2 on (-1, 1), 1 for x >= 1 (continuous: 0 and 1 at the switch points)."""
    return np.where(x <= -1, 0.0, np.where(x >= 1, 1.0, (x + 1.0) / 2.0))


def sparse_sigmoid(x):
    """0 for x <= -1, (x + 1) / 2 on (-1, 1), 1 for x >= 1."""
    return np.where(x <= -1, 0.0, np.where(x >= 1, 1.0, (x + 1.0) / 2.0))


def sparse_sigmoid_grad(x):
    """1/2 on (-1, 1), 0 outside; at ±1 (kinks) any value between the one-sided derivatives 0 and 1/2 is a
    subgradient: the contracts judge those points apart."""
    return np.where((x > -1) & (x < 1), 0.5, 0.0)
