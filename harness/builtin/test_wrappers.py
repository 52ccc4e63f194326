"""flax.nnx.Optimizer, the wrapper most Flax NNX teams call Optax through: Optimizer(model, tx, wrt=, graph=)
and update(model, grads, **kwargs), its step counter and the opt_state it holds.

Each run relates two library paths: STEPS updates through the wrapper against the same steps written with
Optax alone (tx.init, tx.update, optax.apply_updates; wrapper_runs.optax_alone). Measured on the baseline,
they are bit-identical, eager and jitted alike (the wrapper calls the same three functions on the same
arrays), so they are compared bit for bit: a wrapper that reorders, casts or drops anything is a change.
The resulting parameters and state are golden; errors of the wrong grads or arguments are golden types.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

nnx = pytest.importorskip("flax.nnx")
from harness.builtin import nnx_compat as compat  # noqa: E402
from harness.builtin import wrapper_runs as wr  # noqa: E402

pytestmark = pytest.mark.family("wrappers")


class Pair(nnx.Module):
    """The two parameters of wrapper_runs.params() (the kernel tagged in its metadata) and a batch statistic no
    optimizer may touch."""

    def __init__(self, start):
        self.kernel = nnx.Param(start["kernel"], tag="kernel-meta")
        self.bias = nnx.Param(start["bias"])
        self.stat = nnx.BatchStat(jnp.asarray([1.0, 2.0, 3.0], jnp.float32))


def _grads(model, step):
    """nnx.grad of sum(p * g) over the Params: exactly the step's gradients, as the State nnx.grad gives."""
    g = wr.grads(step)
    return nnx.grad(lambda m: jnp.sum(m.kernel[...] * g["kernel"]) + jnp.sum(m.bias[...] * g["bias"]))(model)


def _params(model) -> dict:
    return dict(compat.pure(nnx.state(model, nnx.Param)))


@nnx.jit
def _jitted_update(model, optimizer, grads):
    return optimizer.update(model, grads)


def _drive(name, jitted=False, **init):
    """STEPS updates through nnx.Optimizer; the model, the optimizer and each call's returned updates."""
    model = Pair(wr.params())
    optimizer = nnx.Optimizer(model, wr.tx(name), wrt=nnx.Param, **init)
    updates = []
    for step in range(wr.STEPS):
        grads = _grads(model, step)
        updates.append(_jitted_update(model, optimizer, grads) if jitted else optimizer.update(model, grads))
    return model, optimizer, updates


def _jitted_optax(tx):
    """The Optax-alone steps, each step one jitted function (as the jitted wrapper compiles one per step)."""
    step_fn = jax.jit(lambda g, s, p: (lambda us: (optax.apply_updates(p, us[0]), us[1], us[0]))(tx.update(g, s, p)))
    p, state, updates = wr.params(), tx.init(wr.params()), []
    for step in range(wr.STEPS):
        p, state, u = step_fn(wr.grads(step), state, p)
        updates.append(u)
    return wr.Run(p, state, updates)


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", wr.TXS)
def test_optimizer_equals_optax_alone(check, name, jitted):
    """Optimizer.update = tx.update + optax.apply_updates, bit for bit: the parameters after each run, the
    opt_state it holds (layout and values), the updates each call returns; the step counter counts calls
    (uint32); the batch statistic outside `wrt` is untouched. Parameters and state golden."""
    model, optimizer, updates = _drive(name, jitted)
    alone = _jitted_optax(wr.tx(name)) if jitted else wr.optax_alone(wr.tx(name), wr.params())
    wr.same(check, "params", _params(model), alone.params)
    wr.same(check, "opt_state", compat.pure(optimizer.opt_state), alone.opt_state)
    for step, (u, expected) in enumerate(zip(updates, alone.updates)):
        wr.same(check, f"returned updates {step}", dict(u), expected)
    step = compat.read(optimizer.step)
    check.exact("step counts update calls", [int(step), str(step.dtype)], [wr.STEPS, "uint32"])
    check.identical("BatchStat outside wrt untouched", np.asarray(compat.read(model.stat)),
                    np.asarray([1.0, 2.0, 3.0], np.float32))
    variant = "jit" if jitted else "eager"
    check.golden_tree(f"optimizer/{name}/{variant}/params", _params(model))
    check.golden_tree(f"optimizer/{name}/{variant}/opt_state", compat.pure(optimizer.opt_state))


