"""Running an optimizer for a few steps, cheaply: one jitted function per (callable, static options, tree
layout), its numeric hyperparameters traced arrays batched with jax.vmap, the steps a jax.lax.scan.

Shared by the optimizers family's contracts. A run starts from fixed params, applies each step's updates
(so weight decay sees the params move) and returns, for every variant and step, the updates, the state
after the step and the params the step saw, as NumPy.
"""

from __future__ import annotations

import functools
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from harness.contract import stack_lacks

F32 = np.float32
LAYOUT = {"b": (3,), "w": (2, 2)}  # a bias and a kernel: two leaves, two ranks
STEPS = 6  # enough for bias correction, the moments' decay and a sign change of momentum to matter


class Run(NamedTuple):
    """Every variant's steps: leaves with leading axes [variant, step]."""
    updates: dict
    states: object
    params: dict  # the params each step was given (before its update was applied)
    init: object  # the state init returned (leading axis [variant])


def gradients(seed: int, steps: int = STEPS, dtype=F32) -> dict:
    """Standard-normal gradients for LAYOUT, leaves stacked on a leading step axis (mixed signs, so the
    first moment changes sign and partly cancels)."""
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal((steps, *s)).astype(dtype) for k, s in LAYOUT.items()}


def params(dtype=F32) -> dict:
    """The starting params: fixed, nonzero, of both signs (weight decay acts on them)."""
    return {"b": np.array([0.5, -1.25, 2.0], dtype), "w": np.array([[1.5, -0.75], [0.25, -2.0]], dtype)}


def batched(variants: list[dict]) -> dict:
    """[{name: value}] -> {name: float32 array [variant]}: the hyperparameters as traced, vmapped arguments."""
    return {name: np.array([v[name] for v in variants], F32) for name in variants[0]}


def _steps(make: Callable[..., optax.GradientTransformation]) -> Callable:
    """(hyper, params, grads [step]) -> (updates, states, params seen, init state) for one variant."""
    def one(hyper, start, grads):
        tx = make(**hyper)

        def step(carry, g):
            p, state = carry
            updates, state = tx.update(g, state, p)
            return (optax.apply_updates(p, updates), state), (updates, state, p)

        state = tx.init(start)
        _, out = jax.lax.scan(step, (start, state), grads)
        return (*out, state)
    return jax.vmap(one, in_axes=(0, None, None))


class Batch:
    """A module's runs, compiled and run together as one jitted program on first use: one trace, lowering
    and compilation-cache load for all of them (the fixed cost of a jit, paid per module, not per run)."""

    def __init__(self):
        self._makes: dict[str, Callable] = {}
        self._inputs: dict[str, tuple] = {}
        self._runs: dict[str, Run] | None = None
        self._lacking: dict[str, str] = {}  # a run whose optimizer this stack lacks -> why

    def add(self, name: str, make: Callable[..., optax.GradientTransformation], variants: list[dict],
            start: dict, grads: dict) -> Callable[[], Run]:
        """Declare a run of make(**hyper) over the variants (traced float32 hyperparameters); returns the
        function that gives its Run. make() without arguments: variants=[] (Python-float hyperparameters).
        A run declared after the program ran starts a new program for the runs declared since."""
        if self._runs is not None and name not in self._runs:
            self._makes, self._inputs, self._done = {}, {}, {**getattr(self, "_done", {}), **self._runs}
            self._runs = None
        hyper = batched(variants) if variants else {}
        self._makes[name] = make if variants else (lambda unused, make=make: make())
        self._inputs[name] = (hyper or {"unused": np.zeros(1, F32)}, start, grads)
        return lambda: self.run(name)

    def run(self, name: str) -> Run:
        if name in getattr(self, "_done", {}):
            return self._done[name]
        if self._runs is None:
            makes, lacking = stack_lacks.sort_buildable(
                {n: functools.partial(self._probe, n) for n in self._makes})  # a run this stack lacks: not here
            self._lacking.update(lacking)
            makes = {n: self._makes[n] for n in makes}
            inputs = {n: self._inputs[n] for n in makes}
            program = jax.jit(lambda inputs: {n: _steps(makes[n])(*inputs[n]) for n in makes})
            self._runs = {n: Run(*out) for n, out in jax.device_get(program(inputs)).items()}
        if name in self._lacking:
            stack_lacks.skip(self._lacking[name])
        return self._runs[name]

    def _probe(self, name: str):
        """make() at the first variant's hyperparameters, as plain numbers: does this stack build it at all."""
        hyper = self._inputs[name][0]
        return self._makes[name](**{k: v[0].item() for k, v in hyper.items()})


# The runs of every optimizers contract module collected in this process: one program for all (a module
# declares its runs at import, pytest imports every module before the first test runs).
RUNS = Batch()


def shapes_after(tx: optax.GradientTransformation, params, steps: int = 2):
    """The state after init and after `steps` updates on gradients of ones, and the last updates, by shape and
    dtype only (jax.eval_shape: nothing is compiled or run), as zeros of those shapes and dtypes for
    check.layout."""
    def init_and_steps(params):
        state = state0 = tx.init(params)
        grads = jax.tree.map(jnp.ones_like, params)
        for _ in range(steps):
            updates, state = tx.update(grads, state, params)
        return state0, state, updates
    return jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), jax.eval_shape(init_and_steps, params))


def rule_state(state):
    """The update rule's own state inside an alias's chain state (the first named tuple with a count)."""
    if "count" in getattr(state, "_fields", ()):
        return state
    if isinstance(state, tuple):
        for part in state:
            found = rule_state(part)
            if found is not None:
                return found
    return None


def at(tree, *index):
    """The tree's leaves at leading index (variant, step)."""
    return jax.tree.map(lambda leaf: leaf[index], tree)


def f64(x) -> np.ndarray:
    return np.asarray(x, np.float64)
