"""The compositions family's cases: the ways teams combine Optax transforms around an optimizer, each
built from its choices and trained for a few steps on one small fixed problem (test_compositions.py
judges them).

A case is one choice per factor: the optimizer (each callable harness/coverage/ledger.toml puts in
the "optimizer" area and whose entry names this family, so a new one is picked up without a hand-written case), inject_hyperparams, the
learning rate's form, MultiSteps, a mask or partition around the optimizer, weight decay before or
after it, clipping before or after it, jit or eager. Python int vs jnp step counts are levels of the
two factors that hold a count (MultiSteps' k, the decaying schedule's transition steps), so no case
carries a count choice it has no count for.

The case list covers all pairs of choices, not their product (harness.builtin.pairwise): the anchor
optimizer (optax.adam) takes an all-pairs array of the other factors, and every other optimizer the
rows in which each of their choices appears once. So every two choices meet in some case, and adding an
optimizer to the ledger adds its own cases without changing any other case's id (golden keys).

The composition, inner to outer: the optimizer (injected or not) -> masked / partition around it ->
chain(clip?, decay?, that, decay?, clip?) -> MultiSteps around the chain.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import tomllib
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

from harness.builtin import pairwise
from harness.builtin.defaults import resolve
from harness.contract import trees

LEDGER = Path(__file__).resolve().parent.parent / "coverage" / "ledger.toml"
OPTIMIZER_AREA = "optimizer"
FAMILY = "compositions"
ANCHOR = "optax.adam"  # takes the all-pairs array of the other factors

STEPS = 6  # training steps per case: two MultiSteps(k=3) emissions
OVERRIDE_AT = 3  # the step before which a test overrides the injected learning rate in the state
LR = 0.1
OVERRIDE_LR = 0.025
DECAY_STEPS, DECAY_RATE = 2, 0.5  # exponential_decay: LR * 0.5 ** (count / 2)
WD = 0.01  # add_decayed_weights before the optimizer: a gradient term wd * param
WD_AFTER = -LR * WD  # after the optimizer's learning-rate scaling: already in update units, so -lr * wd
MAX_NORM = 0.2  # clip_by_global_norm: below the first gradient's norm (2.9) and a step's update norm (0.3)
OTHER_LR = 0.05  # partition's other label: plain sgd
# Per optimizer, what it needs beside the learning rate to run (keyword arguments); none of adam, adamw,
# sgd needs any. An optimizer of the ledger's area without a learning_rate, or whose update needs more
# than grads, state and params (a loss value, a key), cannot be one of these compositions' cores.
OPTIMIZER_ARGS: dict[str, dict] = {}

# The problem: loss = 0.5 * sum(CURVATURE[leaf] * (param - TARGET)**2) over a 2-leaf tree.
PARAMS = {"w": [[0.5, -1.25, 2.0], [1.5, -0.75, 0.25]], "b": [0.3, -0.6, 1.1]}
TARGET = {"w": [[1.0, 0.5, -1.0], [0.0, 1.0, -0.5]], "b": [-0.2, 0.4, 0.0]}
CURVATURE = {"w": 1.0, "b": 2.0}
REAL_MASK = {"w": True, "b": False}
ALL_TRUE = {"w": True, "b": True}
LABELS = {"w": "main", "b": "other"}


class Inject(enum.Enum):
    NONE = "inject_none"
    STATIC = "inject_static"  # inject_hyperparams(opt, static_args=("learning_rate",))
    DYNAMIC = "inject_dynamic"  # the learning rate in state.hyperparams
    OVERRIDE = "inject_override"  # dynamic, and set in the state before step OVERRIDE_AT
    # Not a choice of the pairs: a relation's other side. The plain optimizer given what inject_hyperparams
    # holds: every numeric argument, its defaults too (b1, b2, eps), as an array of the params' dtype.
    PLAIN_AS_INJECTED = "inject_none_float32_args"


class Rate(enum.Enum):
    FLOAT = "lr_float"
    CONSTANT = "lr_constant"  # optax.constant_schedule(LR)
    DECAY = "lr_decay"  # optax.exponential_decay with a Python int transition_steps
    DECAY_JNP = "lr_decay_jnp"  # the same with a jnp int32 transition_steps


class Accumulate(enum.Enum):
    NONE = "k_none"
    K1 = "k1"  # MultiSteps(every_k_schedule=1)
    K3 = "k3"
    K3_JNP = "k3_jnp"  # every_k_schedule=lambda step: k, k a jnp int32 (traced under jit)


class Wrap(enum.Enum):
    NONE = "wrap_none"
    MASK_ALL = "mask_all_true"  # optax.masked(opt, every leaf True)
    MASK_REAL = "mask_real"  # optax.masked(opt, REAL_MASK): b passes through
    PARTITION = "partition"  # optax.partition({main: opt, other: sgd}, LABELS)


class Decay(enum.Enum):
    NONE = "decay_none"
    BEFORE = "decay_before"  # add_decayed_weights(WD) before the optimizer (scaled by its learning rate)
    AFTER = "decay_after"  # add_decayed_weights(WD_AFTER) after the optimizer's learning-rate scaling


class Clip(enum.Enum):
    NONE = "clip_none"
    BEFORE = "clip_before"  # clip_by_global_norm first in the chain: the gradients
    AFTER = "clip_after"  # last in the chain: the updates


class Mode(enum.Enum):
    JIT = "jit"  # one jitted function: init, then lax.scan over the steps
    EAGER = "eager"  # a Python loop of un-jitted update calls


FACTORS: tuple[tuple[enum.Enum, ...], ...] = tuple(  # each factor's levels, the plainest (and cheapest) first
    tuple(level for level in factor if level is not Inject.PLAIN_AS_INJECTED)
    for factor in (Inject, Rate, Accumulate, Wrap, Decay, Clip, Mode))


@dataclasses.dataclass(frozen=True)
class Case:
    optimizer: str  # "optax.adam"
    inject: Inject
    rate: Rate
    accumulate: Accumulate
    wrap: Wrap
    decay: Decay
    clip: Clip
    mode: Mode

    @property
    def id(self) -> str:
        """'adam-inject_none-lr_float-k3-mask_real-decay_none-clip_after-jit': the check's id and golden key."""
        choices = (self.inject, self.rate, self.accumulate, self.wrap, self.decay, self.clip, self.mode)
        return "-".join([self.optimizer.removeprefix("optax."), *(c.value for c in choices)])

    def but(self, **changes) -> Case:
        """The same composition with some choices changed (a relation's other side)."""
        return dataclasses.replace(self, **changes)


