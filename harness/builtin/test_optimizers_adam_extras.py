"""The rest of the Adam family as Optax ships it: the optimistic rules (optimistic_adam, optimistic_adam_v2,
and through v2's alpha and beta, which it passes through, optax.scale_by_optimistic_gradient), NovoGrad (a per-layer second moment) and LAMB (Adam with a per-layer
trust ratio), over six steps against NumPy float64 models of their documented formulas
(harness/builtin/reference/adam_family.py) and the baseline's recording; built as test_optimizers_adam.py
(traced, vmapped hyperparameters; one jitted program for the module).
"""


import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin import optimizer_checks as oc
from harness.builtin import optimizer_runs as runs
from harness.builtin.reference import adam_family as ref

pytestmark = pytest.mark.family("optimizers")

DECAY_MASK = {"b": False, "w": True}


CASES = oc.Cases()
_variants, _case, _check_rule = oc.variants, CASES.add, CASES.check

# -- scale_by_optimistic_gradient -----------------------------------------------------------------------------------
def _find(state, field):
    """The first named tuple in a chain's state that has the field."""
    if hasattr(state, "_fields") and field in state._fields:
        return state
    for part in state if isinstance(state, tuple) else ():
        found = _find(part, field)
        if found is not None:
            return found
    return None


OGD = oc.Rule(hyper=("alpha", "beta"), fields={"previous_gradient": "mu"},
              step=lambda g, p, t, h: ref.optimistic(g, p["previous_gradient"], t, **h),
              start=oc.zeros("previous_gradient"),
              read=lambda s: {"previous_gradient": _find(s, "previous_gradient").previous_gradient},
              magnitude=lambda g, p, t, h: (h["alpha"] + h["beta"]) * np.abs(g) + h["beta"] * np.abs(
                  g if t == 1 else p["previous_gradient"]))
# -- optimistic_adam, optimistic_adam_v2 ----------------------------------------------------------------------------
def _optimistic_adam_step(g, p, t, h, scale, nesterov=False):
    """r_t: Adam's step (with Nesterov momentum: optimistic_adam's default; the other cases run nesterov=False,
    off it, and a bfloat16 mu); then the optimistic combination with r_{t-1},
    scaled: optimistic_adam's u = -(lr + o) r_t + o r_{t-1} (alpha = lr, beta = o); v2's -lr ((alpha + beta)
    r_t - beta r_{t-1})."""
    adam = ref.adam(g, p["mu"], p["nu"], t, b1=h["b1"], b2=h["b2"], eps=h["eps"], eps_root=h["eps_root"],
                    nesterov=nesterov)
    alpha, beta, factor = scale(h)
    combined = ref.optimistic(adam.update, p["previous_gradient"], t, alpha=alpha, beta=beta)
    return ref.Moments(-factor * combined.update, adam.mu, adam.nu, adam.update)


def _optimistic_magnitude(scale, nesterov=False):
    """(alpha + beta) |r_t| + beta |r_{t-1}|, r_t over |g| and |mu| (the combination subtracts r_{t-1})."""
    def magnitude(g, p, t, h):
        r = ref.adam(np.abs(g), np.abs(p["mu"]), p["nu"], t, b1=h["b1"], b2=h["b2"], eps=h["eps"],
                     eps_root=h["eps_root"], nesterov=nesterov).update
        alpha, beta, factor = scale(h)
        return factor * ((alpha + beta) * r + beta * (r if t == 1 else np.abs(p["previous_gradient"])))
    return magnitude


def _optimistic(scale, hyper, nesterov=False):
    return oc.Rule(magnitude=_optimistic_magnitude(scale, nesterov), hyper=hyper, fields={"mu": "mu", "nu": "nu", "previous_gradient": "extra"},
                   step=lambda g, p, t, h: _optimistic_adam_step(g, p, t, h, scale, nesterov),
                   start=oc.zeros("mu", "nu", "previous_gradient"),
                   conditioning=oc.adam_conditioning(),
                   field_conditioning={"previous_gradient": oc.adam_conditioning()},
                   read=lambda s: {"mu": _find(s, "mu").mu, "nu": _find(s, "nu").nu,
                                   "previous_gradient": _find(s, "previous_gradient").previous_gradient})


