"""optax.contrib's moving-average variants of Adam, each rule and its alias over six steps of a two-leaf tree,
against NumPy float64 models of their documented formulas (harness/builtin/reference/acprop.py, ademamix.py) and
the baseline's recording: ACProp (a centred second moment, used one step late), AdEMAMix (a bias-corrected fast
EMA plus alpha times a slow one, b3 and alpha as schedules) and Simplified AdEMAMix (an undamped momentum plus
alpha times the gradient).

Built as test_optimizers_adam_variants.py: numeric hyperparameters traced and vmapped (defaults first, then each
moved off its default), every run one jitted program with the family's other runs; each step's reference starts
from the state the library stored; the updates and the state's layout after init and after the steps golden. The
aliases run with weight decay on the kernel only (mask), so -learning_rate * (u + weight_decay * params) is held
where the mask holds and -learning_rate * u elsewhere.
"""

import jax.numpy as jnp
import optax
import pytest

from harness.builtin import optimizer_checks as oc
from harness.builtin import optimizer_runs as runs
from harness.builtin.reference import acprop as acprop_ref, ademamix as ademamix_ref

pytestmark = pytest.mark.family("optimizers")

DECAY_MASK = {"b": False, "w": True}
CASES = oc.Cases(golden_at_operands=True)  # momenta and mixtures of either sign: oc.GOLDEN_CANCELS


def _variants(defaults: dict, moved: dict) -> list[dict]:
    """The defaults, then every moved parameter at once: two variants (each variant costs a reference loop; a
    failure's index still names the variant, the message the quantity)."""
    return [dict(defaults), dict(defaults, **moved)]
MOVED = dict(b1=0.5, b2=0.9, eps=0.3, eps_root=0.5)  # each far enough off its default to move every step


# -- ACProp -------------------------------------------------------------------------------------------------------
def _acprop_step(g, p, t, h):
    return acprop_ref.acprop(g, p["mu"], p["nu"], t, **h)


ACPROP = oc.Rule(hyper=("b1", "b2", "eps", "eps_root"), fields={"mu": "mu", "nu": "nu"}, step=_acprop_step,
                 start=oc.zeros("mu", "nu"),
                 # the update divides by sqrt(s / (1 - b2**(t-1))): the previous step's bias correction, halved
                 conditioning=lambda t, h: oc.bias_conditioning(h["b2"], t - 1) / 2)
ACPROP_DEFAULTS = dict(b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16)

ACPROP_CASE = CASES.add("acprop", ACPROP, lambda **h: optax.contrib.acprop(**h, mask=DECAY_MASK),
                        _variants(dict(learning_rate=0.1, weight_decay=1e-4, **ACPROP_DEFAULTS),
                                    dict(learning_rate=0.02, weight_decay=0.3, **MOVED)), 62, alias=oc.Alias(DECAY_MASK))


def test_acprop_steps(check):
    """acprop(learning_rate, b1, b2, eps, eps_root, weight_decay, mask on the kernel): -learning_rate * (u +
    weight_decay * params) where the mask holds, u = g_t / (sqrt(s_hat_{t-1}) + eps) with s the moving average
    of the squared prediction error plus eps_root (the centring on m_{t-1} and s_hat_0 = 1 follow the baseline:
    see reference/acprop.py), against float64. acprop passes all of scale_by_acprop's parameters through, and
    its state holds the rule's, every field compared: this is scale_by_acprop's contract too (a separate run
    would cost a trace and pin nothing more)."""
    CASES.check(check, ACPROP_CASE)


# -- AdEMAMix -----------------------------------------------------------------------------------------------------
def _ademamix_step(g, p, t, h):
    return ademamix_ref.ademamix(g, p["m1"], p["m2"], p["nu"], t, **h)


ADEMAMIX_FIELDS = {"m1": "mu", "nu": "nu", "m2": "extra"}
ADEMAMIX = oc.Rule(hyper=("b1", "b2", "b3", "alpha", "eps", "eps_root"), fields=ADEMAMIX_FIELDS, step=_ademamix_step,
                   start=oc.zeros("m1", "m2", "nu"), conditioning=oc.adam_conditioning())

