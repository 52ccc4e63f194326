"""Adam's variants as Optax ships them, each rule and its alias over six steps of a two-leaf tree, against
NumPy float64 models of their documented formulas (harness/builtin/reference/adam_family.py) and the
baseline's recording: lion (sign of an interpolated momentum), amsgrad (the second moment's running
maximum), adamax/adamaxw (the infinity norm), adabelief (the gradient's deviation from its momentum),
yogi (an additive second moment), radam (a rectified adaptive step), adan (Nesterov momentum estimated
from the gradient's difference: harness/builtin/reference/adan.py).

As in test_optimizers_adam.py: numeric hyperparameters traced and vmapped (defaults first, then each moved
off its default), all runs one jitted program; each step's reference starts from the state the library
stored, and the state's layout after init and after the steps is golden. Where an alias passes every
parameter of its rule through (lion, amsgrad, adamax: scale_by_lion, scale_by_amsgrad, scale_by_adamax;
adabelief's and radam's nesterov), the alias's contract is the rule's too: its state holds the rule's
state, whose every field is compared; a separate run of the rule would cost a trace (~80 ms) and pin
nothing more.
"""

import dataclasses

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin import optimizer_checks as oc
from harness.builtin import optimizer_runs as runs
from harness.builtin.reference import adam_family as ref
from harness.builtin.reference import adan as adan_ref

pytestmark = pytest.mark.family("optimizers")

DECAY_MASK = {"b": False, "w": True}


CASES = oc.Cases(layout_key=lambda name: name.split("/")[0])
_variants, _case, _check_rule = oc.variants, CASES.add, CASES.check

# -- lion ---------------------------------------------------------------------------------------------------------
LION = oc.Rule(hyper=("b1", "b2"), fields={"mu": "mu"},
               step=lambda g, p, t, h: ref.lion(g, p["mu"], **h), start=oc.zeros("mu"))
LION_RULE = _variants(dict(b1=0.9, b2=0.99), dict(b1=0.3, b2=0.5))
LION_ALIAS = _variants(dict(learning_rate=0.01, b1=0.9, b2=0.99, weight_decay=1e-3),
                       dict(learning_rate=0.05, b1=0.3, b2=0.5, weight_decay=0.4))


LION_CASE = _case("lion", LION, lambda **h: optax.lion(**h, mask=DECAY_MASK, mu_dtype=jnp.bfloat16),
                      LION_ALIAS, 42, alias=oc.Alias(DECAY_MASK))


def test_lion_steps(check):
    """lion with weight decay on the kernel only (mask) and a bfloat16 momentum (mu_dtype): -lr * (sign +
    weight_decay * params) where the mask holds, against float64 (the bfloat16 mu to bfloat16 ulps)."""
    _check_rule(check, LION_CASE)


# -- amsgrad ------------------------------------------------------------------------------------------------------
def _amsgrad_step(g, p, t, h):
    return ref.amsgrad(g, p["mu"], p["nu"], p["nu_max"], t, **h)


AMSGRAD = oc.Rule(hyper=("b1", "b2", "eps", "eps_root"), fields={"mu": "mu", "nu": "nu", "nu_max": "extra"},
                  step=_amsgrad_step, start=oc.zeros("mu", "nu", "nu_max"),
                  conditioning=oc.adam_conditioning(), field_conditioning={"nu_max": lambda t, h: oc.bias_conditioning(h["b2"], t)})
ADAM_DEFAULTS = dict(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0)
ADAM_MOVED = dict(b1=0.5, b2=0.9, eps=0.3, eps_root=0.5)


AMSGRAD_CASE = _case("amsgrad", AMSGRAD, lambda **h: optax.amsgrad(**h, mu_dtype=jnp.bfloat16),
                      _variants(dict(learning_rate=0.1, **ADAM_DEFAULTS), dict(learning_rate=0.02, **ADAM_MOVED)),
                      44, alias=oc.Alias())


def test_amsgrad_steps(check):
    """amsgrad(learning_rate, b1, b2, eps, eps_root, mu_dtype=bfloat16): -learning_rate times the rule's
    update, against float64."""
    _check_rule(check, AMSGRAD_CASE)


# -- adamax, adamaxw ----------------------------------------------------------------------------------------------
def _adamax_step(g, p, t, h):
    return ref.adamax(g, p["mu"], p["nu"], t, **h)


ADAMAX = oc.Rule(hyper=("b1", "b2", "eps"), fields={"mu": "mu", "nu": "nu"}, step=_adamax_step,
                 start=oc.zeros("mu", "nu"),
                 conditioning=lambda t, h: oc.bias_conditioning(h["b1"], t))
