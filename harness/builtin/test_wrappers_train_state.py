"""flax.training.train_state.TrainState, the Linen teams' train state: create(apply_fn=, params=, tx=, **kwargs),
apply_gradients(grads=, **kwargs), its step, opt_state and replace, and the '_overwrite_with_gradient'
collection (fp8 scales) it passes around the optimizer.

Each run relates two library paths: STEPS apply_gradients calls against the same steps written with Optax
alone (tx.init, tx.update, optax.apply_updates; wrapper_runs.optax_alone). Measured on the baseline they are
bit-identical, eager and each step jitted alike (apply_gradients calls those three functions on the same
arrays), so they are compared bit for bit. The resulting parameters and state are golden.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

train_state = pytest.importorskip("flax.training.train_state")
from harness.builtin import wrapper_runs as wr  # noqa: E402

pytestmark = pytest.mark.family("wrappers")

OVERWRITE = "_overwrite_with_gradient"  # flax.linen.fp8_ops.OVERWRITE_WITH_GRADIENT, spelled as teams' trees hold it


def _apply(params, x):
    return x @ params["kernel"] + params["bias"]


def _steps(state, jitted=False):
    step = jax.jit(lambda s, g: s.apply_gradients(grads=g)) if jitted else (lambda s, g: s.apply_gradients(grads=g))
    for i in range(wr.STEPS):
        state = step(state, wr.grads(i))
    return state


def _jitted_optax(tx):
    """The Optax-alone steps, each one jitted function (as the jitted apply_gradients compiles one per step)."""
    step_fn = jax.jit(lambda g, s, p: (lambda us: (optax.apply_updates(p, us[0]), us[1]))(tx.update(g, s, p)))
    p, state = wr.params(), tx.init(wr.params())
    for i in range(wr.STEPS):
        p, state = step_fn(wr.grads(i), state, p)
    return wr.Run(p, state, [])


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", wr.TXS)
def test_train_state_equals_optax_alone(check, name, jitted):
    """create + STEPS apply_gradients = tx.init + tx.update + optax.apply_updates, bit for bit: params and
    opt_state (layout and values); step counts the calls from 0; apply_fn and tx are kept as given.
    Parameters and state golden."""
    tx = wr.tx(name)
    created = train_state.TrainState.create(apply_fn=_apply, params=wr.params(), tx=tx)
    wr.same(check, "opt_state at create = tx.init(params)", created.opt_state, tx.init(wr.params()))
    check.exact("step at create", int(created.step), 0)
    state = _steps(created, jitted)
    alone = _jitted_optax(tx) if jitted else wr.optax_alone(tx, wr.params())
    wr.same(check, "params", state.params, alone.params)
    wr.same(check, "opt_state", state.opt_state, alone.opt_state)
    check.exact("step counts apply_gradients calls", int(state.step), wr.STEPS)
    check.exact("apply_fn and tx kept", [state.apply_fn is _apply, state.tx is tx], [True, True])
    variant = "jit" if jitted else "eager"
    check.golden_tree(f"train_state/{name}/{variant}/params", state.params)
    check.golden_tree(f"train_state/{name}/{variant}/opt_state", state.opt_state)


class WithStats(train_state.TrainState):
    """A TrainState with one more field, as teams add batch statistics (the class docstring's extension)."""

    batch_stats: dict


def test_train_state_kwargs_and_replace(check):
    """create(..., batch_stats=) sets the extra field; apply_gradients(grads=, batch_stats=) replaces it beside
    the step; replace(step=, params=) changes only what it names; the pytree's leaves are step, params,
    opt_state and the field (apply_fn and tx are static): a golden fact."""
    tx = wr.tx("adamw")
    stats = {"mean": jnp.asarray([1.0, 2.0], jnp.float32)}
    state = WithStats.create(apply_fn=_apply, params=wr.params(), tx=tx, batch_stats=stats)
    check.identical("batch_stats set by create", np.asarray(state.batch_stats["mean"]), np.asarray(stats["mean"]))
    new_stats = {"mean": jnp.asarray([3.0, -4.0], jnp.float32)}
    after = state.apply_gradients(grads=wr.grads(0), batch_stats=new_stats)
    check.identical("batch_stats replaced by apply_gradients", np.asarray(after.batch_stats["mean"]),
                    np.asarray(new_stats["mean"]))
    alone = wr.optax_alone(tx, wr.params(), steps=1)
    wr.same(check, "params after one step", after.params, alone.params)
    check.exact("step", int(after.step), 1)
    moved = after.replace(step=7, params=wr.params())
    wr.same(check, "replace(params=)", moved.params, wr.params())
    wr.same(check, "replace leaves opt_state", moved.opt_state, after.opt_state)
    check.exact("replace(step=7), then one more step", [int(moved.step), int(_steps(moved).step)], [7, 7 + wr.STEPS])
    check.golden_fact("train_state/pytree_layout", wr.layout(after))


def test_train_state_signatures(check):
    """Which calls work: create's and apply_gradients' parameters are keyword-only with extra fields as **kwargs,
    replace takes fields by keyword (golden facts)."""
    for name, fn in (("TrainState.create", train_state.TrainState.create),
                     ("TrainState.apply_gradients", train_state.TrainState.apply_gradients),
                     ("TrainState.replace", train_state.TrainState.replace)):
        check.golden_fact(f"signature/{name}", wr.signature(fn))


def _overwrite_params():
    return {"params": wr.params(), OVERWRITE: {"scale": jnp.asarray([2.0, 0.5], jnp.float32)}}


def test_train_state_overwrite_with_gradient(check):
    """Params holding '_overwrite_with_gradient' beside 'params': the optimizer's state is made for 'params'
    only and steps it as Optax alone would, while the overwrite collection takes the gradient's value as is."""
    tx = wr.tx("adamw")
    state = train_state.TrainState.create(apply_fn=_apply, params=_overwrite_params(), tx=tx)
    wr.same(check, "opt_state at create: of 'params' only", state.opt_state, tx.init(wr.params()))
    for i in range(wr.STEPS):
        grads = {"params": wr.grads(i), OVERWRITE: {"scale": jnp.asarray([float(i), -1.0], jnp.float32)}}
        state = state.apply_gradients(grads=grads)
    alone = wr.optax_alone(tx, wr.params())
    wr.same(check, "params['params']", state.params["params"], alone.params)
    wr.same(check, "opt_state", state.opt_state, alone.opt_state)
    check.identical("the overwrite collection is the last gradient's", np.asarray(state.params[OVERWRITE]["scale"]),
                    np.asarray([wr.STEPS - 1.0, -1.0], np.float32))
    check.golden_tree("train_state/overwrite/params", state.params)


def test_train_state_array_params(check):
    """Params that are one bare array: create guards its '_overwrite_with_gradient' lookup (the state is
    tx.init of the array), apply_gradients does not (it asks whether the name is in the gradient array): the
    exception type, or none, is golden."""
    tx = optax.sgd(0.5, momentum=0.5)
    params = jnp.asarray([1.0, 2.0], jnp.float32)
    created = check.error_contract("errors/train_state/create/array_params", train_state.TrainState.create,
                                   apply_fn=_apply, params=params, tx=tx)
    wr.same(check, "opt_state of array params", created.opt_state, tx.init(params))
    check.error_contract("errors/train_state/apply_gradients/array_params", created.apply_gradients,
                         grads=jnp.asarray([1.0, -2.0], jnp.float32))


def _state():
    return train_state.TrainState.create(apply_fn=_apply, params=wr.params(), tx=optax.adam(0.1))


def _with(**change):
    return {**wr.grads(0), **change}


ERRORS = {
    "apply_gradients/missing_leaf": lambda: _state().apply_gradients(grads={"kernel": wr.grads(0)["kernel"]}),
    "apply_gradients/extra_leaf": lambda: _state().apply_gradients(grads=_with(extra=jnp.ones(3))),
    "apply_gradients/wrong_shape": lambda: _state().apply_gradients(grads=_with(bias=jnp.ones(4))),
    "apply_gradients/transposed": lambda: _state().apply_gradients(grads=_with(kernel=jnp.ones((3, 2)))),
    "apply_gradients/positional_grads": lambda: _state().apply_gradients(wr.grads(0)),
    "apply_gradients/unknown_field": lambda: _state().apply_gradients(grads=wr.grads(0), nonsense=1),
    "create/positional": lambda: train_state.TrainState.create(_apply, wr.params(), optax.sgd(0.1)),
    "create/no_tx": lambda: train_state.TrainState.create(apply_fn=_apply, params=wr.params()),
    "create/unknown_field": lambda: train_state.TrainState.create(apply_fn=_apply, params=wr.params(),
                                                                  tx=optax.sgd(0.1), nonsense=1),
    "replace/unknown_field": lambda: _state().replace(nonsense=1),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_train_state_errors(check, case):
    """Grads missing or adding a leaf, of another shape, transposed, passed positionally; fields the class
    lacks; create without tx or with positional arguments: the exception type (or none) is the baseline's."""
    check.error_contract(f"errors/train_state/{case}", ERRORS[case])


def test_train_state_constructed_directly(check):
    """TrainState(step=, apply_fn=, params=, tx=, opt_state=) by its fields, and by position in the fields'
    order, as some teams build it: the same steps as the one create builds, bit for bit (two library paths: the
    dataclass constructor and create)."""
    tx = wr.tx("adamw")
    created = _steps(train_state.TrainState.create(apply_fn=_apply, params=wr.params(), tx=tx))
    by_keyword = train_state.TrainState(step=0, apply_fn=_apply, params=wr.params(), tx=tx,
                                        opt_state=tx.init(wr.params()))
    by_position = train_state.TrainState(0, _apply, wr.params(), tx, tx.init(wr.params()))
    for how, state in (("keyword", by_keyword), ("position", by_position)):
        after = _steps(state)
        wr.same(check, f"{how}: params", after.params, created.params)
        wr.same(check, f"{how}: opt_state", after.opt_state, created.opt_state)
        check.exact(f"{how}: step", int(after.step), int(created.step))
