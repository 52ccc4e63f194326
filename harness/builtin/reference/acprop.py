"""NumPy float64 reference of ACProp (optax.contrib.scale_by_acprop / acprop), written from optax.contrib.acprop's
docstring and the paper it cites (Zhuang et al., Momentum Centering and Asynchronous Update for Adaptive Gradient
Methods, NeurIPS 2021), not from Optax's code:

    m_t = b1 m_{t-1} + (1 - b1) g_t,
    s_t = b2 s_{t-1} + (1 - b2) (g_t - m)**2 + eps_root,     s_hat_t = s_t / (1 - b2**t),
    u_t = g_t / (sqrt(s_hat_{t-1}) + eps)                      (asynchronous: the denominator is the previous
                                                                step's; the numerator the raw gradient, as the
                                                                docstring writes it).

Two details follow the baseline (optax 0.2.6), not the documents; both are held as golden facts in effect:

* the centring term. The docstring and the paper write (g_t - m_t)**2, the momentum after this step's
  gradient; Optax centres on the momentum before it, (g_t - m_{t-1})**2 (this reference, written first with
  m_t, disagreed with the baseline's stored s from the first step on, by up to 4x: g**2 against (b1 g)**2 at
  step 1, and so with every update from step 2 on). ``m`` above is m_{t-1}.
* the first step. s_hat_0 = 0 / (1 - b2**0) is undefined in the docstring; Optax takes s_hat_0 = 1, so the
  first update is g_1 / (1 + eps).
"""

from __future__ import annotations

import numpy as np

from harness.builtin.reference.adam_family import Moments


def acprop(g, mu, nu, t, *, b1, b2, eps, eps_root) -> Moments:
    """One step: the update and the new (mu, nu), from the state kept before step t (t = 1 for the first)."""
    nu_hat = np.ones_like(nu) if t == 1 else nu / (1.0 - b2 ** (t - 1))
    update = g / (np.sqrt(nu_hat) + eps)
    new_mu = b1 * mu + (1.0 - b1) * g
    new_nu = b2 * nu + (1.0 - b2) * (g - mu) ** 2 + eps_root
    return Moments(update, new_mu, new_nu)