ADAMAX_DEFAULTS, ADAMAX_MOVED = dict(b1=0.9, b2=0.999, eps=1e-8), dict(b1=0.5, b2=0.6, eps=0.3)


ADAMAX_CASE = _case("adamax", ADAMAX, lambda **h: optax.adamax(**h),
                      _variants(dict(learning_rate=0.1, **ADAMAX_DEFAULTS), dict(learning_rate=0.02, **ADAMAX_MOVED)),
                      46, alias=oc.Alias())


def test_adamax_steps(check):
    """adamax(learning_rate, b1, b2, eps): -learning_rate times the rule's update, against float64."""
    _check_rule(check, ADAMAX_CASE)


ADAMAXW_CASE = _case("adamaxw", ADAMAX, lambda **h: optax.adamaxw(**h, mask=DECAY_MASK),
                      _variants(dict(learning_rate=0.1, weight_decay=1e-4, **ADAMAX_DEFAULTS),
                                dict(learning_rate=0.02, weight_decay=0.3, **ADAMAX_MOVED)),
                      47, alias=oc.Alias(DECAY_MASK))


def test_adamaxw_steps(check):
    """adamaxw with weight decay on the kernel only (mask): -lr * (u + weight_decay * params), against float64."""
    _check_rule(check, ADAMAXW_CASE)


# -- adabelief ----------------------------------------------------------------------------------------------------
def _belief_step(nesterov):
    return lambda g, p, t, h: ref.belief(g, p["mu"], p["nu"], t, nesterov=nesterov, **h)


def _belief_magnitude(nesterov):
    """The numerator over |g| and |mu|, the denominator the true s (the abs trick would change (g - m)^2)."""
    def magnitude(g, p, t, h):
        numerator = ref.belief(np.abs(g), np.abs(p["mu"]), p["nu"], t, nesterov=nesterov, **{**h, "eps": 0.0})
        actual = ref.belief(g, p["mu"], p["nu"], t, nesterov=nesterov, **h)
        return np.abs(numerator.update * np.sqrt(numerator.nu / (1 - h["b2"] ** t))) / (
            np.sqrt(actual.nu / (1 - h["b2"] ** t)) + h["eps"])
    return magnitude


def _belief(nesterov):
    return oc.Rule(hyper=("b1", "b2", "eps", "eps_root"), fields={"mu": "mu", "nu": "nu"},
                   step=_belief_step(nesterov), start=oc.zeros("mu", "nu"), magnitude=_belief_magnitude(nesterov),
                   conditioning=oc.adam_conditioning(nesterov))


BELIEF_DEFAULTS = dict(b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16)
BELIEF_MOVED = dict(b1=0.5, b2=0.9, eps=0.3, eps_root=0.5)


SCALE_BY_BELIEF_CASE = _case("scale_by_belief", _belief(False), lambda **h: optax.scale_by_belief(**h),
                             _variants(BELIEF_DEFAULTS, BELIEF_MOVED), 48)


def test_scale_by_belief_steps(check):
    """scale_by_belief(b1, b2, eps, eps_root) (its nesterov: test_adabelief_steps): m_hat / (sqrt(s_hat) + eps)
    with s the moving average of (g - m)^2 plus eps_root, against float64."""
    _check_rule(check, SCALE_BY_BELIEF_CASE)


ADABELIEF_CASE = _case("adabelief", _belief(True), lambda **h: optax.adabelief(**h, nesterov=True),
                      _variants(dict(learning_rate=0.1, **BELIEF_DEFAULTS), dict(learning_rate=0.02, **BELIEF_MOVED)),
                      49, alias=oc.Alias())


def test_adabelief_steps(check):
    """adabelief(learning_rate, b1, b2, eps, eps_root, nesterov=True): -learning_rate times the rule's update."""
    _check_rule(check, ADABELIEF_CASE)


# -- yogi ---------------------------------------------------------------------------------------------------------
def _yogi_step(g, p, t, h):
    return ref.yogi(g, p["mu"], p["nu"], t, **{k: v for k, v in h.items() if k != "initial_accumulator_value"})


def _yogi_start(shape, h):
    return {"mu": np.full(shape, h["initial_accumulator_value"]), "nu": np.full(shape, h["initial_accumulator_value"])}


YOGI = oc.Rule(hyper=("b1", "b2", "eps", "eps_root", "initial_accumulator_value"), fields={"mu": "mu", "nu": "nu"},
               step=_yogi_step, start=_yogi_start,
               conditioning=oc.adam_conditioning())
YOGI_DEFAULTS = dict(b1=0.9, b2=0.999, eps=1e-3, eps_root=0.0, initial_accumulator_value=1e-6)


