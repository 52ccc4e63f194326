"""NumPy float64 references of the step-size rules and wrappers: Polyak's step (optax.polyak_sgd /
scale_by_polyak; Loizou et al. 2021, sps+ of Garrigos et al. 2023), Lookahead (optax.lookahead; Zhang et al.
2019, Algorithm 1) and optimistic gradient descent (optax.optimistic_gradient_descent), written from the
docstrings' formulas and the papers, not from Optax's code.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def polyak_step(value: float, grad, f_min: float, max_learning_rate: float, eps: float, variant: str) -> float:
    """min((f(x) - f*) / (||g||**2 + eps), gamma_max); sps+ takes the gap's non-negative part (f - f*)_+."""
    gap = value - f_min
    if variant == "sps+":
        gap = max(gap, 0.0)
    g = np.asarray(grad, np.float64)
    return min(gap / (float(g @ g) + eps), max_learning_rate)


def polyak_sgd_step(value: float, grad, scaling: float, f_min: float, max_learning_rate: float, eps: float,
                    variant: str, *, as_documented: bool) -> float:
    """The factor polyak_sgd(scaling=s) multiplies -g by. Its docstring: s min(gap / (||g||**2 + eps), gamma_max)
    (as_documented). What Optax 0.2.6 and 0.2.8 compute instead: the chain sgd(learning_rate=s) then
    scale_by_polyak takes Polyak's step on u = -s g, whose squared norm is s**2 ||g||**2, so
    s min(gap / (s**2 ||g||**2 + eps), gamma_max) (not as_documented). Both agree at s = 1; the contract
    pins which one the library computes as a golden fact and holds it to that one."""
    g = np.asarray(grad, np.float64)
    norm_scale = 1.0 if as_documented else scaling**2
    return scaling * polyak_step(value, np.sqrt(norm_scale) * g, f_min, max_learning_rate, eps, variant)


def lookahead(params0, grads, inner_step: Callable[[np.ndarray, object], tuple[np.ndarray, object]], inner_state0,
              sync_period: int, slow_step_size: float, reset_state: bool):
    """(fast, slow) after each step: the fast weights take the inner optimizer's step (inner_step(g, state) ->
    (update, state)); every sync_period-th step the slow weights move slow_step_size of the way to the fast ones
    and the fast weights restart from them (with the inner optimizer's initial state when reset_state)."""
    fast = slow = np.asarray(params0, np.float64)
    state, out = inner_state0, []
    for t, g in enumerate(grads, 1):
        update, state = inner_step(np.asarray(g, np.float64), state)
        fast = fast + update
        if t % sync_period == 0:
            slow = slow + slow_step_size * (fast - slow)
            fast = slow
            if reset_state:
                state = inner_state0
        out.append((fast, slow))
    return out


def optimistic_updates(grads, learning_rate: float, alpha: float, beta: float):
    """-lr ((alpha + beta) g_t - beta g_{t-1}); the docstring leaves g_{-1} open: optax issue #1082 settled it as
    the current gradient, so the first update is -lr alpha g_0."""
    previous, out = None, []
    for g in grads:
        g = np.asarray(g, np.float64)
        previous = g if previous is None else previous
        out.append(-learning_rate * ((alpha + beta) * g - beta * previous))
        previous = g
    return out
