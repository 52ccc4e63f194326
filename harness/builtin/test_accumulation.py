"""Gradient accumulation contracts of optax.MultiSteps.

References are NumPy float64 formulas: SGD on the mean (or sum) of the k microbatch gradients.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.contract import strategies, trees

pytestmark = pytest.mark.family("accumulation")

LR = 0.1


def _run(tx, params, grads_seq):
    state = tx.init(params)
    updates = []
    for g in grads_seq:
        u, state = tx.update(g, state, params)
        updates.append(u)
    return updates, state


def test_guide_case(check):
    """The guide: grads 2 then 4, MultiSteps(sgd(0.1), k=2) -> updates 0 then -0.3."""
    params = {"w": jnp.array([1.0])}
    tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=2)
    (u1, u2), state = _run(tx, params, [{"w": jnp.array([2.0])}, {"w": jnp.array([4.0])}])
    check.exact("first update is zero", u1["w"], [0.0])
    check.golden_exact("guide/u1", u1["w"])
    check.golden("guide/u2", u2["w"])
    check.reference("guide/u2", u2["w"], np.array([-LR * (2.0 + 4.0) / 2.0]))
    check.exact("mini_step", int(state.mini_step), 0)
    check.exact("gradient_step", int(state.gradient_step), 1)
    check.golden_exact("guide/counters", np.array([state.mini_step, state.gradient_step]))


def test_guide_case_jitted(check):
    """The guide's accumulation as a jitted train step runs it (jax.jit(tx.update)): recorded as golden
    values of their own, the emitted zeros exactly (their sign bits are kept in the report), and held
    to the eager path by the equivalence tolerance (two library paths)."""
    params = {"w": jnp.array([1.0])}
    tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=2)
    grads = [{"w": jnp.array([2.0])}, {"w": jnp.array([4.0])}]
    update = jax.jit(tx.update)
    state, jitted = tx.init(params), []
    for g in grads:
        u, state = update(g, state, params)
        jitted.append(u["w"])
    (e1, e2), _ = _run(tx, params, grads)
    check.golden_exact("guide/jit/u1", jitted[0])
    check.golden("guide/jit/u2", jitted[1])
    check.agree("guide u2: jit vs eager", jitted[1], e2["w"])
    check.exact("jitted first update is zero", jitted[0], [0.0])
    check.golden_exact("guide/jit/counters", np.array([state.mini_step, state.gradient_step]))


@pytest.mark.parametrize("use_grad_mean", [True, False], ids=["mean", "sum"])
def test_grad_mean_or_sum(check, use_grad_mean):
    params = {"w": jnp.array([1.0, -2.0]), "b": jnp.array(0.5)}
    grads = [{"w": jnp.array([2.0, 1.0]), "b": jnp.array(-1.0)},
             {"w": jnp.array([4.0, -3.0]), "b": jnp.array(0.25)},
             {"w": jnp.array([0.5, 0.0]), "b": jnp.array(3.0)}]
    tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=3, use_grad_mean=use_grad_mean)
    updates, _ = _run(tx, params, grads)
    for name in ("w", "b"):
        stacked = np.stack([np.asarray(g[name], np.float64) for g in grads])
        total = stacked.mean(0) if use_grad_mean else stacked.sum(0)
        check.reference(f"{name} emitted", updates[2][name], -LR * total)
        check.golden(f"mean_or_sum/{use_grad_mean}/{name}", updates[2][name])
        for i in (0, 1):
            check.exact(f"{name} zero at microstep {i}", updates[i][name], np.zeros_like(total))



@pytest.mark.parametrize("k", [1, 2, 3, "callable"], ids=lambda k: f"k={k}")
def test_emission_pattern(check, k):
    """Updates emit on every k-th call with the mean of the last k grads; exact zeros otherwise."""
    every_k = (lambda step: 3) if k == "callable" else k
    period = 3 if k == "callable" else k
    params = {"w": jnp.zeros((2, 3))}
    rng = np.random.default_rng(7)
    grads = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2 * period)]
    tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=every_k)
    state = tx.init(params)
    for i, g in enumerate(grads):
        u, state = tx.update({"w": jnp.asarray(g)}, state, params)
        emitted = (i + 1) % period == 0
        check.exact(f"has_updated after call {i}", bool(tx.has_updated(state)), emitted)
        if emitted:
            window = np.stack(grads[i + 1 - period:i + 1]).astype(np.float64)
            check.reference("emitted update", u["w"], -LR * window.mean(0))
        else:
            check.exact("zero between emissions", u["w"], np.zeros((2, 3)))
    check.exact("mini_step after 2k calls", int(state.mini_step), 0)
    check.exact("gradient_step after 2k calls", int(state.gradient_step), 2)
    check.golden_fact(f"counters_dtype/{k}", [str(state.mini_step.dtype), str(state.gradient_step.dtype)])


def test_inner_schedule_advances_per_optimizer_step(check):
    """An inner learning-rate schedule counts optimizer steps, not microbatches."""
    schedule = optax.linear_schedule(init_value=0.1, end_value=0.0, transition_steps=4)
    k = 2
    params = {"w": jnp.zeros(())}
    tx = optax.MultiSteps(optax.sgd(schedule), every_k_schedule=k)
    updates, _ = _run(tx, params, [{"w": jnp.ones(())}] * (k * 4))
    emitted = np.array([float(u["w"]) for u in updates[k - 1::k]])
    expected = -np.array([0.1 * (1 - s / 4) for s in range(4)])
    check.reference("lr per optimizer step", emitted.astype(np.float32), expected)
    check.golden("inner_schedule/emitted", emitted.astype(np.float32))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_state_layout(check, dtype):
    """The state's tree structure and leaf dtypes are a contract (checkpoints depend on them)."""
    params = {"kernel": jnp.ones((3, 5), dtype), "bias": jnp.zeros((5,), dtype)}
    tx = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
    state = tx.init(params)
    check.golden_fact(f"state_layout/{dtype}/leaves", trees.layout(state, keys="keystr"))
    check.golden_fact(f"state_layout/{dtype}/fields", list(type(state)._fields))
    g = jax.tree.map(jnp.ones_like, params)
    _, state2 = tx.update(g, state, params)
    # The accumulator's dtype after an update is the library's choice (optax 0.2.8 moved bfloat16 to
    # float32), so it is golden, not a literal: accepting a new baseline can then adopt it.
    check.golden_fact(f"state_layout/{dtype}/acc_grads_after_update",
                      [str(x.dtype) for x in jax.tree.leaves(state2.acc_grads)])


