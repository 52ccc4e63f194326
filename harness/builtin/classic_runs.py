"""Runs of an optimizer over a few steps for the classic-optimizer contracts (test_optimizers_classic,
test_optimizers_adaptive): one jitted function per (optimizer variant, tree layout), hyperparameters traced.

Booleans and None/not-None choices shape the program and are fixed per variant; numeric hyperparameters
are traced arguments, so the contracts' values reuse one compile. Params stay fixed over the steps (the
references read them as constants).
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

F32 = np.float32
LAYOUT = {"b": (3,), "w": (2, 3)}  # a vector and a matrix (factored / per-row-and-column rules see both)
STEPS = 6  # enough for bias correction, decay and momentum to matter


@dataclasses.dataclass(frozen=True)
class Run:
    """What init returned, then the updates and the state after every step (NumPy)."""

    init: object
    updates: list
    states: list


def runner(make, resume=None):
    """fn(grads_seq, params, *hyper) -> Run, for tx = make(*hyper): init, then one update per gradient tree,
    all inside one jitted function. resume(state) -> state: where the steps start from instead of init's
    state (a run resumed at a later step count)."""
    def run(grads_seq, params, hyper):
        tx = make(*hyper)
        state = init = tx.init(params)
        state = state if resume is None else resume(state)
        updates, states = [], []
        for g in grads_seq:
            u, state = tx.update(g, state, params)
            updates.append(u)
            states.append(state)
        return init, updates, states

    jitted = jax.jit(run)
    return lambda seq, params, *hyper: Run(*jax.device_get(jitted(seq, params, tuple(hyper))))


def grads(seed: int, n: int = STEPS, dtype=F32, scale: float = 1.0) -> list[dict]:
    """n gradient trees of standard normal values (times scale) in the layout."""
    rng = np.random.default_rng(seed)
    return [{k: (scale * rng.standard_normal(s)).astype(dtype) for k, s in LAYOUT.items()} for _ in range(n)]


def params(seed: int, dtype=F32) -> dict:
    """A params tree of normal values in the layout."""
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal(s).astype(dtype) for k, s in LAYOUT.items()}


def leaf(seq: list[dict], key: str) -> list[np.ndarray]:
    """One leaf's values over the steps, as float64."""
    return [np.asarray(x[key], np.float64) for x in seq]


def f32(x: float) -> float:
    """A hyperparameter as the library holds it (a traced float32), as a float64."""
    return float(F32(x))
