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
from harness.contract.tolerances import UNIT_ROUNDOFF

CANCELS = ("sums of terms of either sign (b1 m + (1 - b1) g, g - m) may cancel: the ulps are taken at the same "
           "formula over |terms|; a bias correction's 1 - b**t cancels (b**t rounded near 1): see "
           "optimizer_checks.bias_conditioning")

GOLDEN_CANCELS = ("the update sums terms of either sign (a momentum b1 m + g, m1_hat + alpha m2, u + weight_decay "
                  "params), or rounds in a form that cancels (a lerp g**2 + b2 (n - g**2)): a recompiled kernel (a fused "
                  "multiply-add) rounds the terms, not the cancelled sum: the golden ulps at the reference's scale "
                  "(the same formula over |terms|, times the formula's conditioning)")


@dataclasses.dataclass(frozen=True)
class Rule:
    """An update rule's reference as the contracts call it.

    step(g, previous state fields, t, hyper) -> reference Moments; start(shape, hyper) -> the documented
    initial state fields; fields: the state fields compared (library name -> Moments field). Every value is
    compared at its operands' magnitude: the same step over |g|, |previous| and |params| (a sum of terms of
    either sign may cancel; rounding error is relative to the terms), or magnitude(g, previous, t, hyper)
    for the update where that trick does not give it (adabelief's denominator)."""
    hyper: tuple[str, ...]
    fields: dict[str, str]
    step: Callable
    start: Callable
    magnitude: Callable | None = None
    # (g, previous state fields, t, hyper) -> the step over its operands' magnitudes (the update and every
    # field), where |inputs| does not give them (a difference of gradients cancels over |g| too: adan)
    operands: Callable | None = None
    # state -> {field: tree} (default: the fields of the rule's own state, optimizer_runs.rule_state)
    read: Callable | None = None
    uses_params: bool = False  # step(..., params=) gets the params the step saw (weight decay inside the rule)
    # (t, hyper) -> the condition number (in units of float32's u) of float32 arithmetic the formula cannot
    # avoid, for the update and for named state fields (see bias_conditioning): widens the scale by 1 + it.
    conditioning: Callable | None = None
    field_conditioning: dict | None = None


def in_units_of(dtype) -> float:
    """A condition number counted in float32's u, in the units of the compared value's dtype: the rounding it
    magnifies (b**t) happens in float32 (a bias correction's arithmetic), so for a bfloat16 value it is
    2**-16 of a bfloat16 u, not a bfloat16 u."""
    return UNIT_ROUNDOFF["float32"] / UNIT_ROUNDOFF.get(str(dtype), UNIT_ROUNDOFF["float32"])


def bias_conditioning(b: float, t: int) -> float:
    """How much a bias correction's denominator 1 - b**t magnifies float32 rounding, in units of u.

    b**t is rounded to float32 (for t >= 2; b**1 is b, and 1 - b is exact for b in [0.5, 1]), an error of
    about u at 1; 1 - b**t is 1e-3 t at b2 = 0.999, so that error is b**t / (1 - b**t) times u relative to
    the denominator (500 u at step 2). The formula has this cancellation in any float32 evaluation: a value
    divided by it is held at 1 + this times its own magnitude."""
    return 0.0 if t < 2 else b**t / (1.0 - b**t)


def adam_conditioning(nesterov: bool = False) -> Callable:
    """m / (1 - b1^t) over sqrt(v / (1 - b2^t)): both bias corrections (the second under a square root,
    halved); NAdam's m_hat also divides by 1 - b1^(t+1)."""
    def conditioning(t, h):
        first = bias_conditioning(h["b1"], t) + (bias_conditioning(h["b1"], t + 1) if nesterov else 0.0)
        return first + bias_conditioning(h["b2"], t) / 2
    return conditioning


