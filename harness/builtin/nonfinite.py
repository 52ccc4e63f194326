"""Non-finite values through a transform: what a NaN or an infinity in a gradient, or in the params, becomes in the
updates and the params after it (the test_*_nonfinite modules of the optimizers, clipping, masks and accumulation
families share it).

Releases change this without touching a finite value: a transform that starts zeroing what meets a NaN (0 x NaN),
a sign-based rule that maps NaN to a finite step, weight decay skipped at 0 (so NaN params no longer give NaN
updates), a global norm that spreads one leaf's NaN to every leaf, a mask or a skip that stops passing it on. The
other checks see only finite inputs, so none of these can show there. Each transform takes two steps from finite
params: the first gradient holds NaN, +inf and -inf in one leaf beside a finite element and a finite leaf, the
second is finite (so the params the first step made non-finite reach the second update). Each element's finiteness
after each step (f finite, n NaN, + +inf, - -inf: harness.builtin.edges.finiteness) is a golden fact, exact on
every host. One taking weight_decay (its ledger line: the baseline's signature) also takes one step with
weight_decay=0 from params holding NaN and inf under a finite gradient. Every one also takes a step with the bias
b of size 0 (a layer of no units): what the other leaf's update becomes beside it, or the error it raises.

Which ones: every in-scope callable of the family's ledger areas, built from its required arguments (the module's
ARGUMENTS where it needs more than a learning rate), less those the module sets aside with why.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np
import pytest

from harness.builtin import defaults
from harness.builtin.edges import finiteness

C = 0.05  # the learning rate of every transform that requires one
PARAMS = {"w": np.asarray([[0.5, -1.0], [2.0, 0.25]], np.float32), "b": np.asarray([0.1, -0.3, 0.7], np.float32)}
FIRST = {"w": np.asarray([[np.nan, np.inf], [-np.inf, 0.5]], np.float32), "b": np.asarray([0.3, -0.2, 0.1], np.float32)}
SECOND = {"w": np.asarray([[0.2, -0.4], [0.6, -0.1]], np.float32), "b": np.asarray([-0.5, 0.25, 0.4], np.float32)}
NONFINITE_PARAMS = {"w": np.asarray([[np.nan, np.inf], [-np.inf, 0.5]], np.float32), "b": PARAMS["b"]}
# The same tree with b of size 0 (a layer of no units, an empty bias), and a finite gradient: a transform that
# divides by a leaf's size or norm, or reshapes it, meets an empty leaf here (the tree's structure is the params',
# so a mask or labels written for it still fit).
EMPTY_B = {"w": PARAMS["w"], "b": np.zeros((0,), np.float32)}
EMPTY_B_GRADIENT = {"w": SECOND["w"], "b": np.zeros((0,), np.float32)}
EMPTY_STEP = "b of size 0, a finite gradient: updates"


def _shown(a: np.ndarray) -> str:
    return np.array2string(a, separator=", ").replace("\n", "")


DESCRIBED = (f"params w {_shown(PARAMS['w'])}, b {_shown(PARAMS['b'])}; gradients w {_shown(FIRST['w'])}, "
             f"b {_shown(FIRST['b'])}, then finite; and b of size 0")


@dataclasses.dataclass(frozen=True)
class Transforms:
    """A family's transforms: the ledger's areas, what each requires beyond a learning rate, and those set aside."""

    areas: tuple[str, ...]
    arguments: dict[str, dict]  # name -> the arguments it requires beyond a learning rate
    set_aside: dict[str, str]  # name -> why it is not run here
    update_arguments: dict[str, dict] = dataclasses.field(default_factory=dict)  # name -> its update's extra ones

    @functools.cached_property
    def callables(self) -> tuple[str, ...]:
        return tuple(sorted(n for area in self.areas for n in defaults.ledger_in_scope_of(area)))

    @functools.cached_property
    def run(self) -> tuple[str, ...]:
        return tuple(n for n in self.callables if n not in self.set_aside)

    @functools.cached_property
    def taking_weight_decay(self) -> frozenset[str]:
        """Those whose ledger line (the baseline's surface) has weight_decay: a candidate that adds the parameter
        keeps the check's facts, one that drops it lacks the keyword (not applicable, or API missing)."""
        return frozenset(n for area in self.areas for n in defaults.ledger_params_of(area, "weight_decay"))

    def unaccounted(self) -> list[str]:
        """What the module names that its areas no longer hold, and what it runs without the arguments required."""
        stale = (set(self.set_aside) | set(self.arguments) | set(self.update_arguments)) - set(self.callables)
        problems = [f"named, yet not in the ledger's areas {self.areas}: {sorted(stale)}"] if stale else []
        for name in self.run:
            try:
                defaults.resolve(name)
            except (AttributeError, ImportError):  # this stack lacks it: its check is not applicable here
                continue
            missing = _required(name) - {"learning_rate"} - set(self.arguments.get(name, {}))
            if missing:
                problems.append(f"{name} requires {sorted(missing)}: give them in ARGUMENTS or set it aside")
        return problems

    def make(self, name: str, **given):
        """The transform, built from what it requires (the learning rate C where it takes one) and `given`."""
        arguments = {"learning_rate": C} if "learning_rate" in _required(name) else {}
        return defaults.resolve(name)(**{**arguments, **self.arguments.get(name, {}), **given})


def _params(name: str) -> dict:
    return dict(inspect.signature(defaults.resolve(name)).parameters)


def _required(name: str) -> set[str]:
    return {p.name for p in _params(name).values()
            if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _finiteness(tree) -> dict[str, str]:
    import jax

    return {k: finiteness(v) for k, v in sorted(jax.tree_util.tree_map(np.asarray, dict(tree)).items())}


def steps(transforms: Transforms, name: str) -> dict[str, dict[str, str]]:
    """Each element's finiteness after two steps from finite params (NaN, +inf, -inf in the first gradient), for
    one taking weight decay after one step at weight_decay=0 from params holding them, and after one step with b of
    size 0 (or the error type its tracing raises: {"raises": "ValueError"}): one jitted program."""
    import jax
    import optax

    extra = transforms.update_arguments.get(name, {})
    tx = transforms.make(name)
    decay_off = transforms.make(name, weight_decay=0.0) if name in transforms.taking_weight_decay else None
    refused: dict[str, dict[str, str]] = {}  # filled while the program traces: what an empty leaf made raise

    def program(params, first, second, nonfinite_params, empty_b, empty_b_gradient):
        state = tx.init(params)
        u1, state = tx.update(first, state, params, **extra)
        params1 = optax.apply_updates(params, u1)
        u2, _ = tx.update(second, state, params1, **extra)
        out = {"step 1 updates": u1, "step 2 updates": u2, "params after step 2": optax.apply_updates(params1, u2)}
        if decay_off is not None:
            out["weight_decay=0, NaN and inf params: updates"] = decay_off.update(
                second, decay_off.init(nonfinite_params), nonfinite_params, **extra)[0]
        try:  # raised while tracing, it is the transform's answer to an empty leaf; the other steps stand
            out[EMPTY_STEP] = tx.update(empty_b_gradient, tx.init(empty_b), empty_b, **extra)[0]
        except Exception as exc:  # whatever it raises: its type is the fact
            refused[EMPTY_STEP] = {"raises": type(exc).__name__}
        return out

    found = jax.device_get(jax.jit(program)(PARAMS, FIRST, SECOND, NONFINITE_PARAMS, EMPTY_B, EMPTY_B_GRADIENT))
    return {**{what: _finiteness(tree) for what, tree in found.items()}, **refused}


def judge(check, transforms: Transforms, name: str) -> None:
    """The finiteness of every element after each step, a golden fact each (a change names the step and shows
    its letters whole: {'b': 'fff', 'w': 'nnnf'} -> {'b': 'fff', 'w': 'ffff'})."""
    defaults.resolve(name)  # a callable this stack lacks: not applicable here
    check.describe_input(f"{name}: {DESCRIBED}")
    found = steps(transforms, name)
    for what in sorted(found):
        check.golden_fact(f"nonfinite/{name}/{what}", found[what])


def tests(transforms: Transforms, at_least: int):
    """A family's two tests of them (its test_*_nonfinite module binds them under these names): one check per
    callable, parametrized by its ledger name (the selection takes a team's check alone:
    builtin_families.PER_CALLABLE_TESTS), and the completeness of the set, derived from the ledger."""
    @pytest.mark.parametrize("name", transforms.run)
    def test_nonfinite_through_the_update(check, name):
        """Each element's finiteness in the updates of the first step (NaN, +inf and -inf in the gradient's w, b
        finite), of the second (a finite gradient, the params the first step made), in the params after both,
        (taking weight_decay) in the updates of weight_decay=0 from NaN and inf params, and in the updates of a step
        with b of size 0 (or the error it raises): a golden fact each."""
        judge(check, transforms, name)

    def test_every_transform_is_run_or_set_aside():
        """Derived from the ledger, not listed: each in-scope callable of the family's areas is run here or set
        aside with why, built from what it requires; nothing named here that the ledger no longer has."""
        assert len(transforms.run) >= at_least, f"the ledger gave only {transforms.run}"
        assert not transforms.unaccounted(), transforms.unaccounted()

    return test_nonfinite_through_the_update, test_every_transform_is_run_or_set_aside
