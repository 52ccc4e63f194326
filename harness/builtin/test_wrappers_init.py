"""Every wrapper that creates an optimizer's state creates it from the params the user passes.

A wrapper's state holds its inner optimizer's `init(params)`. With the optimizers the other checks drive
(Adam's moments, a counter) that state does not depend on the params' values, so a wrapper initialising its
inner optimizer from other params (zeros of the same shapes, a stale tree) would pass them all. Here the inner
optimizer is schedule-free SGD, whose state keeps `z`, documented as initialised to the params themselves; the
params are neither zeros nor ones. Each wrapper's state, from the flax train states to every Optax callable
that takes a GradientTransformation (derived from the signatures: `test_every_wrapper_is_here`), must hold the
inner state with `z` equal to the params given, exactly (a formula: z_0 = x_0; no golden value), leaf by leaf
where a mask or partition routes only some leaves to it; and as many inner states as the wrapper drives.
"""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

pytestmark = pytest.mark.family("wrappers")

PARAMS = {"kernel": np.asarray([[0.5, -1.25, 2.0], [0.75, -0.125, -3.5]], np.float32),
          "bias": np.asarray([0.3, -0.7, 1.9], np.float32)}  # neither zeros nor ones, every leaf distinct
ALL, KERNEL = {"kernel": True, "bias": True}, {"kernel": True, "bias": False}


def _inner():
    return optax.contrib.schedule_free_sgd(learning_rate=0.1)


def _flax_optimizer(cls):
    def init(params):
        nnx = pytest.importorskip("flax.nnx")

        class Model(nnx.Module):
            def __init__(self):
                self.kernel = nnx.Param(jnp.asarray(params["kernel"]))
                self.bias = nnx.Param(jnp.asarray(params["bias"]))

        return cls(nnx)(Model(), _inner(), wrt=nnx.Param).opt_state
    return init


def _train_state(params):
    train_state = pytest.importorskip("flax.training.train_state")
    return train_state.TrainState.create(apply_fn=None, params=params, tx=_inner()).opt_state


# wrapper (its ledger name) -> (init from params, inner states its state holds, the leaves routed to them)
WRAPPERS = {
    "flax.nnx.Optimizer": (_flax_optimizer(lambda nnx: nnx.Optimizer), 1, ALL),
    "flax.nnx.ModelAndOptimizer": (_flax_optimizer(lambda nnx: nnx.ModelAndOptimizer), 1, ALL),
    "flax.training.train_state.TrainState.create": (_train_state, 1, ALL),
    "optax.MultiSteps": (lambda p: optax.MultiSteps(_inner(), every_k_schedule=2).init(p), 1, ALL),
    "optax.inject_hyperparams": (
        lambda p: optax.inject_hyperparams(optax.contrib.schedule_free_sgd)(learning_rate=0.1).init(p), 1, ALL),
    "optax.apply_if_finite": (lambda p: optax.apply_if_finite(_inner(), max_consecutive_errors=2).init(p), 1, ALL),
    "optax.chain": (lambda p: optax.chain(optax.clip(1.0), _inner()).init(p), 1, ALL),
    "optax.named_chain": (lambda p: optax.named_chain(("clip", optax.clip(1.0)), ("sf", _inner())).init(p), 1, ALL),
    "optax.masked": (lambda p: optax.masked(_inner(), KERNEL).init(p), 1, KERNEL),
    "optax.partition": (lambda p: optax.partition({"a": _inner(), "b": optax.sgd(0.1)},
                                                  {"kernel": "a", "bias": "b"}).init(p), 1, KERNEL),
    "optax.selective_transform": (lambda p: optax.selective_transform(_inner(), freeze_mask=KERNEL).init(p), 1,
                                  {"kernel": False, "bias": True}),
    "optax.conditionally_mask": (
        lambda p: optax.conditionally_mask(_inner(), lambda step: step > 0).init(p), 1, ALL),
    "optax.conditionally_transform": (
        lambda p: optax.conditionally_transform(_inner(), lambda step: step > 0).init(p), 1, ALL),
    "optax.lookahead": (lambda p: optax.lookahead(_inner(), sync_period=2, slow_step_size=0.5).init(
        optax.LookaheadParams.init_synced(p)), 1, ALL),
    "optax.contrib.schedule_free": (lambda p: optax.contrib.schedule_free(_inner(), learning_rate=0.1).init(p), 2,
                                    ALL),
    "optax.contrib.mechanize": (lambda p: optax.contrib.mechanize(_inner()).init(p), 1, ALL),
    "optax.contrib.sam": (lambda p: optax.contrib.sam(_inner(), _inner(), sync_period=2).init(p), 2, ALL),
    "optax.contrib.sophia": (lambda p: optax.contrib.sophia(0.1, hessian_diagonal_fn=_inner()).init(p), 1, ALL),
}
# Callables with a GradientTransformation parameter that is no inner optimizer of the user's params.
NOT_WRAPPERS = {
    "optax.lbfgs": "linesearch: a line search's state holds values and gradients, not the params",
}