def optimizers(ledger: Path = LEDGER) -> tuple[str, ...]:
    """The ledger's callables in the optimizer area whose entry names this family among its contracts
    (`contracts = [..., "compositions/test_composition"]`), sorted. Not every optimizer of the area: each one
    combined costs ~0.4 s of an entry's CPU (its jitted rows trace and lower apart), and 48 would add ~17 s;
    the optimizers family pins each one's own rule. Naming the family in an entry combines it, with no case
    written by hand."""
    entries = tomllib.loads(ledger.read_text())["in_scope"]
    return tuple(sorted(name for name, entry in entries.items() if entry.get("area") == OPTIMIZER_AREA
                        and any(c.startswith(f"{FAMILY}/") for c in entry.get("contracts", []))))


def cases(names: tuple[str, ...]) -> tuple[Case, ...]:
    """All pairs. The anchor: eager (the costly mode) in the fewest rows that meet every other choice once
    (pairwise.each_choice), each with its jitted twin (the jit vs eager relation's other side), then the
    all-pairs rows for the rest, jitted. Each other optimizer: the jitted rows in which every other choice
    appears once, and its plain composition trained eagerly (whose twin is the first of those)."""
    if ANCHOR not in names:
        raise LookupError(f"the compositions family anchors its all-pairs array on {ANCHOR}, which the ledger's "
                          f"{OPTIMIZER_AREA!r} area lacks; add it to harness/coverage/ledger.toml")
    sizes = [len(factor) for factor in FACTORS]
    mode = FACTORS.index(tuple(Mode))
    jit, eager = (FACTORS[mode].index(m) for m in (Mode.JIT, Mode.EAGER))

    def with_mode(row: pairwise.Row, level: int) -> pairwise.Row:
        return (*row[:mode], level, *row[mode:])

    def case(name: str, row: pairwise.Row) -> Case:
        return Case(name, *(factor[level] for factor, level in zip(FACTORS, row)))

    rest = pairwise.each_choice(sizes[:mode] + sizes[mode + 1:])
    start = [with_mode(row, level) for row in rest for level in (eager, jit)]
    found = [case(ANCHOR, row) for row in pairwise.all_pairs(sizes, start)]
    others = [with_mode(row, jit) for row in rest] + [with_mode(rest[0], eager)]
    found += [case(name, row) for name in names if name != ANCHOR for row in others]
    return tuple(found)


def rows(found: tuple[Case, ...]) -> list[tuple[int, ...]]:
    """The cases as level indices, the optimizer first: what the pairwise coverage is checked on."""
    names = sorted({c.optimizer for c in found})
    return [(names.index(c.optimizer), *(factor.index(v) for factor, v in
             zip(FACTORS, (c.inject, c.rate, c.accumulate, c.wrap, c.decay, c.clip, c.mode)))) for c in found]