ADAM_HYPER = ("b1", "b2", "eps", "eps_root")
ADAM_DEFAULTS, ADAM_MOVED = dict(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0), dict(b1=0.5, b2=0.9, eps=0.3, eps_root=0.5)
OPTIMISTIC = _optimistic(lambda h: (h["learning_rate"], h["optimism"], 1.0), ("learning_rate", "optimism", *ADAM_HYPER))
OPTIMISTIC_CASE = _case(
    "optimistic_adam", OPTIMISTIC, lambda **h: optax.optimistic_adam(**h, nesterov=False, mu_dtype=jnp.bfloat16),
    _variants(dict(learning_rate=0.1, optimism=0.1, **ADAM_DEFAULTS), dict(learning_rate=0.02, optimism=0.5, **ADAM_MOVED)),
    62)
# nesterov at optimistic_adam's default (True): Adam's step with Nesterov momentum inside the combination
OPTIMISTIC_NESTEROV = _optimistic(lambda h: (h["learning_rate"], h["optimism"], 1.0),
                                  ("learning_rate", "optimism", *ADAM_HYPER), nesterov=True)
OPTIMISTIC_NESTEROV_CASE = _case(
    "optimistic_adam/nesterov", OPTIMISTIC_NESTEROV, lambda **h: optax.optimistic_adam(**h, mu_dtype=jnp.bfloat16),
    _variants(dict(learning_rate=0.1, optimism=0.1, **ADAM_DEFAULTS), dict(learning_rate=0.02, optimism=0.5, **ADAM_MOVED)),
    67)
OPTIMISTIC_V2 = _optimistic(lambda h: (h["alpha"], h["beta"], h["learning_rate"]),
                            ("learning_rate", "alpha", "beta", *ADAM_HYPER))
OPTIMISTIC_V2_CASE = _case(
    "optimistic_adam_v2", OPTIMISTIC_V2, lambda **h: optax.optimistic_adam_v2(**h, nesterov=False, mu_dtype=jnp.bfloat16),
    _variants(dict(learning_rate=0.1, alpha=1.0, beta=1.0, **ADAM_DEFAULTS),
              dict(learning_rate=0.02, alpha=0.3, beta=2.5, **ADAM_MOVED)), 63)


def test_optimistic_adam_steps(check):
    """optimistic_adam(learning_rate, optimism, b1, b2, eps, eps_root, nesterov=False, mu_dtype=bfloat16):
    -lr r_t - o (r_t - r_{t-1}) with r_t Adam's step, against float64 (optimism at the learning rate, what
    its documented None means, and moved)."""
    _check_rule(check, OPTIMISTIC_CASE)


def test_optimistic_adam_nesterov_steps(check):
    """optimistic_adam(learning_rate, optimism, b1, b2, eps, eps_root, mu_dtype=bfloat16) at its default
    nesterov=True: r_t Adam's step with Nesterov momentum, against float64."""
    _check_rule(check, OPTIMISTIC_NESTEROV_CASE)


def test_optimistic_adam_v2_steps(check):
    """optimistic_adam_v2(learning_rate, alpha, beta, b1, b2, eps, eps_root, nesterov=False,
    mu_dtype=bfloat16): -lr ((alpha + beta) r_t - beta r_{t-1}), against float64."""
    _check_rule(check, OPTIMISTIC_V2_CASE)


# -- novograd -------------------------------------------------------------------------------------------------------
def _novograd_step(g, p, t, h, params):
    return ref.novograd(g, p["mu"], p["nu"], t, params, **h)


