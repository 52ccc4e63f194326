"""Holding an optimizer run to its NumPy float64 reference, one step at a time, and to the baseline.

Each step's reference starts from the state the library kept after the previous step (read back as
float64), so a step is a handful of roundings in the leaf dtype and the reference tolerance (64 ulps in
float32, 8 in bfloat16) holds it whatever the number of steps; the first step starts from the state the
rule documents (zeros, or yogi's initial accumulator). Where the first moment is a sum of terms of either
sign, it and everything divided from it are compared with the ulps taken at the operands' magnitude
(the same formula over |g| and |mu|): rounding error is relative to the operands, not to a result that
cancelled.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from harness.builtin import optimizer_runs
from harness.builtin.optimizer_runs import F32, LAYOUT, Run, at, f64, rule_state
from harness.builtin.reference import adam_family as ref

CANCELS = "the first moment b1 m + (1 - b1) g: terms of either sign may cancel"


@dataclasses.dataclass(frozen=True)
class Rule:
    """An update rule's reference as the contracts call it.

    step(g, previous state fields, t, hyper) -> reference Moments; start(shape, hyper) -> the documented
    initial state fields; magnitude(g, previous, t, hyper) -> the update's operand magnitude (None: no
    cancellation, compared at its own value); fields: the state fields compared (library name -> Moments
    field)."""
    hyper: tuple[str, ...]
    fields: dict[str, str]
    step: Callable
    start: Callable
    magnitude: Callable | None = None


def zeros(*names):
    return lambda shape, hyper: {n: np.zeros(shape) for n in names}


def absolute(step):
    """The same step over |g| and |previous mu|: the magnitude of the terms the first moment sums."""
    def magnitude(g, previous, t, hyper):
        return step(np.abs(g), {**previous, "mu": np.abs(previous["mu"])}, t, hyper).update
    return magnitude


def f32(value: float) -> float:
    """A hyperparameter as the library received it: rounded to float32."""
    return float(F32(value))


@dataclasses.dataclass(frozen=True)
class Alias:
    """How an alias wraps its rule: -learning_rate * (u + weight_decay * params), decay where mask holds."""
    decay_mask: dict | None = None  # leaf -> bool; None: every leaf (or no weight decay)


def check_steps(check, label: str, rule: Rule, run: Run, grads: dict, variants: list[dict],
                alias: Alias | None = None) -> None:
    """Every variant's every step against the reference: the emitted update (the alias's descent step when
    alias is given), each compared state field and the count."""
    __tracebackhide__ = True
    steps = next(iter(grads.values())).shape[0]
    for v, hyper in enumerate(variants):
        hyper = {k: f32(x) for k, x in hyper.items()}
        rule_hyper = {k: hyper[k] for k in rule.hyper}
        previous = {k: rule.start(shape, rule_hyper) for k, shape in LAYOUT.items()}
        for i in range(steps):
            kept = rule_state(at(run.states, v, i))
            if hasattr(kept, "count"):
                check.exact(f"{label} variant {v} count after step {i + 1}", int(kept.count), i + 1)
            for k in sorted(LAYOUT):
                g = f64(grads[k][i])
                expected = rule.step(g, previous[k], i + 1, rule_hyper)
                scale = None if rule.magnitude is None else np.abs(rule.magnitude(g, previous[k], i + 1, rule_hyper))
                if alias is not None:
                    decays = alias.decay_mask is None or alias.decay_mask[k]
                    seen = f64(run.params[k][v, i])
                    lr, wd = hyper["learning_rate"], hyper.get("weight_decay", 0.0)
                    update = ref.descent(expected.update, seen, learning_rate=lr, weight_decay=wd, decay_mask=decays)
                    if scale is not None:
                        scale = lr * (scale + (wd * np.abs(seen) if decays else 0.0))
                else:
                    update = expected.update
                where = f"{label} variant {v} step {i + 1} {k}"
                check.reference(f"{where} update", run.updates[k][v, i], update,
                                scale=scale, why=None if scale is None else CANCELS)
                for field, moment in rule.fields.items():
                    stored = getattr(kept, field)[k]
                    mu_scale = ref._ema(rule_hyper["b1"], np.abs(previous[k]["mu"]), np.abs(g)) if field == "mu" else None
                    check.reference(f"{where} {field}", stored, getattr(expected, moment),
                                    scale=mu_scale, why=None if mu_scale is None else CANCELS)
                previous[k] = {field: f64(getattr(kept, field)[k]) for field in rule.fields}


def layouts(check, name: str, init_state, run: Run) -> None:
    """The state's layout (every leaf's path, dtype, shape) after init and after the run's steps."""
    check.layout(f"{name}/state_after_init", init_state)
    check.layout(f"{name}/state_after_steps", at(run.states, 0, -1))


__all__ = ["Rule", "Alias", "check_steps", "layouts", "zeros", "absolute", "optimizer_runs"]