def rectifier_conditioning(t: int, h: dict) -> float:
    """How much float32 rounding moves RAdam's rectifier r(rho_t), in units of u.

    rho_t = rho_inf - 2 t b2^t / (1 - b2^t) subtracts two numbers near rho_inf (199 at b2 = 0.99) to get one
    near t: its absolute error is about u (rho_inf + T (1 + bias_conditioning)) with T the subtracted term,
    and r's relative error is that times |d ln r / d rho| = |1/(rho-4) + 1/(rho-2) - 1/rho| / 2 (0 where the
    step is not rectified)."""
    b2 = h["b2"]
    rho_inf = 2.0 / (1.0 - b2) - 1.0
    subtracted = 2.0 * t * b2**t / (1.0 - b2**t)
    rho = rho_inf - subtracted
    if rho <= h["threshold"]:
        return 0.0
    error = rho_inf + subtracted * (1.0 + bias_conditioning(b2, t))
    return error * abs(1.0 / (rho - 4.0) + 1.0 / (rho - 2.0) - 1.0 / rho) / 2.0


def zeros(*names):
    return lambda shape, hyper: {n: np.zeros(shape) for n in names}


def f32(value: float) -> float:
    """A hyperparameter as the library received it: rounded to float32."""
    return float(F32(value))


@dataclasses.dataclass(frozen=True)
class Alias:
    """How an alias wraps its rule: -learning_rate * (u + weight_decay * params), decay where mask holds."""
    decay_mask: dict | None = None  # leaf -> bool; None: every leaf (or no weight decay)
    adds_weight_decay: bool = True  # False: the rule itself applies weight_decay (novograd)


def _read(rule: Rule, state) -> dict:
    if rule.read is not None:
        return rule.read(state)
    kept = rule_state(state)
    return {field: getattr(kept, field) for field in rule.fields}


def check_steps(check, label: str, rule: Rule, run: Run, grads: dict, variants: list[dict],
                alias: Alias | None = None) -> dict:
    """Every variant's every step against the reference: the emitted update (the alias's descent step when
    alias is given), each compared state field and the count. The references are gathered over all variants
    and steps, then compared once per leaf and quantity (a failure names the worst [variant, step, ...]).
    Returns each leaf's update scale [variant, step, ...] (the same formula over |terms| or the rule's own
    operands, times the formula's conditioning): the scale a golden comparison of a cancelling update takes."""
    __tracebackhide__ = True
    steps = next(iter(grads.values())).shape[0]
    kept = rule_state(run.states)
    if kept is not None:
        check.exact(f"{label} count after each step", kept.count.tolist(), [list(range(1, steps + 1))] * len(variants))
    stored = _read(rule, run.states)
    update_scales = {}
    for k in sorted(LAYOUT):
        expected = {"update": np.zeros(run.updates[k].shape), **{f: np.zeros(stored[f][k].shape) for f in rule.fields}}
        scales = {name: np.zeros_like(array) for name, array in expected.items()}
        for v, hyper in enumerate(variants):
            hyper = {name: f32(x) for name, x in hyper.items()}
            rule_hyper = {name: hyper[name] for name in rule.hyper}
            previous = rule.start(LAYOUT[k], rule_hyper)
            for i in range(steps):
                g, t, seen = f64(grads[k][i]), i + 1, f64(run.params[k][v, i])
                extra = {"params": seen} if rule.uses_params else {}
                moments = rule.step(g, previous, t, rule_hyper, **extra)
                if rule.operands is not None:
                    operands = rule.operands(g, previous, t, rule_hyper, **extra)
                else:
                    operands = rule.step(np.abs(g), {f: np.abs(x) for f, x in previous.items()}, t, rule_hyper,
                                         **{f: np.abs(x) for f, x in extra.items()})
                update = moments.update
                scale = np.abs(operands.update if rule.magnitude is None else rule.magnitude(g, previous, t, rule_hyper))
                if rule.conditioning is not None:
                    scale = scale * (1.0 + rule.conditioning(t, rule_hyper) * in_units_of(run.updates[k].dtype))
                if alias is not None:
                    decays = alias.decay_mask is None or alias.decay_mask[k]
                    lr = hyper["learning_rate"]
                    wd = hyper.get("weight_decay", 0.0) if alias.adds_weight_decay else 0.0
                    update = ref.descent(update, seen, learning_rate=lr, weight_decay=wd, decay_mask=decays)
                    scale = lr * (scale + (wd * np.abs(seen) if decays else 0.0))
                expected["update"][v, i], scales["update"][v, i] = update, scale
                for field, moment in rule.fields.items():
                    expected[field][v, i] = getattr(moments, moment)
                    factor = 1.0 + (rule.field_conditioning or {}).get(field, lambda t, h: 0.0)(t, rule_hyper) * (
                        in_units_of(stored[field][k].dtype))
                    scales[field][v, i] = np.abs(getattr(operands, moment)) * factor
                previous = {field: f64(stored[field][k][v, i]) for field in rule.fields}
        check.reference(f"{label} {k} update, every [variant, step]", run.updates[k], expected["update"],
                        scale=scales["update"], why=CANCELS)
        update_scales[k] = scales["update"]
        for field in rule.fields:
            check.reference(f"{label} {k} {field}, every [variant, step]", stored[field][k], expected[field],
                            scale=scales[field], why=CANCELS)
    return update_scales