NOVOGRAD = oc.Rule(hyper=("b1", "b2", "eps", "eps_root", "weight_decay"), fields={"mu": "mu", "nu": "nu"},
                   step=_novograd_step, uses_params=True,
                   start=lambda shape, h: {"mu": np.zeros(shape), "nu": np.zeros(())})
NOVOGRAD_DEFAULTS = dict(b1=0.9, b2=0.25, eps=1e-8, eps_root=0.0, weight_decay=0.0)
NOVOGRAD_MOVED = dict(b1=0.5, b2=0.6, eps=0.3, eps_root=0.5, weight_decay=0.2)
NOVOGRAD_RULE_CASE = _case("scale_by_novograd", NOVOGRAD,
                           lambda **h: optax.scale_by_novograd(**h, mu_dtype=jnp.bfloat16),
                           _variants(NOVOGRAD_DEFAULTS, NOVOGRAD_MOVED), 64)
NOVOGRAD_CASE = _case("novograd", NOVOGRAD, lambda **h: optax.novograd(**h),
                      _variants(dict(learning_rate=0.1, **NOVOGRAD_DEFAULTS, ),
                                dict(learning_rate=0.02, **NOVOGRAD_MOVED)), 65,
                      alias=oc.Alias(adds_weight_decay=False))


def test_scale_by_novograd_steps(check):
    """scale_by_novograd(b1, b2, eps, eps_root, weight_decay, mu_dtype=bfloat16): a per-leaf second moment of
    ||g||^2 and m <- b1 m + g / (sqrt(v) + eps) + weight_decay * params, against float64 (mu to bfloat16
    ulps)."""
    _check_rule(check, NOVOGRAD_RULE_CASE)


def test_novograd_steps(check):
    """novograd(learning_rate, b1, b2, eps, eps_root, weight_decay): -learning_rate times the rule's m."""
    _check_rule(check, NOVOGRAD_CASE)


# -- lamb -----------------------------------------------------------------------------------------------------------
def _decays(params) -> bool:
    """Whether DECAY_MASK decays this leaf (the leaves of LAYOUT differ in shape)."""
    return DECAY_MASK[next(k for k, shape in runs.LAYOUT.items() if shape == np.shape(params))]


def _lamb_direction(g, p, t, h, params, absolute=False):
    adam = ref.adam(g, p["mu"], p["nu"], t, b1=h["b1"], b2=h["b2"], eps=h["eps"], eps_root=h["eps_root"])
    return adam, adam.update + (h["weight_decay"] * params if _decays(params) else 0.0)


def _lamb_step(g, p, t, h, params):
    """optax.lamb's documented chain: Adam's step, plus weight_decay * params where the mask holds, scaled
    per leaf by the trust ratio, times -learning_rate."""
    adam, direction = _lamb_direction(g, p, t, h, params)
    return ref.Moments(-h["learning_rate"] * ref.trust_ratio(direction, params), adam.mu, adam.nu)


LAMB = oc.Rule(hyper=("learning_rate", "b1", "b2", "eps", "eps_root", "weight_decay"), fields={"mu": "mu", "nu": "nu"},
               step=_lamb_step, uses_params=True, start=oc.zeros("mu", "nu"),
               conditioning=oc.adam_conditioning())
LAMB_CASE = _case("lamb", LAMB, lambda **h: optax.lamb(**h, mask=DECAY_MASK),
                  _variants(dict(learning_rate=0.1, weight_decay=0.0, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0),
                            dict(learning_rate=0.02, weight_decay=0.3, b1=0.5, b2=0.9, eps=0.3, eps_root=0.5)), 66)


def test_lamb_steps(check):
    """lamb(learning_rate, b1, b2, eps, eps_root, weight_decay, mask): Adam's step plus weight decay on the
    kernel only, times ||params|| / ||that|| per leaf, times -learning_rate, against float64."""
    _check_rule(check, LAMB_CASE)