SCALE_BY_ADEMAMIX = CASES.add("scale_by_ademamix", ADEMAMIX, lambda **h: optax.contrib.scale_by_ademamix(**h),
                              _variants(dict(b1=0.9, b2=0.999, b3=0.9999, alpha=6.0, eps=1e-8, eps_root=0.0),
                                          dict(b3=0.8, alpha=2.0, **MOVED)), 63)

# The paper's warm-ups as schedules of the number of earlier updates c: alpha grows linearly to its value over
# ALPHA_WARMUP updates; b3 holds b3_start for the first B3_SWITCH updates, then b3 (piecewise constant: the values
# enter exactly as given, so the contract is that Optax calls the schedules with c, not a schedule's rounding).
ALPHA_WARMUP, B3_SWITCH = 4, 3


def _alpha_at(alpha, c):
    return alpha * min(1.0, c / ALPHA_WARMUP)


def _ademamix(learning_rate, b1, b2, b3_start, b3, alpha, eps, eps_root, weight_decay):
    return optax.contrib.ademamix(
        learning_rate, b1=b1, b2=b2, b3=lambda c: jnp.where(c < B3_SWITCH, b3_start, b3),
        alpha=lambda c: alpha * jnp.minimum(1.0, c / ALPHA_WARMUP), eps=eps, eps_root=eps_root,
        weight_decay=weight_decay, mask=DECAY_MASK)


def _scheduled_step(g, p, t, h):
    c = t - 1  # the schedules see the count of earlier updates
    b3 = h["b3_start"] if c < B3_SWITCH else h["b3"]
    alpha = oc.f32(_alpha_at(h["alpha"], c))  # the schedule's one float32 product, as the library rounds it
    return ademamix_ref.ademamix(g, p["m1"], p["m2"], p["nu"], t, b1=h["b1"], b2=h["b2"], b3=b3, alpha=alpha,
                                 eps=h["eps"], eps_root=h["eps_root"])


ADEMAMIX_SCHEDULED = oc.Rule(hyper=("b1", "b2", "b3_start", "b3", "alpha", "eps", "eps_root"),
                             fields=ADEMAMIX_FIELDS, step=_scheduled_step, start=oc.zeros("m1", "m2", "nu"),
                             conditioning=oc.adam_conditioning())
ADEMAMIX_CASE = CASES.add("ademamix", ADEMAMIX_SCHEDULED, _ademamix,
                          _variants(dict(learning_rate=0.1, b1=0.9, b2=0.999, b3_start=0.9, b3=0.9999, alpha=5.0,
                                           eps=1e-8, eps_root=0.0, weight_decay=1e-4),
                                      dict(learning_rate=0.02, b3_start=0.3, b3=0.8, alpha=2.0, weight_decay=0.3,
                                           **MOVED)), 64, alias=oc.Alias(DECAY_MASK))


def _count_m2(run):
    return oc.rule_state(run.states).count_m2.tolist()


def test_scale_by_ademamix_steps(check):
    """scale_by_ademamix(b1, b2, b3, alpha, eps, eps_root): (m1_hat + alpha m2) / (sqrt(nu_hat + eps_root) +
    eps) with the slow EMA m2 not bias-corrected, against float64; count_m2 counts the updates."""
    CASES.check(check, SCALE_BY_ADEMAMIX)
    check.exact("scale_by_ademamix count_m2 after each step", _count_m2(CASES.cases[SCALE_BY_ADEMAMIX].run()),
                [list(range(1, runs.STEPS + 1))] * len(CASES.cases[SCALE_BY_ADEMAMIX].variants))


def test_ademamix_steps(check):
    """ademamix(learning_rate, b1, b2, eps, eps_root, weight_decay, mask on the kernel) with b3 and alpha as
    schedules (b3: b3_start for 3 updates, then b3; alpha: a linear warm-up over 4 updates, so 0 on the first),
    each called with the count of earlier updates: -learning_rate * (u + weight_decay * params), against
    float64."""
    CASES.check(check, ADEMAMIX_CASE)