def _variables(tree) -> list:
    """[path, Variable type, dtype, shape, the metadata a team sets] per leaf of an nnx state."""
    rows = []
    for path, var in wr.leaves_of(tree, lambda x: isinstance(x, nnx.Variable)).items():
        leaf = compat.read(var)
        rows.append([path, type(var).__name__, str(leaf.dtype), list(np.shape(leaf)), var.get_metadata().get("tag")])
    return rows


def test_optimizer_state_variables(check):
    """What nnx.state(optimizer) holds, as a checkpoint sees it: opt_state leaves of a Param are OptVariable
    carrying the Param's metadata, other leaves OptArray, the step an OptState; layout a golden fact."""
    model = Pair(wr.params())
    optimizer = nnx.Optimizer(model, optax.adam(0.1), wrt=nnx.Param)
    rows = _variables(nnx.state(optimizer))
    check.golden_fact("optimizer/state_variables", rows)
    kinds = {row[0]: (row[1], row[4]) for row in rows}
    check.exact("mu of the kernel: an OptVariable with its metadata", kinds["opt_state/0/mu/kernel"],
                ["OptVariable", "kernel-meta"])
    check.exact("mu of the bias: an OptVariable", kinds["opt_state/0/mu/bias"], ["OptVariable", None])
    check.exact("adam's count: an OptArray", kinds["opt_state/0/count"], ["OptArray", None])
    check.exact("the step: an OptState at 0", [kinds["step"][0], int(compat.read(optimizer.step))], ["OptState", 0])
    check.exact("the optimizer keeps its tx and wrt", [optimizer.tx is optax.adam, optimizer.wrt is nnx.Param],
                [False, True])


def test_optimizer_wrt_filter(check):
    """wrt=PathContains('kernel'): only the kernel has state and moves (as Optax alone on the kernel), the bias
    stays though its gradient is passed: the grads are filtered by the optimizer's wrt."""
    model = Pair(wr.params())
    tx = wr.tx("adamw")
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.PathContains("kernel"))
    for step in range(wr.STEPS):
        optimizer.update(model, _grads(model, step))
    only_kernel = {"kernel": wr.params()["kernel"]}
    alone = wr.optax_alone(tx, only_kernel, grads_of=lambda s: {"kernel": wr.grads(s)["kernel"]})
    wr.same(check, "kernel", {"kernel": _params(model)["kernel"]}, alone.params)
    wr.same(check, "opt_state of the kernel only", compat.pure(optimizer.opt_state), alone.opt_state)
    check.identical("bias unchanged", np.asarray(_params(model)["bias"]), np.asarray(wr.params()["bias"]))
    check.golden_tree("optimizer/wrt_kernel/params", _params(model))


@pytest.mark.parametrize("graph", [True, False], ids=["graph", "tree"])
def test_optimizer_graph_modes(check, graph):
    """graph=True (graph mode) and graph=False (tree mode: Modules as plain pytrees) give what graph=None
    gives, bit for bit, and what Optax alone gives; the mode is kept on the optimizer."""
    model, optimizer, _ = _drive("multisteps", graph=graph)
    check.exact("graph kept", optimizer.graph, graph)
    alone = wr.optax_alone(wr.tx("multisteps"), wr.params())
    wr.same(check, f"graph={graph}: params", _params(model), alone.params)
    wr.same(check, f"graph={graph}: opt_state", compat.pure(optimizer.opt_state), alone.opt_state)
    check.golden_tree(f"optimizer/graph_{graph}/params", _params(model))


