"""NumPy float64 references of AdEMAMix and Simplified AdEMAMix (optax.contrib.scale_by_ademamix / ademamix,
scale_by_simplified_ademamix / simplified_ademamix), written from their docstrings and the papers they cite
(Pagliardini, Ablin & Grangier, The AdEMAMix Optimizer: Better, Faster, Older, 2024, Algorithm 1; Morwani et al.,
Connections between Schedule-Free Optimizers, AdEMAMix, and Accelerated SGD Variants, 2025), not from Optax's code.

AdEMAMix: Adam's bias-corrected fast EMA plus alpha times a slow EMA that is not bias-corrected (the paper: it
"fills itself slowly"), over Adam's denominator with eps outside and eps_root inside the root:

    m1_t = b1 m1 + (1 - b1) g,   m2_t = b3 m2 + (1 - b3) g,   nu_t = b2 nu + (1 - b2) g**2,
    u_t = (m1_t / (1 - b1**t) + alpha m2_t) / (sqrt(nu_t / (1 - b2**t) + eps_root) + eps).

b3 and alpha may be schedules (the paper's T_alpha and T_b3 warm-ups): they are taken at the number of earlier
updates (0 on the first), the caller passes their values.

Simplified AdEMAMix (Morwani et al., Algorithm 2 as optax.contrib.simplified_ademamix's docstring writes it): an
undamped momentum, no (1 - b1) factor and no bias correction, plus alpha times the gradient:

    m_t = b1 m + g,   n_t = b2 n + (1 - b2) g**2,
    u_t = (m_t + alpha g) / (sqrt(n_t / (1 - b2**t) + eps_root) + eps).
"""

from __future__ import annotations

import numpy as np

from harness.builtin.reference.adam_family import Moments


def ademamix(g, m1, m2, nu, t, *, b1, b2, b3, alpha, eps, eps_root) -> Moments:
    """One step from the state kept before step t: the update and the new m1 (mu), nu and m2 (extra)."""
    m1 = b1 * m1 + (1.0 - b1) * g
    m2 = b3 * m2 + (1.0 - b3) * g
    nu = b2 * nu + (1.0 - b2) * g * g
    update = (m1 / (1.0 - b1**t) + alpha * m2) / (np.sqrt(nu / (1.0 - b2**t) + eps_root) + eps)
    return Moments(update, m1, nu, m2)


def simplified_ademamix(g, m, n, t, *, b1, b2, alpha, eps, eps_root) -> Moments:
    """One step from the state kept before step t: the update and the new m (mu) and n (nu)."""
    m = b1 * m + g
    n = b2 * n + (1.0 - b2) * g * g
    return Moments((m + alpha * g) / (np.sqrt(n / (1.0 - b2**t) + eps_root) + eps), m, n)