def _sgd_microbatches_jit(k):
    tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=k)

    @jax.jit
    def run(params, grads_stacked):
        def body(state, g):
            u, state = tx.update(g, state, params)
            return state, u
        _, us = jax.lax.scan(body, tx.init(params), grads_stacked)
        return us

    return run


_RUNNERS = {}


@given(template=strategies.template_names(), k=st.sampled_from([2, 3]), data=st.data())
def test_property_emits_mean_and_zeros(check, template, k, data):
    """Any pytree (asymmetric shapes, scalars, zero grads): k-1 exact zeros, then -lr * mean."""
    layout = strategies.TEMPLATES[template]
    grads = data.draw(strategies.pytree(layout, max_magnitude=1e4, batch=k))  # k microbatches, stacked
    params = jax.tree.map(lambda g: np.zeros(g.shape[1:], np.float32), grads)
    run = _RUNNERS.setdefault(k, _sgd_microbatches_jit(k))
    us = run(params, grads)  # the jitted step takes the NumPy draws as they are: no eager program per leaf shape
    for u, g in zip(jax.tree.leaves(us), jax.tree.leaves(grads)):
        u = np.asarray(u)
        check.exact("zeros before emission", u[:-1], np.zeros_like(u[:-1]))
        stacked = np.asarray(g, np.float64)
        # MultiSteps keeps a running mean: acc += (g - acc) / n, so rounding is relative to the
        # operands' magnitude, not to a mean that may cancel to near zero.
        check.reference("emitted mean", u[-1], -LR * stacked.mean(0), scale=LR * np.abs(stacked).sum(0),
                        why="a running mean, acc += (g - acc) / n, of gradients of either sign: the mean may cancel")