SCALE_BY_YOGI_CASE = _case("scale_by_yogi", YOGI, lambda **h: optax.scale_by_yogi(**h),
                      _variants(YOGI_DEFAULTS, dict(b1=0.5, b2=0.6, eps=0.3, eps_root=0.5,
                                                    initial_accumulator_value=2.0)), 50)


def test_scale_by_yogi_steps(check):
    """scale_by_yogi(b1, b2, eps, eps_root, initial_accumulator_value): v <- v - (1 - b2) sign(v - g^2) g^2,
    m_t / (sqrt(v + eps_root) + eps), both accumulators starting at the initial value, against float64."""
    _check_rule(check, SCALE_BY_YOGI_CASE)


def _yogi_alias_rule():
    """yogi leaves eps_root at 0 and the initial accumulators at 1e-6."""
    rule = dataclasses.replace(YOGI, start=lambda shape, h: _yogi_start(shape, {"initial_accumulator_value": 1e-6}),
                               hyper=("b1", "b2", "eps"))
    rule = dataclasses.replace(rule, step=lambda g, p, t, h: _yogi_step(g, p, t, {**h, "eps_root": 0.0}))
    return rule


YOGI_CASE = _case("yogi", _yogi_alias_rule(), lambda **h: optax.yogi(**h),
                  _variants(dict(learning_rate=0.1, b1=0.9, b2=0.999, eps=1e-3), dict(learning_rate=0.02, b1=0.5, b2=0.6, eps=0.3)),
                  51, alias=oc.Alias())


def test_yogi_steps(check):
    """yogi(learning_rate, b1, b2, eps): -learning_rate times the rule's update (eps_root 0, initial 1e-6)."""
    _check_rule(check, YOGI_CASE)


# -- radam --------------------------------------------------------------------------------------------------------
def _radam(nesterov):
    return oc.Rule(hyper=("b1", "b2", "eps", "eps_root", "threshold"), fields={"mu": "mu", "nu": "nu"},
                   step=lambda g, p, t, h: ref.radam(g, p["mu"], p["nu"], t, nesterov=nesterov, **h),
                   start=oc.zeros("mu", "nu"),
                   conditioning=lambda t, h: oc.adam_conditioning(nesterov)(t, h) + oc.rectifier_conditioning(t, h))


# Not b2's default 0.999: there rho_5 = 4.996 (float64) lies within float32's rounding of rho (about 0.06)
# of the default threshold 5, so whether step 5 is rectified (an update 40x smaller) is rounding noise a
# contract would report as a change. At 0.99 (rounding about 3e-4) and 0.9 every rho_t of six steps is at
# least 0.04 from 5 and from 4.5, and both branches are taken.
RADAM_DEFAULTS = dict(b1=0.9, b2=0.99, eps=1e-8, eps_root=0.0, threshold=5.0)
RADAM_MOVED = dict(b1=0.5, b2=0.9, eps=0.3, eps_root=0.5, threshold=4.5)
SCALE_BY_RADAM_CASE = _case("scale_by_radam", _radam(False), lambda **h: optax.scale_by_radam(**h),
                            _variants(RADAM_DEFAULTS, RADAM_MOVED) + [dict(RADAM_DEFAULTS, b2=0.9, threshold=4.5)], 52)


def test_scale_by_radam_steps(check):
    """scale_by_radam(b1, b2, eps, eps_root, threshold) (nesterov: test_radam_steps): m_hat until rho_t
    passes the threshold, then the rectified Adam step, against float64."""
    _check_rule(check, SCALE_BY_RADAM_CASE)


RADAM_CASE = _case("radam", _radam(True), lambda **h: optax.radam(**h, nesterov=True),
                   _variants(dict(learning_rate=0.1, **RADAM_DEFAULTS), dict(learning_rate=0.02, **RADAM_MOVED)),
                   53, alias=oc.Alias())


def test_radam_steps(check):
    """radam(learning_rate, b1, b2, eps, eps_root, threshold, nesterov=True): -learning_rate times the rule's
    update."""
    _check_rule(check, RADAM_CASE)


# -- adan, scale_by_adan ------------------------------------------------------------------------------------------
def _adan_rule(weight):
    """Adan's reference (harness/builtin/reference/adan.py) with the gradient difference weighted by weight(b2)."""
    def step(reference):
        return lambda g, p, t, h: reference(g, p["g"], p["m"], p["v"], p["n"], t, **h,
                                             difference_weight=weight(h["b2"]))
    return oc.Rule(hyper=("b1", "b2", "b3", "eps", "eps_root"), fields={"m": "m", "v": "v", "n": "n", "g": "g"},
                   step=step(adan_ref.adan), operands=step(adan_ref.adan_magnitudes),
                   start=oc.zeros("m", "v", "n", "g"), read=lambda state: state[0]._asdict(),
                   conditioning=lambda t, h: (oc.bias_conditioning(h["b1"], t) + oc.bias_conditioning(h["b2"], t)
                                              + oc.bias_conditioning(h["b3"], t) / 2))