def _states(tree) -> list:
    """Every schedule-free state in the tree, outermost first (one inside another's base state too)."""
    kind = type(_inner().init(PARAMS))
    found = []
    for s in jax.tree.leaves(tree, is_leaf=lambda x: isinstance(x, kind)):
        if isinstance(s, kind):
            found += [s, *_states(s.base_optimizer_state)]
    return found


def _z_leaves(state) -> dict:
    """z's leaves by name ('kernel', 'bias'): a masked or partitioned state holds some of them."""
    z = state.z if hasattr(state, "z") else state["z"]
    found = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(z)[0]:
        name = next(getattr(k, "key", getattr(k, "name", None)) for k in reversed(path))
        found[name] = np.asarray(leaf)
    return found


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_init_from_the_params_given(check, wrapper):
    """The wrapper's state holds its inner optimizer's init(params) for the params given: z = params, exactly."""
    init, count, routed = WRAPPERS[wrapper]
    check.describe_input(f"{wrapper} around schedule_free_sgd(0.1), params kernel (2, 3) and bias (3,) of "
                         f"distinct values, neither zeros nor ones")
    state = init({k: jnp.asarray(v) for k, v in PARAMS.items()})
    states = _states(state) if not wrapper.startswith("flax.nnx") else _nnx_states(state)
    check.exact(f"{wrapper}: inner states it holds", len(states), count)
    for i, inner in enumerate(states):
        z = _z_leaves(inner)
        check.exact(f"{wrapper}: the leaves routed to the inner optimizer", sorted(z),
                    sorted(k for k, on in routed.items() if on))
        for name, leaf in sorted(z.items()):
            check.exact(f"{wrapper}: inner state {i} z[{name}] = params[{name}] (z_0 = x_0)", leaf, PARAMS[name])


def _nnx_states(opt_state) -> list:
    """The schedule-free states of an nnx optimizer's opt_state, as a pure tree (Variables read)."""
    pure = jax.tree.map(lambda v: np.asarray(v.value if hasattr(v, "value") else v), opt_state,
                        is_leaf=lambda x: hasattr(x, "value"))
    return _states(pure) or [s for s in jax.tree.leaves(pure, is_leaf=_has_z) if _has_z(s)]


def _has_z(x) -> bool:
    return isinstance(x, dict) and "z" in x and "b1" in x


def test_every_wrapper_is_here():
    """Derived, not listed: every in-scope Optax callable taking a GradientTransformation (its signature says
    so) is a wrapper above or named with why it is none."""
    from harness.builtin import defaults

    taking = set()
    for name in sorted(n for n in defaults.ledger_in_scope() if n.startswith("optax.")):
        try:
            params = inspect.signature(defaults.resolve(name)).parameters.values()
        except (ImportError, AttributeError):  # a callable this stack lacks: its own checks say so
            continue
        except (TypeError, ValueError):
            continue
        if any("GradientTransformation" in str(p.annotation) and "Callable" not in str(p.annotation)
               for p in params):
            taking.add(name)
    assert taking, "no wrapper found: the derivation is broken"
    missing = taking - set(WRAPPERS) - set(NOT_WRAPPERS)
    assert not missing, f"wrappers whose init from the user's params no check holds: {sorted(missing)}"