# -- building a case's transformation ------------------------------------------------------------
def optimizer_factory(name: str) -> Callable[..., optax.GradientTransformation]:
    """The optimizer's factory, checked to be callable with the learning rate alone (a case passes it
    by keyword); a further required parameter is named with what to do."""
    factory = resolve(name)
    params = inspect.signature(factory).parameters
    if "learning_rate" not in params:
        raise TypeError(f"{name} has no learning_rate parameter: the compositions family passes one to every "
                        "optimizer of the ledger's optimizer area; keep it out of that area, or give the family "
                        "a way to build it")
    given = OPTIMIZER_ARGS.get(name, {})
    required = [p for p, spec in params.items() if p != "learning_rate" and p not in given
                and spec.default is inspect.Parameter.empty
                and spec.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    if required:
        raise TypeError(f"{name} requires {required} besides learning_rate: give it a parameter set in "
                        "OPTIMIZER_ARGS (harness/builtin/compositions.py)")
    return functools.partial(factory, **given) if given else factory


def learning_rate(rate: Rate):
    """The learning rate's form; built outside any jit (the schedule checks its step counts in Python)."""
    if rate is Rate.FLOAT:
        return LR
    if rate is Rate.CONSTANT:
        return optax.constant_schedule(LR)
    steps = DECAY_STEPS if rate is Rate.DECAY else jnp.asarray(DECAY_STEPS, jnp.int32)
    return optax.exponential_decay(LR, transition_steps=steps, decay_rate=DECAY_RATE)


def core(case: Case, lr) -> optax.GradientTransformation:
    """The optimizer, injected or not."""
    factory = optimizer_factory(case.optimizer)
    if case.inject is Inject.NONE:
        return factory(learning_rate=lr)
    if case.inject is Inject.PLAIN_AS_INJECTED:
        return factory(learning_rate=lr, **_as_injected(factory))
    static = ("learning_rate",) if case.inject is Inject.STATIC else ()
    return optax.inject_hyperparams(factory, static_args=static)(learning_rate=lr)


def _as_injected(factory) -> dict:
    """The factory's numeric defaults as inject_hyperparams holds them (its documented state: numeric
    hyperparameters as arrays, floats in the params' dtype, float32 here); bools and None stay as they are."""
    found = {}
    for name, spec in inspect.signature(factory).parameters.items():
        value = spec.default
        if name == "learning_rate" or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        found[name] = jnp.asarray(value, jnp.float32) if isinstance(value, float) else jnp.asarray(value)
    return found


def wrapped(case: Case, lr) -> optax.GradientTransformation:
    inner = core(case, lr)
    if case.wrap is Wrap.MASK_ALL:
        return optax.masked(inner, ALL_TRUE)
    if case.wrap is Wrap.MASK_REAL:
        return optax.masked(inner, REAL_MASK)
    if case.wrap is Wrap.PARTITION:
        return optax.partition({"main": inner, "other": optax.sgd(OTHER_LR)}, LABELS)
    return inner


def transformation(case: Case, lr, k) -> optax.GradientTransformation:
    """The whole composition; lr: learning_rate(case.rate); k: MultiSteps' jnp count for K3_JNP (a tracer
    under jit)."""
    parts = [optax.clip_by_global_norm(MAX_NORM)] if case.clip is Clip.BEFORE else []
    parts += [optax.add_decayed_weights(WD)] if case.decay is Decay.BEFORE else []
    parts.append(wrapped(case, lr))
    parts += [optax.add_decayed_weights(WD_AFTER)] if case.decay is Decay.AFTER else []
    parts += [optax.clip_by_global_norm(MAX_NORM)] if case.clip is Clip.AFTER else []
    tx = optax.chain(*parts)
    if case.accumulate is Accumulate.NONE:
        return tx
    every_k = {Accumulate.K1: 1, Accumulate.K3: 3, Accumulate.K3_JNP: lambda step: k}[case.accumulate]
    return optax.MultiSteps(tx, every_k_schedule=every_k)


# -- training ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Run:
    """What a case's training gives: the params after STEPS steps, the loss before each step and after the
    last, the magnitudes its rounding is relative to, and the final state's layout."""

    params: dict[str, np.ndarray]
    losses: np.ndarray  # float32, STEPS + 1
    params_scale: dict[str, np.ndarray]  # |initial param| + sum of |update| over the steps, per element
    losses_scale: np.ndarray  # 0.5 * sum(c * (|param| + |target|)**2): the operands before param - target cancels
    state_layout: list


def _tree(values) -> dict[str, jax.Array]:
    return {leaf: jnp.asarray(v, jnp.float32) for leaf, v in values.items()}


def loss(params):
    target = _tree(TARGET)
    return sum(0.5 * CURVATURE[leaf] * jnp.sum((params[leaf] - target[leaf]) ** 2) for leaf in sorted(params))


def _loss_scale(params):
    target = _tree(TARGET)
    return sum(0.5 * CURVATURE[leaf] * jnp.sum((jnp.abs(params[leaf]) + jnp.abs(target[leaf])) ** 2)
               for leaf in sorted(params))


def _step(tx, carry):
    params, state, moved = carry
    value, grads = jax.value_and_grad(loss)(params)
    updates, state = tx.update(grads, state, params)
    moved = jax.tree.map(lambda m, u: m + jnp.abs(u), moved, updates)
    return (optax.apply_updates(params, updates), state, moved), (value, _loss_scale(params))


INJECTED = (optax.InjectHyperparamsState, optax.InjectStatefulHyperparamsState)


def _override(state):
    """A team's between-steps `state.hyperparams["learning_rate"] = x`, wherever the wrappers put the
    injected state. (optax.tree_utils.tree_set(state, learning_rate=x) would also replace the schedule's
    own state, hyperparams_states["learning_rate"], when the learning rate is a schedule.)"""
    new = jnp.asarray(OVERRIDE_LR, jnp.float32)

    def override(node):
        if isinstance(node, INJECTED):
            return node._replace(hyperparams={**node.hyperparams, "learning_rate": new})
        return node

    return jax.tree.map(override, state, is_leaf=lambda node: isinstance(node, INJECTED))


def _segments(case: Case) -> tuple[int, ...]:
    return (OVERRIDE_AT, STEPS - OVERRIDE_AT) if case.inject is Inject.OVERRIDE else (STEPS,)


def _train(case: Case, lr, k, scan: bool):
    tx = transformation(case, lr, k)
    params = _tree(PARAMS)
    carry = (params, tx.init(params), jax.tree.map(jnp.abs, params))
    losses, scales = [], []
    for number, length in enumerate(_segments(case)):
        if number:
            carry = (carry[0], _override(carry[1]), carry[2])
        if scan:
            carry, (value, scale) = jax.lax.scan(lambda c, _: _step(tx, c), carry, length=length)
            losses.append(value)
            scales.append(scale)
        else:
            for _ in range(length):
                carry, (value, scale) = _step(tx, carry)
                losses.append(value[None])
                scales.append(scale[None])
    final = carry[0]
    losses = jnp.concatenate([*losses, loss(final)[None]])
    scales = jnp.concatenate([*scales, _loss_scale(final)[None]])
    return final, losses, carry[2], scales, carry[1]


def _run(outputs) -> Run:
    params, losses, moved, scales, state = outputs
    return Run({leaf: np.asarray(v) for leaf, v in params.items()}, np.asarray(losses),
               {leaf: np.asarray(v) for leaf, v in moved.items()}, np.asarray(scales), _layout(state))


def _layout(state) -> list:
    """[path, dtype, shape] per leaf, as trees.layout, read from the arrays themselves: a PRNG key leaf
    (noisy_sgd's state) has no NumPy form."""
    return [[trees.path_name(path), str(leaf.dtype), list(leaf.shape)]
            for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]]


