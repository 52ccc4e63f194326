"""Step-size rules and wrappers: optax.polyak_sgd and scale_by_polyak (Polyak's step from the objective's value),
optax.lookahead (slow and fast weights) and optax.optimistic_gradient_descent, on a separable quadratic
f(w) = sum(a w**2 / 2 - a c w) over a 2-leaf tree, each configuration one jitted lax.scan over 8 steps.

References (harness/builtin/reference/stepsize.py) are NumPy float64 models of the docstrings' formulas and the
papers, fed the float32 values and gradients the library computed.
"""

import functools

import jax
import numpy as np
import optax
import pytest

from harness.builtin.quadratic import PARAMS0, TRAJECTORY_WHY, loss as _f, vec as _vec
from harness.builtin.reference import stepsize as ref
from harness.contract import trees

pytestmark = pytest.mark.family("optimizers")

F32 = np.float32
STEPS = 8
STEP_WHY = "w - step * g: terms of either sign"


def _at(tree, k):
    return _vec(jax.tree.map(lambda leaf: leaf[k], tree))


@functools.cache
def _run(make, kind):
    """kind: "value" (update takes value=), "lookahead" (LookaheadParams, gradients at the fast weights), "plain"."""
    def run(params):
        tx = make()
        if kind == "lookahead":
            params = optax.LookaheadParams.init_synced(params)
        state0 = tx.init(params)

        def step(carry, _):
            params, state = carry
            at = params.fast if kind == "lookahead" else params
            value, g = jax.value_and_grad(_f)(at)
            if kind == "value":
                u, state = tx.update(g, state, params, value=value)
            else:
                u, state = tx.update(g, state, params)
            params = optax.apply_updates(params, u)
            return (params, state), (value, g, u, params, state)

        _, seen = jax.lax.scan(step, (params, state0), None, length=STEPS)
        return state0, seen
    return jax.jit(run)


def _steps(make, kind):
    state0, (value, g, u, params, states) = jax.device_get(_run(make, kind)(PARAMS0))
    return state0, value, [_at(g, k).astype(np.float64) for k in range(STEPS)], u, params, states


def _seen(params):
    """The params each step started from (the fast weights for lookahead), as flat vectors."""
    before = [_vec(PARAMS0)] + [_at(getattr(params, "fast", params), k) for k in range(STEPS - 1)]
    return [np.asarray(w, np.float64) for w in before]


def _trajectory_scales(ws, tree):
    """Per leaf path, each step's largest |param| broadcast to the leaf's (steps, ...) shape: where golden ulps of a
    trajectory are taken (TRAJECTORY_WHY)."""
    per_step = np.array([np.max(np.abs(w)) for w in ws])
    return {path: np.broadcast_to(per_step.reshape((-1,) + (1,) * (np.ndim(leaf) - 1)), np.shape(leaf))
            for path, leaf in trees.leaves(tree).items()}


# -- Polyak step ----------------------------------------------------------------------------------------------------
_POLYAK = {  # name -> (make, the step's parameters, scaling)
    "polyak_sgd": (lambda: optax.polyak_sgd(max_learning_rate=0.15, f_min=-3.0, eps=0.1, variant="sps+"),
                   dict(f_min=-3.0, max_learning_rate=0.15, eps=0.1, variant="sps+"), 1.0),
    "scale_by_polyak": (lambda: optax.chain(optax.scale_by_polyak(f_min=-4.5, max_learning_rate=0.2, eps=0.01),
                                            optax.scale(-1.0)),
                        dict(f_min=-4.5, max_learning_rate=0.2, eps=0.01, variant="sps"), 1.0),
}


@pytest.mark.parametrize("name", sorted(_POLYAK))
def test_polyak_step(check, name):
    """8 steps: the update is -min((f - f*) / (||g||**2 + eps), gamma_max) g from the value and gradient given.
    polyak_sgd(max_learning_rate=0.15, f_min=-3 above the minimum (-4.06), eps=0.1, sps+): the gap turns negative
    and sps+ stops the steps at zero; scale_by_polyak(f_min=-4.5, max_learning_rate=0.2, eps=0.01, sps).
    max_learning_rate binds on some steps of both. Updates golden."""
    make, hyper, scaling = _POLYAK[name]
    state0, values, gs, u, params, states = _steps(make, "value")
    capped = stopped = 0
    for k in range(STEPS):
        step = ref.polyak_step(float(values[k]), gs[k], **hyper)
        capped += step == hyper["max_learning_rate"]
        stopped += step == 0.0
        check.reference(f"step {k} update", _at(u, k), -scaling * step * gs[k])
    check.exact("steps capped by max_learning_rate / stopped by sps+",
                [capped > 0, stopped > 0], [True, hyper["variant"] == "sps+"])
    check.layout(f"{name}/state_after_steps", jax.tree.map(lambda leaf: leaf[-1], states))
    check.golden_tree(f"{name}/updates", u, scales=_trajectory_scales(_seen(params), u), why=TRAJECTORY_WHY)


