"""NumPy float64 reference of Sophia (optax.contrib.sophia), written from its docstring and the paper it cites
(Liu et al. 2023, "Sophia: A Scalable Stochastic Second-order Optimizer for Language Model Pre-training",
Algorithm 3), not from Optax's code. With h the EMA of Hessian-diagonal estimates and step t = 1, 2, ...:

    m_t = b1 m_{t-1} + (1 - b1) g_t
    every update_interval steps: h <- b2 h + (1 - b2) h_hat (h_hat: Hutchinson's estimate, u * (H u) for a
                                 random sign vector u: H's diagonal exactly when H is diagonal, as u_i**2 = 1)
    update_t = -lr (clip(m_hat_t / max(gamma h, eps), clip_threshold) + weight_decay x_t)
               (weight decay only where weight_decay_mask holds)

Optax's docstring is silent on three points where Optax (built on levanter's implementation "with some
changes", says its module docstring) departs from Algorithm 3; the reference takes Optax's choices, named
here so a reader can judge them (a finding, not a derivation): the paper divides the raw momentum m_t, Optax
its bias-corrected m_hat_t = m_t / (1 - b1**t); the paper refreshes h on steps t = 1, k + 1, 2k + 1, ...
before using it, Optax uses h as it was before the step and refreshes it after (so the first step divides
by max(0, eps) = eps alone); the paper clips at 1 (its scale folded into gamma), Optax at clip_threshold.
The weight decay is decoupled in both, lr weight_decay x.
"""

from __future__ import annotations

import numpy as np


def sophia(grads, params, hessian_diag, learning_rate: float, b1: float, b2: float, eps: float, weight_decay: float,
           decay_mask, gamma: float, clip_threshold: float, update_interval: int):
    """Every step's update and the clipped fraction's complement (the win rate: elements not clipped), given
    the gradients and params each step saw (flat float64) and the exact Hessian diagonal; decay_mask: flat
    booleans."""
    m = h = np.zeros_like(grads[0])
    out = []
    for k, (g, x) in enumerate(zip(grads, params)):
        t = k + 1
        m = b1 * m + (1 - b1) * g
        ratio = (m / (1 - b1**t)) / np.maximum(gamma * h, eps)
        clipped = np.clip(ratio, -clip_threshold, clip_threshold)
        out.append((-learning_rate * (clipped + weight_decay * np.where(decay_mask, x, 0.0)),
                    float(np.mean(np.abs(ratio) < clip_threshold))))
        if k % update_interval == 0:
            h = b2 * h + (1 - b2) * hessian_diag
    return out