def layouts(check, name: str, run: Run) -> None:
    """The state's layout (every leaf's path, dtype, shape) after init and after the run's steps."""
    check.layout(f"{name}/state_after_init", at(run.init, 0))
    check.layout(f"{name}/state_after_steps", at(run.states, 0, -1))


def variants(defaults: dict, moved: dict) -> list[dict]:
    """The defaults, then one variant per moved parameter (the others at their defaults)."""
    return [dict(defaults)] + [dict(defaults, **{name: value}) for name, value in moved.items()]


@dataclasses.dataclass(frozen=True)
class Case:
    """A rule's run over variants on a seed's gradients, and how to hold it (the alias's descent or the rule)."""
    rule: Rule
    run: Callable[[], Run]
    grads: dict
    variants: list[dict]
    alias: Alias | None = None


class Cases:
    """A module's cases: each declared at import as one run of optimizer_runs.RUNS (one jitted program for every
    optimizers module), then checked by name: every step against the reference (updates and every state
    field), the updates golden, the state's layout after init and after the steps golden (under
    layout_key(name))."""

    def __init__(self, layout_key: Callable[[str], str] = lambda name: name, golden_at_operands: bool = False):
        self.cases: dict[str, Case] = {}
        self.layout_key = layout_key
        # the updates' golden ulps at their operands' magnitude (rules whose update sums terms of either sign)
        self.golden_at_operands = golden_at_operands

    def add(self, name: str, rule: Rule, make: Callable, variants: list[dict], seed: int,
            alias: Alias | None = None) -> str:
        grads = optimizer_runs.gradients(seed)
        run = optimizer_runs.RUNS.add(name, make, variants, optimizer_runs.params(), grads)
        self.cases[name] = Case(rule, run, grads, variants, alias)
        return name

    def check(self, check, name: str, rule: Rule | None = None, golden_at_operands: bool | None = None) -> None:
        """rule: instead of the case's (one chosen after the run: adan); golden_at_operands: this case's own
        choice over the module's."""
        __tracebackhide__ = True
        case = self.cases[name]
        run = case.run()
        moved = sorted({n for v in case.variants[1:] for n in v if v[n] != case.variants[0][n]})
        check.describe_input(f"{name} on gradients N(0,1) of shapes (3,), (2,2), {len(case.grads['b'])} steps, "
                             f"{len(case.variants)} variants (the defaults, then {', '.join(moved)} moved)")
        magnitudes = check_steps(check, name, rule or case.rule, run, case.grads, case.variants, alias=case.alias)
        if self.golden_at_operands if golden_at_operands is None else golden_at_operands:
            check.golden_tree(f"{name}/updates", run.updates, scales=magnitudes, why=GOLDEN_CANCELS)
        else:
            check.golden_tree(f"{name}/updates", run.updates)
        layouts(check, self.layout_key(name), run)


__all__ = ["Rule", "Alias", "Case", "Cases", "check_steps", "layouts", "variants", "zeros", "optimizer_runs"]
