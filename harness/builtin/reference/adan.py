"""NumPy float64 reference of Adan (optax.adan / scale_by_adan): Xie et al. 2022, "Adan: Adaptive Nesterov
Momentum Algorithm for Faster Optimizing Deep Models", Algorithm 1, one step of one leaf.

Convention (the decision): the paper writes its decays small, m_k = (1 - beta1) m_{k-1} + beta1 g_k with
beta = (0.02, 0.08, 0.01); Optax's defaults (b1, b2, b3) = (0.98, 0.92, 0.99) are 1 - those, the convention
of the authors' released code (sail-sg/Adan, where "the beta in the paper is 1 - beta in the code", their
issue #4) and of Optax's own moment updates. Optax's docstring writes the paper's recursions with b in place
of beta, which at the defaults would keep 2% of the past: the defaults rule that reading out. So this is
Algorithm 1 with beta_i = 1 - b_i:

  d_t = g_t - g_{t-1}                     (0 on the first step: no earlier gradient, as in the authors' code)
  m_t = b1 m + (1 - b1) g_t
  v_t = b2 v + (1 - b2) d_t
  n_t = b3 n + (1 - b3) (g_t + w d_t)^2
  u_t = (m_t / (1 - b1^t) + w v_t / (1 - b2^t)) / (sqrt(n_t / (1 - b3^t) + eps_root) + eps)

with w the weight of the gradient difference, the paper's (1 - beta2), which is b2 here. Optax (0.2.6 and
0.2.8) uses w = 1 - b2 (0.08 where the paper has 0.92 at the defaults; optax PR #1715, open, fixes it):
``difference_weight`` takes either, and the contract pins which one the library computes as a golden fact.

Departures from Algorithm 1 that Optax documents or shares with the authors' code, followed here: the
moments start at zero and are bias-corrected (the paper starts m_0 = g_0, n_0 = g_0^2 uncorrected), eps_root
sits inside the square root and eps outside (optax.adan's docstring). The learning rate and the weight decay
are the alias's (-lr (u + weight_decay params), decoupled: see adam_family.descent); the docstring's
proximal (theta - lr u) / (1 + lr weight_decay) is not what the library computes (a golden fact too).
Not transcribed from Optax's code.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class AdanMoments(NamedTuple):
    """A step's emitted update and the state kept after it (the gradient is kept for the next difference)."""
    update: np.ndarray
    m: np.ndarray
    v: np.ndarray
    n: np.ndarray
    g: np.ndarray


def paper_weight(b2: float) -> float:
    """The gradient difference's weight of Algorithm 1 (1 - beta2) in the defaults' convention: b2."""
    return b2


def optax_weight(b2: float) -> float:
    """The weight Optax 0.2.6 and 0.2.8 use: 1 - b2 (optax PR #1715)."""
    return 1.0 - b2


def _difference(g, previous_g, t):
    return g - previous_g if t > 1 else np.zeros_like(g)


def adan(g, previous_g, m, v, n, t, *, b1, b2, b3, eps, eps_root, difference_weight) -> AdanMoments:
    """One step of Algorithm 1 (module docstring) from the kept state (m, v, n, previous gradient)."""
    d, w = _difference(g, previous_g, t), difference_weight
    m = b1 * m + (1.0 - b1) * g
    v = b2 * v + (1.0 - b2) * d
    n = b3 * n + (1.0 - b3) * (g + w * d) ** 2
    direction = m / (1.0 - b1**t) + w * v / (1.0 - b2**t)
    return AdanMoments(direction / (np.sqrt(n / (1.0 - b3**t) + eps_root) + eps), m, v, n, g)


def adan_magnitudes(g, previous_g, m, v, n, t, *, b1, b2, b3, eps, eps_root, difference_weight) -> AdanMoments:
    """The same step over its terms' magnitudes (|g|, |g| + |g_prev| for the difference, |m|, |v|): where a
    float32 evaluation's rounding error is measured, since g - g_prev, g + w d and m_hat + w v_hat may cancel.
    The update's denominator is the true one (a magnitude there would shrink the scale)."""
    d, w = (np.abs(g) + np.abs(previous_g) if t > 1 else np.zeros_like(g)), difference_weight
    m = b1 * np.abs(m) + (1.0 - b1) * np.abs(g)
    v = b2 * np.abs(v) + (1.0 - b2) * d
    n_bound = b3 * n + (1.0 - b3) * (np.abs(g) + w * d) ** 2
    n_true = b3 * n + (1.0 - b3) * (g + w * _difference(g, previous_g, t)) ** 2
    direction = m / (1.0 - b1**t) + w * v / (1.0 - b2**t)
    update = direction / (np.sqrt(n_true / (1.0 - b3**t) + eps_root) + eps)
    return AdanMoments(update, m, v, n_bound, np.abs(g))