POLYAK_SCALED = dict(scaling=0.5, f_min=-0.6, max_learning_rate=0.8, eps=0.1, variant="sps")
POLYAK_SCALING_FORMS = {"the docstring's s min(gap / (||g||**2 + eps), max)": True,
                        "Polyak's step on sgd(s)'s output: s min(gap / (s**2 ||g||**2 + eps), max)": False}


def _polyak_sgd_scaled():
    return optax.polyak_sgd(**{k: v for k, v in POLYAK_SCALED.items() if k != "variant"})


def test_polyak_sgd_scaling(check):
    """polyak_sgd(scaling=0.5, f_min=-0.6, max_learning_rate=0.8, eps=0.1), 8 steps. Its docstring's step
    s min(gap / (||g||**2 + eps), gamma_max) does not hold for s != 1: optax 0.2.6 (and 0.2.8) chains sgd(scaling)
    before scale_by_polyak, which takes the step on u = -s g, s min(gap / (s**2 ||g||**2 + eps), gamma_max). Which
    of the two the library computes is a golden fact (step 0's update, nearest of the two); every step is then
    held to that formula in float64 (reference.stepsize.polyak_sgd_step), the updates golden."""
    state0, values, gs, u, params, states = _steps(_polyak_sgd_scaled, "value")

    def update(k, as_documented):
        return -ref.polyak_sgd_step(float(values[k]), gs[k], **POLYAK_SCALED, as_documented=as_documented) * gs[k]
    form = min(POLYAK_SCALING_FORMS, key=lambda name: float(np.max(np.abs(update(0, POLYAK_SCALING_FORMS[name])
                                                                              - _at(u, 0)))))
    check.golden_fact("polyak_sgd/scaling=0.5/form", form)
    for k in range(STEPS):  # f_min above the minimum: the gap changes sign, the step with it; the cap never binds
        check.reference(f"step {k} update", _at(u, k), update(k, POLYAK_SCALING_FORMS[form]))
    check.golden_tree("polyak_sgd/scaling=0.5/updates", u, scales=_trajectory_scales(_seen(params), u),
                      why=TRAJECTORY_WHY)


# -- lookahead ------------------------------------------------------------------------------------------------------
def _lookahead():
    return optax.lookahead(optax.sgd(0.1, momentum=0.9), sync_period=3, slow_step_size=0.5, reset_state=True)


def test_lookahead(check):
    """lookahead(sgd(0.1, momentum=0.9), sync_period=3, slow_step_size=0.5, reset_state=True), 8 steps: the fast
    weights take momentum-SGD steps (t = g + 0.9 t, w -= 0.1 t); on steps 3 and 6 the slow weights move half way
    to the fast ones, the fast weights restart from them and the momentum restarts at zero. Fast and slow weights
    against float64; updates and the state's layout golden."""
    state0, values, gs, u, params, states = _steps(_lookahead, "lookahead")

    def momentum_sgd(g, trace):
        trace = g + 0.9 * trace
        return -0.1 * trace, trace

    expected = ref.lookahead(_vec(PARAMS0), gs, momentum_sgd, 0.0, 3, 0.5, True)
    for k, (fast, slow) in enumerate(expected):
        scale = np.abs(_vec(PARAMS0)) + 0.1 * np.abs(np.stack(gs[:k + 1])).sum(0) * 10
        check.reference(f"step {k} fast weights", _at(params.fast, k), fast, scale=scale, why=STEP_WHY)
        check.reference(f"step {k} slow weights", _at(params.slow, k), slow, scale=scale, why=STEP_WHY)
    check.layout("lookahead/state_after_init", state0)
    check.layout("lookahead/state_after_steps", jax.tree.map(lambda leaf: leaf[-1], states))
    slow_fast = [np.maximum(np.abs(_at(params.fast, k)), np.abs(_at(params.slow, k))) for k in range(STEPS)]
    check.golden_tree("lookahead/params", params, scales=_trajectory_scales(slow_fast, params), why=TRAJECTORY_WHY)


# -- optimistic gradient descent ------------------------------------------------------------------------------------
def _optimistic():
    return optax.optimistic_gradient_descent(learning_rate=0.1, alpha=0.5, beta=2.0)


def test_optimistic_gradient_descent(check):
    """optimistic_gradient_descent(learning_rate=0.1, alpha=0.5, beta=2.0), 8 steps: u_t = -0.1 ((alpha + beta) g_t -
    beta g_{t-1}), the previous gradient taken as the current one on the first step (optax issue #1082), so it is
    -0.1 alpha g_0. Updates against float64 and golden."""
    state0, values, gs, u, params, states = _steps(_optimistic, "plain")
    expected = ref.optimistic_updates(gs, 0.1, 0.5, 2.0)
    for k in range(STEPS):
        previous = np.abs(gs[k - 1]) if k else np.abs(gs[0])
        check.reference(f"step {k} update", _at(u, k), expected[k], scale=0.1 * (2.5 * np.abs(gs[k]) + 2.0 * previous),
                        why="(alpha + beta) g_t - beta g_{t-1}: terms of either sign")
    check.layout("optimistic_gradient_descent/state_after_steps", jax.tree.map(lambda leaf: leaf[-1], states))
    check.golden_tree("optimistic_gradient_descent/updates", u, scales=_trajectory_scales(_seen(params), u),
                      why=TRAJECTORY_WHY)