_TRAINERS = {}


def _trainer(name, tx):
    """A jitted training loop (lax.scan over stacked grads) per optimizer: compiled once per tree
    layout, not once per example."""
    if name not in _TRAINERS:
        @jax.jit
        def train(params, grads_stacked):
            def step(carry, g):
                params, state = carry
                u, state = tx.update(g, state, params)
                return (optax.apply_updates(params, u), state), None
            (params, _), _ = jax.lax.scan(step, (params, tx.init(params)), grads_stacked)
            return params
        _TRAINERS[name] = train
    return _TRAINERS[name]


@pytest.mark.parametrize("inner", ["sgd", "adam"])
@given(template=strategies.template_names(), data=st.data())
def test_property_microbatches_equal_mean_step(check, inner, template, data):
    """k microbatches through MultiSteps == one inner step on their mean, over several optimizer steps."""
    k, steps = 2, 3
    layout = strategies.TEMPLATES[template]
    rate = {"sgd": LR, "adam": 1e-2}[inner]
    make = {"sgd": lambda: optax.sgd(rate), "adam": lambda: optax.adam(rate)}[inner]
    params = data.draw(strategies.pytree(layout, max_magnitude=10.0))  # NumPy: the jitted loops take it as it is
    micro = data.draw(strategies.pytree(layout, max_magnitude=10.0, batch=k * steps))
    # The mean of each optimizer step's k microbatches, summed then divided as MultiSteps' user would, in
    # float32 and in NumPy (jnp would compile three eager programs per leaf shape): 0 + g1 + g2, then / k,
    # which is what jnp's sum and division give, signed zeros included.
    means = jax.tree.map(lambda m: np.add.reduce(m.reshape(steps, k, *m.shape[1:]), axis=1,
                                                 initial=np.float32(0)) / np.float32(k), micro)
    accumulated = _trainer(f"{inner}-multisteps", optax.MultiSteps(make(), every_k_schedule=k))(params, micro)
    direct = _trainer(inner, make())(params, means)
    # The operands the final params sum: the initial params and each step's update, whose size is
    # lr * |mean| for sgd and at most lr (adam's normalised step) for adam.
    # (sgd: the microbatches themselves, |g1| + |g2| over k, which their mean may cancel.)
    steps_size = jax.tree.map(lambda m: rate * np.abs(np.asarray(m, np.float64)).sum(0) / k if inner == "sgd"
                              else np.full(m.shape[1:], rate * steps), micro)
    for a, d, p, s in zip(*(jax.tree.leaves(t) for t in (accumulated, direct, params, steps_size))):
        check.agree(f"{inner}: params after {steps} optimizer steps", a, d, scale=np.abs(np.asarray(p)) + s,
                    why="params after several steps sum the initial value and updates of either sign, "
                        "rounded in another order on each path: ulps at |param| + the updates' sizes")


MISMATCHES = {
    "leaf_shape": {"w": jnp.ones((2,))},
    "rank": {"w": jnp.ones((1, 1))},
    "structure_key": {"v": jnp.ones((1,))},
    "extra_leaf": {"w": jnp.ones((1,)), "b": jnp.ones((1,))},
}


@pytest.mark.parametrize("case", sorted(MISMATCHES))
def test_mismatched_grads_error(check, case):
    """Grads that do not match the params: the exception type is the contract."""
    params = {"w": jnp.array([1.0])}
    tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=2)
    state = tx.init(params)
    check.describe_input(trees.mismatch(MISMATCHES[case], params))
    check.error_contract(f"mismatch/{case}", tx.update, MISMATCHES[case], state, params)
