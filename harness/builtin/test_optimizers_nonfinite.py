"""Non-finite values through every optimizer and update rule: what a NaN or an infinity in a gradient, or in the
params, becomes in the updates and the params after it.

Releases change this without touching a finite value: a transform that starts zeroing what meets a NaN (0 x NaN),
a sign-based rule that maps NaN to a finite step, weight decay skipped at 0 (so NaN params no longer give NaN
updates), a global norm that spreads one leaf's NaN to every leaf. The other optimizer checks see only finite
inputs, so none of these can show there. Here each one takes two steps from finite params: the first gradient
holds NaN, +inf and -inf in one leaf beside a finite element and a finite leaf, the second is finite (so the
params the first step made non-finite reach the second update). Each element's finiteness after each step (f
finite, n NaN, + +inf, - -inf: harness.builtin.edges.finiteness) is a golden fact, exact on every host. An
optimizer taking weight_decay also takes one step with weight_decay=0 from params holding NaN and inf under a
finite gradient.

Which ones: every in-scope optimizer, update rule and weight decay of the coverage ledger, built from its required
arguments (ARGUMENTS where it needs more than a learning rate), less those set aside with why (SET_ASIDE).
"""

import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin import defaults
from harness.builtin.edges import finiteness

pytestmark = pytest.mark.family("optimizers")

C = 0.05  # the learning rate (and step size) of every one
PARAMS = {"w": np.asarray([[0.5, -1.0], [2.0, 0.25]], np.float32), "b": np.asarray([0.1, -0.3, 0.7], np.float32)}
FIRST = {"w": np.asarray([[np.nan, np.inf], [-np.inf, 0.5]], np.float32), "b": np.asarray([0.3, -0.2, 0.1], np.float32)}
SECOND = {"w": np.asarray([[0.2, -0.4], [0.6, -0.1]], np.float32), "b": np.asarray([-0.5, 0.25, 0.4], np.float32)}
NONFINITE_PARAMS = {"w": np.asarray([[np.nan, np.inf], [-np.inf, 0.5]], np.float32), "b": PARAMS["b"]}

# The arguments beyond a learning rate each one requires (the signature's parameters without a default), and the
# extra arguments its update requires (value= for the step sizes computed from the loss).
ARGUMENTS = {
    "optax.add_noise": dict(eta=0.01, gamma=0.55, key=0),
    "optax.scale": dict(step_size=-C),
    "optax.contrib.mechanize": dict(base_optimizer=optax.sgd(C)),
    "optax.contrib.schedule_free": dict(base_optimizer=optax.sgd(C), learning_rate=C),
    "optax.add_decayed_weights": dict(weight_decay=1e-2),
}
UPDATE_ARGUMENTS = {name: {"value": np.float32(1.0)} for name in (
    "optax.contrib.momo", "optax.contrib.momo_adam", "optax.polyak_sgd", "optax.scale_by_polyak")}
SET_ASIDE = {
    "optax.lbfgs": "its update takes value, grad and value_fn (its line search): test_optimizers_lbfgs",
    "optax.scale_by_zoom_linesearch": "a line search: its update takes value, grad and value_fn",
    "optax.scale_by_backtracking_linesearch": "a line search: its update takes value, grad and value_fn",
    "optax.contrib.sophia": "its update takes obj_fn (its Hessian estimator): test_optimizers_contrib",
    "optax.contrib.sam": "it alternates two optimizers over its own adversarial params: test_optimizers_contrib",
    "optax.lookahead": "its params are LookaheadParams (fast and slow), not the params a step is given",
    "optax.contrib.schedule_free_eval_params": "not a transform: the params to evaluate, from a state",
    "optax.scale_gradient": "not a transform: it scales the gradient flowing back through its inputs",
    "optax.contrib.scale_by_muon": "matrices only (its orthogonalisation of a vector leaf raises): optax.contrib.muon "
                                   "routes the vector to Adam and is run here",
}
AREAS = ("optimizer", "update_rule", "weight_decay")
CALLABLES = tuple(sorted(n for area in AREAS for n in defaults.ledger_in_scope_of(area)))
RUN = tuple(n for n in CALLABLES if n not in SET_ASIDE)
TAKING_WEIGHT_DECAY = set(defaults.ledger_params_of("optimizer", "weight_decay")) | {"optax.add_decayed_weights"}