def train(case: Case) -> Run:
    """Train the case's composition for STEPS steps: jitted (one program, lax.scan) or eagerly."""
    return train_all((case,))[case]


def train_all(found: tuple[Case, ...]) -> dict[Case, Run | Exception]:
    """Each case's run, or the exception its composition raised. The jitted cases are traced into one
    program (one compile, one load from the persistent cache: the family's cost is then their tracing);
    when that raises, each is jitted alone so the exception is its own case's."""
    k = jnp.asarray(3, jnp.int32)
    done: dict[Case, Run | Exception] = {}
    jitted = tuple(dict.fromkeys(c for c in found if c.mode is Mode.JIT))
    try:
        rates = {c: learning_rate(c.rate) for c in jitted}
        outputs = jax.jit(lambda k: tuple(_train(c, rates[c], k, scan=True) for c in jitted))(k)
        done.update((c, _run(out)) for c, out in zip(jitted, outputs))
    except Exception:
        for c in jitted:
            try:
                lr = learning_rate(c.rate)
                done[c] = _run(jax.jit(lambda k: _train(c, lr, k, scan=True))(k))
            except Exception as exc:  # the case's own failure, raised by its check
                done[c] = exc
    for c in dict.fromkeys(c for c in found if c.mode is Mode.EAGER):
        try:
            done[c] = _run(_train(c, learning_rate(c.rate), k, scan=False))
        except Exception as exc:
            done[c] = exc
    return done
