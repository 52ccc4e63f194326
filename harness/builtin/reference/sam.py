"""NumPy float64 reference of SAM (optax.contrib.sam), written from its docstring and the paper it cites (Foret
et al. 2021, "Sharpness-Aware Minimization for Efficiently Improving Generalization", Algorithm 1), not from
Optax's code.

The paper's step: ascend to w_adv = w + rho g / ||g|| (g at w), then descend from w with the gradient taken
at w_adv. The docstring generalises it: sync_period - 1 ascent steps by an adversarial optimizer (the
negation of its update: its update descends), then one step of the outer optimizer from the params before
the ascent, on the gradient at the last adversarial point. The adversarial optimizer's state restarts
after each outer step when reset_state (otherwise it carries over; it does not see the outer step's
gradient). Transparent mode (opaque_mode=False) spends one call per step, emitting the adversarial steps
and then the outer step as cache - params + outer update (params land on cache + outer update); opaque
mode runs the ascent inside one call, asking grad_fn for each adversarial point's gradient.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np


class Momentum(NamedTuple):
    """sgd(learning_rate, momentum) on flat float64 vectors: trace = g + momentum trace, update = -lr trace;
    normalized: g / ||g|| first (optax.contrib.normalize, the paper's ascent direction)."""
    learning_rate: float
    momentum: float
    normalized: bool = False

    def step(self, g, trace):
        if self.normalized:
            g = g / np.linalg.norm(g)
        trace = g + self.momentum * trace
        return -self.learning_rate * trace, trace


def transparent(grads, params, outer: Momentum, adversary: Momentum, sync_period: int, reset_state: bool):
    """Every call's update, given the gradient each call got and the params it was given (flat float64)."""
    zero = np.zeros_like(grads[0])
    outer_trace, adv_trace, cache, out = zero, zero, params[0], []
    for k, (g, x) in enumerate(zip(grads, params)):
        phase = k % sync_period
        if phase == 0:
            cache = x
        if phase < sync_period - 1:
            update, adv_trace = adversary.step(g, adv_trace)
            out.append(-update)
        else:
            update, outer_trace = outer.step(g, outer_trace)
            out.append(cache - x + update)
            adv_trace = zero if reset_state else adv_trace
    return out


def opaque(grads, params, grad_at: Callable[[np.ndarray], np.ndarray], outer: Momentum, adversary: Momentum,
           sync_period: int, reset_state: bool):
    """Every call's update (an outer step), given the gradient each call got and the params it was given;
    grad_at(w): the objective's gradient at an adversarial point (what grad_fn returns)."""
    zero = np.zeros_like(grads[0])
    outer_trace, adv_trace, out = zero, zero, []
    for g, x in zip(grads, params):
        w = x
        for _ in range(sync_period - 1):
            update, adv_trace = adversary.step(g, adv_trace)
            w = w - update
            g = grad_at(w)
        adv_trace = zero if reset_state else adv_trace
        update, outer_trace = outer.step(g, outer_trace)
        out.append(update)
    return out