VALUES = [2.0, 2.0, 3.0, 2.5]  # losses handed to update(..., value=): no improvement after the first


def _plateau():
    """sgd scaled by reduce_on_plateau, whose update needs the loss as the keyword argument `value`."""
    return optax.chain(optax.sgd(0.1), optax.contrib.reduce_on_plateau(factor=0.5, patience=1, rtol=0.0, atol=0.1))


def test_optimizer_update_kwargs(check):
    """update(model, grads, value=loss) hands `value` to tx.update: the plateau's scale halves as Optax alone
    given the same values has it, bit for bit; without the kwarg the update fails (a golden error type)."""
    tx = _plateau()
    model = Pair(wr.params())
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)
    for step in range(wr.STEPS):
        optimizer.update(model, _grads(model, step), value=jnp.float32(VALUES[step]))
    alone = wr.optax_alone(tx, wr.params(), value=[jnp.float32(v) for v in VALUES])
    wr.same(check, "params", _params(model), alone.params)
    wr.same(check, "opt_state", compat.pure(optimizer.opt_state), alone.opt_state)
    scale = float(compat.pure(optimizer.opt_state)[1].scale)
    check.exact("the plateau's scale: halved by each of 3 steps without improvement (patience 1)", scale, 0.5 ** 3)
    check.golden_tree("optimizer/kwargs/params", _params(model))
    fresh = Pair(wr.params())
    plain = nnx.Optimizer(fresh, tx, wrt=nnx.Param)
    check.error_contract("errors/update_without_value", plain.update, fresh, _grads(fresh, 0))


def test_model_and_optimizer(check):
    """The deprecated nnx.ModelAndOptimizer (default wrt=nnx.Param) keeps update(grads) and the model: the
    same run as Optax alone, bit for bit; with wrt=PathContains('kernel') only the kernel moves, and
    update(grads, value=) hands `value` to tx.update (reduce_on_plateau's scale) as Optax alone has it."""
    model = Pair(wr.params())
    both = nnx.ModelAndOptimizer(model, wr.tx("adamw"))
    check.exact("it holds the model", both.model is model, True)
    for step in range(wr.STEPS):
        both.update(_grads(model, step))
    alone = wr.optax_alone(wr.tx("adamw"), wr.params())
    wr.same(check, "params", _params(model), alone.params)
    check.exact("step", int(compat.read(both.step)), wr.STEPS)
    model, tx = Pair(wr.params()), _plateau()
    kernel_only = nnx.ModelAndOptimizer(model, tx, wrt=nnx.PathContains("kernel"))
    for step in range(wr.STEPS):
        kernel_only.update(_grads(model, step), value=jnp.float32(VALUES[step]))
    alone = wr.optax_alone(tx, {"kernel": wr.params()["kernel"]}, grads_of=lambda s: {"kernel": wr.grads(s)["kernel"]},
                           value=[jnp.float32(v) for v in VALUES])
    wr.same(check, "wrt=kernel, value=: kernel", {"kernel": _params(model)["kernel"]}, alone.params)
    wr.same(check, "wrt=kernel, value=: opt_state", compat.pure(kernel_only.opt_state), alone.opt_state)
    check.identical("wrt=kernel: bias unchanged", np.asarray(_params(model)["bias"]), np.asarray(wr.params()["bias"]))
    check.golden_tree("model_and_optimizer/wrt_kernel_value/params", _params(model))


