"""NumPy float64 references of Schedule-Free learning (optax.contrib.schedule_free and its AdamW / SGD
shortcuts), written from the docstrings and the paper they cite (Defazio et al., The Road Less Scheduled,
2024, Algorithm 1 and its reference implementation, facebookresearch/schedule_free), not from Optax's code.

    z_{t+1} = z_t + base_update_t(grad f(y_t), y_t)          (the base optimizer's step, -lr * ... included)
    x_{t+1} = (1 - c_{t+1}) x_t + c_{t+1} z_{t+1},   c_{t+1} = w_t / sum_{i<=t} w_i,  w_t = (max_{i<=t} lr_i)**p
    y_{t+1} = (1 - b1) z_{t+1} + b1 x_{t+1}                   (the params the optimizer hands back)

with x_1 = z_1 = y_1 = the initial params, p = weight_lr_power (the paper weights by lr**2; the reference
implementation by the largest lr so far, the same under a warmup), and evaluation at x (schedule_free_eval_params).
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def rms_direction(grads, b2: float, eps: float):
    """AdamW's direction without momentum (b1 = 0): g_t / (sqrt(v_t / (1 - b2**t)) + eps), v_t = b2 v + (1 - b2) g**2,
    eps outside the square root (Kingma & Ba, Algorithm 1). Returns one direction per gradient."""
    v, out = np.zeros_like(np.asarray(grads[0], np.float64)), []
    for t, g in enumerate(grads, 1):
        g = np.asarray(g, np.float64)
        v = b2 * v + (1 - b2) * g * g
        out.append(g / (np.sqrt(v / (1 - b2 ** t)) + eps))
    return out


def schedule_free(y0, grads, base_update: Callable[[int, np.ndarray, np.ndarray], np.ndarray], weight_lrs,
                  b1: float, weight_lr_power: float):
    """The iterates after each step: lists of (y, z, x). base_update(t, g_t, y_t) is the base optimizer's
    step for the t-th gradient (t from 0); weight_lrs[t] the learning rate that weighs step t's average."""
    y = z = x = np.asarray(y0, np.float64)
    weight_sum, lr_max, out = 0.0, 0.0, []
    for t, g in enumerate(grads):
        z = z + base_update(t, np.asarray(g, np.float64), y)
        lr_max = max(lr_max, float(weight_lrs[t]))
        weight = lr_max ** weight_lr_power
        weight_sum += weight
        c = weight / weight_sum if weight_sum > 0 else 0.0
        x = (1 - c) * x + c * z
        y = (1 - b1) * z + b1 * x
        out.append((y, z, x))
    return out


def warmup_constant(peak: float, warmup_steps: int | None, count: int) -> float:
    """A linear warmup from 0 to peak over warmup_steps counts, then peak (the shortcuts' documented schedule)."""
    if warmup_steps is None:
        return peak
    return peak * min(count, warmup_steps) / warmup_steps