ADAN_WEIGHTS = {"1 - b2 (optax PR #1715)": adan_ref.optax_weight, "b2 (the paper's 1 - beta2)": adan_ref.paper_weight}
ADAN_DEFAULTS = dict(learning_rate=0.1, b1=0.98, b2=0.92, b3=0.99, eps=1e-8, eps_root=1e-8, weight_decay=0.0)
# b2 below 0.5: off 0.5, where both weights agree, and where 1 - b2 and 1 % b2 differ (above 0.5 they are the
# same number: the mutant that survived the sampled transform.py run); weight_decay with the mask (kernel only)
ADAN_MOVED = dict(learning_rate=0.02, b1=0.5, b2=0.3, b3=0.7, eps=0.3, eps_root=0.5, weight_decay=0.3)
ADAN_CASE = _case("adan", _adan_rule(adan_ref.optax_weight), lambda **h: optax.adan(**h, mask=DECAY_MASK),
                  _variants(ADAN_DEFAULTS, ADAN_MOVED), 54, alias=oc.Alias(DECAY_MASK))


def _closest(candidates: dict, value, expected_of) -> str:
    """The candidate name whose float64 expectation lies nearest the library's value."""
    return min(candidates, key=lambda name: float(np.max(np.abs(expected_of(candidates[name]) - value))))


def _adan_conventions(run, grads, variants) -> tuple[str, str]:
    """Which gradient-difference weight the library computes (n at step 2 of the defaults, from the state it
    kept after step 1), and which weight-decay form (step 1 of the weight-decay variant's kernel): the
    docstring's proximal (theta - lr u) / (1 + lr wd) - theta, or the decoupled -lr (u + wd theta)."""
    state, g, h = run.states[0], runs.f64(grads["w"]), {n: oc.f32(x) for n, x in variants[0].items()}
    previous = [runs.f64(getattr(state, f)["w"][0, 0]) for f in "gmvn"]

    def n_at_step_2(weight):
        return adan_ref.adan(g[1], *previous, 2, **{n: h[n] for n in ("b1", "b2", "b3", "eps", "eps_root")},
                             difference_weight=weight(h["b2"])).n
    weight = _closest(ADAN_WEIGHTS, runs.f64(state.n["w"][0, 1]), n_at_step_2)
    v = next(i for i, variant in enumerate(variants) if variant["weight_decay"] != 0.0)
    h = {n: oc.f32(x) for n, x in variants[v].items()}
    u = adan_ref.adan(g[0], 0 * g[0], 0 * g[0], 0 * g[0], 0 * g[0], 1, difference_weight=0.0,
                      **{n: h[n] for n in ("b1", "b2", "b3", "eps", "eps_root")}).update
    theta, lr, wd = runs.f64(run.params["w"][v, 0]), h["learning_rate"], h["weight_decay"]
    forms = {"decoupled: -lr (u + weight_decay params)": -lr * (u + wd * theta),
             "proximal: (params - lr u) / (1 + lr weight_decay) - params": (theta - lr * u) / (1 + lr * wd) - theta}
    form = _closest(forms, runs.f64(run.updates["w"][v, 0]), lambda expected: expected)
    return weight, form


def test_adan_steps(check):
    """adan(learning_rate, b1, b2, b3, eps, eps_root, weight_decay, mask=kernel only), which passes b1..eps_root
    through to scale_by_adan (its state is compared field by field: m, v, n, the previous g): every step
    against Algorithm 1 of Xie et al. in the defaults' convention (reference/adan.py). Two conventions are
    golden facts, the reference then run with the library's: the gradient difference's weight (Optax's
    1 - b2, not the paper's b2) and the weight decay's form (decoupled, not the docstring's proximal)."""
    case = CASES.cases[ADAN_CASE]
    run, grads, variants = case.run(), case.grads, case.variants
    weight, form = _adan_conventions(run, grads, variants)
    check.golden_fact("adan/difference_weight", weight)
    check.golden_fact("adan/weight_decay_form", form)
    check.exact("adan t after each step", run.states[0].t.tolist(), [list(range(1, runs.STEPS + 1))] * len(variants))
    _check_rule(check, ADAN_CASE, _adan_rule(ADAN_WEIGHTS[weight]), golden_at_operands=True)