def test_optimizer_signatures(check):
    """Which calls work: the parameters of Optimizer.__init__/update and ModelAndOptimizer.__init__/update,
    their kinds (model and tx positional or keyword, wrt and graph keyword-only, update's grads
    positional-only) and defaults, as golden facts; a keyword-only call constructs and updates as Optax alone."""
    for name, fn in (("Optimizer.__init__", nnx.Optimizer.__init__), ("Optimizer.update", nnx.Optimizer.update),
                     ("ModelAndOptimizer.__init__", nnx.ModelAndOptimizer.__init__),
                     ("ModelAndOptimizer.update", nnx.ModelAndOptimizer.update)):
        check.golden_fact(f"signature/{name}", wr.signature(fn))
    model = Pair(wr.params())
    optimizer = nnx.Optimizer(model=model, tx=wr.tx("adamw"), wrt=nnx.Param, graph=None)
    optimizer.update(model, _grads(model, 0))
    wr.same(check, "keyword construction: params", _params(model), wr.optax_alone(wr.tx("adamw"), wr.params(), 1).params)


MESSAGES = {  # the errors Flax words itself, pointing a team at nnx.ModelAndOptimizer
    "init/no_wrt": lambda: nnx.Optimizer(Pair(wr.params()), optax.sgd(0.1)),
    "update/no_grads": lambda: nnx.Optimizer(Pair(wr.params()), optax.sgd(0.1), wrt=nnx.Param).update(Pair(wr.params())),
    "attribute/model": lambda: nnx.Optimizer(Pair(wr.params()), optax.sgd(0.1), wrt=nnx.Param).model,
    # getattr with a name built at run time (not an interned string): the same error as `.model`
    "attribute/model_built_name": lambda: getattr(nnx.Optimizer(Pair(wr.params()), optax.sgd(0.1), wrt=nnx.Param),
                                                  "".join(["mod", "el"])),
}


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_optimizer_migration_messages(check, case):
    """The Flax 0.11 migration errors (no wrt, no grads, the removed `.model`, also asked by a name built at run
    time): their type is golden, and whether the message names nnx.ModelAndOptimizer (the fix it offers) a
    golden fact: Python's own error for a missing argument would be the same type without the hint."""
    raised = check.error_contract(f"errors/{case}", MESSAGES[case])
    check.golden_fact(f"messages/{case}/names_ModelAndOptimizer", "ModelAndOptimizer" in str(raised))


def _bad_grads(kind):
    def make():
        model = Pair(wr.params())
        optimizer = nnx.Optimizer(model, optax.adam(0.1), wrt=nnx.Param)
        grads = _grads(model, 0)
        if kind == "missing_leaf":
            del grads["bias"]
        elif kind == "wrong_shape":
            grads["bias"] = nnx.Param(jnp.ones(4, jnp.float32))
        elif kind == "plain_dict":
            grads = wr.grads(0)
        elif kind == "transposed":
            grads["kernel"] = nnx.Param(jnp.ones((3, 2), jnp.float32))
        return optimizer.update(model, grads)
    return make


ERRORS = {
    "update/missing_leaf": _bad_grads("missing_leaf"),
    "update/wrong_shape": _bad_grads("wrong_shape"),
    "update/transposed": _bad_grads("transposed"),
    "update/plain_dict_grads": _bad_grads("plain_dict"),
    "init/optimizer_sharding_without_mesh": lambda: nnx.Optimizer(
        _sharded_model(), optax.adam(0.1), wrt=nnx.Param),
    "init/positional_wrt": lambda: nnx.Optimizer(Pair(wr.params()), optax.sgd(0.1), nnx.Param),
}


def _sharded_model():
    """A Param whose `optimizer_sharding` the optimizer turns into its state's `out_sharding` (no mesh here)."""
    model = Pair(wr.params())
    model.kernel = nnx.Param(wr.params()["kernel"], optimizer_sharding=(None, None))
    return model


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_optimizer_errors(check, case):
    """Grads missing a leaf, of another shape, transposed, or a plain dict; wrt given positionally; an
    optimizer_sharding with no mesh: the exception type (or none) is the baseline's."""
    check.error_contract(f"errors/{case}", ERRORS[case])
