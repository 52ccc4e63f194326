"""NumPy float64 reference of ADOPT (optax.contrib.scale_by_adopt / adopt), written from the paper the docstring
cites (Taniguchi et al., ADOPT: Modified Adam Can Converge with Any beta2 with the Optimal Rate, 2024,
Algorithm 1 and its clipped variant), not from Optax's code:

    v_0 = g_0**2, m_0 = 0, no step on the first call;
    n_t = clip(g_t / max(sqrt(v_{t-1}), eps), c_t),   c_t = clip_value_fn(t) (t**0.25 by default),
    m_t = b1 m_{t-1} + (1 - b1) n_t,                  the update is m_t
    v_t = b2 v_{t-1} + (1 - b2) g_t**2               (after n_t: the normaliser does not see g_t).

With nesterov, the update looks one step ahead: b1 m_t + (1 - b1) n_t (Dozat's Nesterov form of Adam), the
docstring's "Nesterov momentum". The step index t counts calls from 0.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def adopt(grads, b1: float, b2: float, eps: float, nesterov: bool, clip_value_fn: Callable[[int], float] | None):
    """The updates (before the learning rate) for a sequence of gradients; clip_value_fn None: no clipping."""
    g0 = np.asarray(grads[0], np.float64)
    v, m, out = g0 * g0, np.zeros_like(g0), [np.zeros_like(g0)]
    for t, g in enumerate(grads[1:], 1):
        g = np.asarray(g, np.float64)
        n = g / np.maximum(np.sqrt(v), eps)
        if clip_value_fn is not None:
            c = clip_value_fn(t)
            n = np.clip(n, -c, c)
        m = b1 * m + (1 - b1) * n
        out.append(b1 * m + (1 - b1) * n if nesterov else m)
        v = b2 * v + (1 - b2) * g * g
    return out
