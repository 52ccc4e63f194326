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
    all inside one jitted function whose steps are a lax.scan (the update is traced once, not once a step).
    resume(state) -> state: where the steps start from instead of init's state (a run resumed at a later
    step count)."""
    def run(stacked_grads, params, hyper):
        tx = make(*hyper)
        init = tx.init(params)

        def step(state, g):
            u, state = tx.update(g, state, params)
            return state, (u, state)

        _, (updates, states) = jax.lax.scan(step, init if resume is None else resume(init), stacked_grads)
        return init, updates, states

    jitted = jax.jit(run)

    def call(seq, params, *hyper):
        stacked = jax.tree.map(lambda *xs: np.stack(xs), *seq)
        init, updates, states = jax.device_get(jitted(stacked, params, tuple(hyper)))
        return Run(init, _unstack(updates, len(seq)), _unstack(states, len(seq)))

    return call


def _unstack(tree, n: int) -> list:
    """A tree of arrays stacked along a first axis of n steps -> n trees."""
    return [jax.tree.map(lambda x, i=i: x[i], tree) for i in range(n)]


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


class Stepwise:
    """Per-step reference comparisons gathered by label and made once per label over all steps (stacked): one
    comparison of six steps instead of six, since each comparison has a fixed cost. ``flush()`` makes them;
    the worst element's index names its step."""

    def __init__(self, check):
        self.check = check
        self.rows: dict[str, list] = {}

    def reference(self, label: str, value, expected, *, scale=None, why: str | None = None) -> None:
        self.rows.setdefault(label, []).append((np.asarray(value), np.asarray(expected, np.float64), scale, why))

    def flush(self) -> None:
        for label, rows in self.rows.items():
            value = np.stack([r[0] for r in rows])
            expected = np.stack([r[1] for r in rows])
            why = rows[0][3]
            if why is None:
                self.check.reference(f"{label} (steps 1-{len(rows)})", value, expected)
            else:
                scale = np.stack([np.broadcast_to(r[2], r[1].shape) for r in rows])
                self.check.reference(f"{label} (steps 1-{len(rows)})", value, expected, scale=scale, why=why)
        self.rows.clear()


KEYS = sorted(LAYOUT)
TRACE_WHY = "a momentum trace sums steps of either sign: ulps at the sum of their magnitudes"


def golden_run(check, key, run, scales=None, state_scales=None, why=TRACE_WHY):
    """The state's layout after init, the updates and the final state (values and layout) golden; scales
    ({"step/leaf": magnitude}, the state's by its leaf path): updates that sum terms of either sign, held to
    the golden ulps at their operands' magnitude (a recompiled kernel rounds those, not the cancelled sum)."""
    check.layout(f"{key}/state_after_init", run.init)
    n = len(run.updates)
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *run.updates)  # one golden value per leaf over the steps
    scales = None if scales is None else {k: np.stack([scales[f"{t}/{k}"] for t in range(n)]) for k in KEYS}
    check.golden_tree(f"{key}/updates", stacked, scales=scales, why=why if scales else None)
    check.golden_tree(f"{key}/state_after_steps", run.states[-1], scales=state_scales,
                      why=why if state_scales else None)
