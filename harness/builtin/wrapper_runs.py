"""What the wrappers family's contracts share: a two-leaf parameter tree, the gradients of each step, the
optimizers driven through Flax's wrappers, and the same steps written with Optax alone (tx.init, tx.update,
optax.apply_updates), the other library path each wrapper is related to. Optax and Flax are imported when a
check runs, so a patched or mutated library is seen and an API change fails checks, not the collection."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

STEPS = 4  # updates per run: MultiSteps(k=2) emits twice, adamw's bias correction still moves
TXS = ("adamw", "multisteps", "inject_sgd")  # the optimizers each wrapper drives


def params() -> dict:
    """The starting parameters: a (2, 3) kernel and a (3,) bias, float32."""
    import jax.numpy as jnp

    return {"kernel": jnp.asarray([[0.5, -1.0, 2.0], [0.25, 0.0, -3.0]], jnp.float32),
            "bias": jnp.asarray([0.1, -0.2, 0.3], jnp.float32)}


def grads(step: int) -> dict:
    """The gradients of step `step`: fixed float32 values of both signs and several scales."""
    import jax.numpy as jnp

    rng = np.random.default_rng(100 + step)
    return {"kernel": jnp.asarray(rng.standard_normal((2, 3)) * [1.0, 0.1, 3.0], jnp.float32),
            "bias": jnp.asarray(rng.standard_normal(3), jnp.float32)}


@functools.cache
def tx(name: str):
    """One object per optimizer (the jitted wrappers key their caches on it): adamw (reads the params for its
    decay), MultiSteps(adam, k=2) (a counter and an accumulator in its state), inject_hyperparams(sgd) with
    momentum (hyperparameters held in the state)."""
    import optax

    if name == "adamw":
        return optax.adamw(0.1, b1=0.8, weight_decay=0.05)
    if name == "multisteps":
        return optax.MultiSteps(optax.adam(0.1), every_k_schedule=2)
    if name == "inject_sgd":
        return optax.inject_hyperparams(optax.sgd)(learning_rate=0.1, momentum=0.9)
    raise ValueError(name)


@dataclasses.dataclass(frozen=True)
class Run:
    """Where a run ends: the parameters, the optimizer state, and each step's updates."""

    params: dict
    opt_state: object
    updates: list


def optax_alone(tx_, start: dict, steps: int = STEPS, grads_of=grads, **extra) -> Run:
    """The steps written with Optax alone: init, then update and apply_updates per gradient (`grads_of(step)`);
    `extra` (name -> one value per step) goes to tx.update as keyword arguments."""
    import optax

    state, p, updates = tx_.init(start), start, []
    for step in range(steps):
        u, state = tx_.update(grads_of(step), state, p, **{k: v[step] for k, v in extra.items()})
        p = optax.apply_updates(p, u)
        updates.append(u)
    return Run(p, state, updates)


def leaves_of(tree, is_leaf) -> dict:
    """Leaves by path name ('opt_state/0/mu/kernel'), stopping at `is_leaf`."""
    from harness.contract import trees

    return trees.leaves(tree, is_leaf=is_leaf)


def same(check, label: str, tree, other) -> None:
    """Two pytrees alike in layout (paths, dtypes, shapes) and bit for bit in every leaf."""
    __tracebackhide__ = True
    from harness.contract import trees

    check.exact(f"{label}: layout", trees.layout(tree), trees.layout(other))
    theirs = trees.leaves(other)
    for path, leaf in trees.leaves(tree).items():
        check.identical(f"{label}: {path}", np.asarray(leaf), np.asarray(theirs[path]))


def layout(tree) -> list:
    """[path, dtype, shape] per leaf (harness.contract.trees.layout): a pytree's structure as a golden fact."""
    from harness.contract import trees

    return trees.layout(tree)


def signature(fn) -> list:
    """[name, kind, default] per parameter of fn as inspect reads it (following functools.wraps): which calls
    work (a parameter made positional-only or keyword-only) and what is left out (defaults)."""
    import inspect

    rows = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is p.empty:
            default = "-" if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) else "required"
        else:
            default = p.default.__qualname__ if isinstance(p.default, type) else repr(p.default)
        rows.append([p.name, p.kind.name, default])
    return rows