def _make(name: str, **given):
    """The transform, built from the arguments it requires (a learning rate C where it takes one) and `given`."""
    fn = defaults.resolve(name)
    required = {p.name for p in inspect.signature(fn).parameters.values()
                if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    arguments = {"learning_rate": C} if "learning_rate" in required else {}
    return fn(**{**arguments, **ARGUMENTS.get(name, {}), **given})


def _finiteness(tree) -> dict[str, str]:
    return {k: finiteness(v) for k, v in sorted(jax.tree_util.tree_map(np.asarray, tree).items())}


@functools.cache
def _steps(name: str) -> dict:
    """Two steps from finite params (NaN, +inf, -inf in the first gradient), and where it takes weight decay one
    step at weight_decay=0 from params holding them: one jitted program for the callable."""
    extra = UPDATE_ARGUMENTS.get(name, {})
    tx = _make(name)
    decay_off = _make(name, weight_decay=0.0) if name in TAKING_WEIGHT_DECAY else None

    def program(params, first, second, nonfinite_params):
        state = tx.init(params)
        u1, state = tx.update(first, state, params, **extra)
        params1 = optax.apply_updates(params, u1)
        u2, _ = tx.update(second, state, params1, **extra)
        out = {"step 1 updates": u1, "step 2 updates": u2, "params after step 2": optax.apply_updates(params1, u2)}
        if decay_off is not None:
            out["weight_decay=0, NaN and inf params: updates"] = decay_off.update(
                second, decay_off.init(nonfinite_params), nonfinite_params, **extra)[0]
        return out

    return jax.device_get(jax.jit(program)(PARAMS, FIRST, SECOND, NONFINITE_PARAMS))


@pytest.mark.parametrize("name", RUN)
def test_nonfinite_through_the_update(check, name):
    """Each element's finiteness in the updates of the first step (NaN, +inf and -inf in the gradient's w, b
    finite), of the second (a finite gradient, the params the first step made), in the params after both, and
    (taking weight_decay) in the updates of weight_decay=0 from NaN and inf params: a golden fact."""
    defaults.resolve(name)  # a callable this stack lacks: not applicable here
    check.describe_input(f"{name}: params w {PARAMS['w'].tolist()}, b {PARAMS['b'].tolist()}; gradients "
                         f"w {FIRST['w'].tolist()}, b {FIRST['b'].tolist()}, then finite")
    found = {what: _finiteness(tree) for what, tree in _steps(name).items()}
    check.golden_fact(f"nonfinite/{name}", found)


def test_every_transform_is_run_or_set_aside():
    """Derived from the ledger, not listed: each in-scope optimizer, update rule and weight decay is run here or
    set aside with why; each is built from what it requires (ARGUMENTS names the rest); nothing set aside or
    given arguments that the ledger no longer has."""
    assert len(RUN) >= 60, f"the ledger gave only {RUN}"
    stale = (set(SET_ASIDE) | set(ARGUMENTS) | set(UPDATE_ARGUMENTS)) - set(CALLABLES)
    assert not stale, f"named here, yet not in the ledger's areas {AREAS}: {sorted(stale)}"
    unbuildable = []
    for name in RUN:
        fn = defaults.resolve(name)
        required = {p.name for p in inspect.signature(fn).parameters.values()
                    if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        if required - {"learning_rate"} - set(ARGUMENTS.get(name, {})):
            unbuildable.append(f"{name} requires {sorted(required - {'learning_rate'})}")
    assert not unbuildable, f"give their arguments in ARGUMENTS or set them aside: {unbuildable}"