def test_ademamix_mu_dtype(check):
    """mu_dtype='bfloat16' (ademamix, which passes it to scale_by_ademamix: the rule's state is its first part):
    init keeps all three accumulators (m1, m2 and nu, although the docstring says "the first order
    accumulator") in bfloat16, but optax 0.2.6's update returns them in float32 (mu_dtype is not kept), so a
    training loop that carries the state (lax.scan, a jitted loop with fixed carry types) raises a TypeError.
    The layouts after init and after one step golden: a fix shows as a change (read with jax.eval_shape:
    nothing is compiled or run)."""
    state0, state, updates = runs.shapes_after(optax.contrib.ademamix(0.1, mu_dtype="bfloat16"), runs.params(),
                                               steps=1)
    check.layout("ademamix/mu_bf16/state_after_init", state0)
    check.layout("ademamix/mu_bf16/state_after_steps", state)
    check.layout("ademamix/mu_bf16/updates", updates)


# -- Simplified AdEMAMix ------------------------------------------------------------------------------------------
def _simplified_state(state):
    """The rule's state (it counts in a field t, not count): the first of the alias's chain."""
    return state[0]


def _simplified_step(g, p, t, h):
    return ademamix_ref.simplified_ademamix(g, p["m"], p["n"], t, **h)


def _lerp_conditioning(t, h) -> float:
    """How much Optax's form of n, g**2 + b2 (n - g**2) (a lerp), magnifies float32 rounding, in units of u: the
    difference n - g**2 is rounded at its own size, up to max(n, g**2), and the result b2 n + (1 - b2) g**2 is at
    least min(b2, 1 - b2) times that: up to b2 / min(b2, 1 - b2) (19 at the default 0.95)."""
    return h["b2"] / min(h["b2"], 1.0 - h["b2"])


SIMPLIFIED = oc.Rule(hyper=("b1", "b2", "alpha", "eps", "eps_root"), fields={"m": "mu", "n": "nu"},
                     step=_simplified_step, start=oc.zeros("m", "n"),
                     read=lambda state: {f: getattr(_simplified_state(state), f) for f in ("m", "n")},
                     # the update divides by sqrt(n / (1 - b2**t)): both conditionings, halved by the root
                     conditioning=lambda t, h: (oc.bias_conditioning(h["b2"], t) + _lerp_conditioning(t, h)) / 2,
                     field_conditioning={"n": _lerp_conditioning})
SIMPLIFIED_DEFAULTS = dict(b1=0.99, b2=0.95, alpha=0.0, eps=1e-8, eps_root=0.0)
SIMPLIFIED_MOVED = dict(b1=0.5, b2=0.6, alpha=2.0, eps=0.3, eps_root=0.5)

SIMPLIFIED_CASE = CASES.add("simplified_ademamix", SIMPLIFIED,
                            lambda **h: optax.contrib.simplified_ademamix(**h, mask=DECAY_MASK),
                            _variants(dict(learning_rate=0.1, weight_decay=1e-4, **SIMPLIFIED_DEFAULTS),
                                        dict(learning_rate=0.02, weight_decay=0.3, **SIMPLIFIED_MOVED)), 66,
                            alias=oc.Alias(DECAY_MASK))


def _simplified_count(run):
    return _simplified_state(run.states).t.tolist()


def test_simplified_ademamix_steps(check):
    """simplified_ademamix(learning_rate, b1, b2, alpha, eps, eps_root, weight_decay, mask on the kernel):
    -learning_rate * ((m + alpha g) / (sqrt(n_hat + eps_root) + eps) + weight_decay * params), m = b1 m + g
    undamped, against float64; the rule's step count t counts the updates. The alias passes all of
    scale_by_simplified_ademamix's parameters through and its state holds the rule's: the rule's contract too."""
    CASES.check(check, SIMPLIFIED_CASE)
    check.exact(f"{SIMPLIFIED_CASE} t after each step", _simplified_count(CASES.cases[SIMPLIFIED_CASE].run()),
                [list(range(1, runs.STEPS + 1))] * len(CASES.cases[SIMPLIFIED_CASE].variants))


def test_simplified_ademamix_alpha_schedule(check):
    """alpha is typed ScalarOrSchedule, but optax 0.2.6's scale_by_simplified_ademamix (which
    simplified_ademamix passes it to) multiplies the gradient by the schedule itself, never calling it with the
    count: a schedule raises on the first update. The error type golden: a fix shows as a change (read with
    jax.eval_shape)."""
    tx = optax.contrib.simplified_ademamix(0.1, alpha=optax.linear_schedule(0.0, 2.0, 4))
    check.error_contract("simplified_ademamix/alpha_schedule", runs.shapes_after, tx, runs.params(), steps=1)
