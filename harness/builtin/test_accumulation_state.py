"""What optax.MultiSteps keeps in its state between calls, and in which dtype.

Documented: acc_grads is the running mean (use_grad_mean=True, the default) or sum of the gradients
since the last emission, and is set back to zero when the wrapper emits; mini_step counts calls modulo
k; gradient_step counts emissions; the inner optimizer's state changes only at an emission;
has_updated(state) is mini_step == 0 and gradient_step > 0, so it is False before the first update.
References are NumPy float64 models of that, fed the arrays the library received.

Gradients whose dtype differs from the params' (float16 grads on float32 params; bfloat16 throughout)
are where Optax releases differ: whether the call raises is an error contract, and the dtypes of the
accumulator and of the updates are golden facts.
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
MOMENTUM = 0.9
LAYOUT = {"b": (3,), "w": (2, 3)}
PARAMS = strategies.build(LAYOUT, lambda shape: np.zeros(shape, np.float32))
_RUNNERS = {}


def _stack(seq):
    return jax.tree.map(lambda *xs: np.stack(xs), *seq)


def _runner(k, use_grad_mean=True, momentum=MOMENTUM):
    """MultiSteps(sgd(LR, momentum), k): init and update jitted once per configuration and layout;
    run(params, calls) -> (initial state, has_updated before any call, updates, states, has_updated
    after every call), stacked along a leading call axis, as NumPy."""
    key = (k, use_grad_mean, momentum)
    if key not in _RUNNERS:
        tx = optax.MultiSteps(optax.sgd(LR, momentum=momentum), every_k_schedule=k, use_grad_mean=use_grad_mean)
        init = jax.jit(lambda p: (lambda s: (s, tx.has_updated(s)))(tx.init(p)))

        @jax.jit
        def step(g, state, params):
            u, state = tx.update(g, state, params)
            return u, state, tx.has_updated(state)

        def run(params, calls):
            first = init(params)
            state, out = first[0], []
            for g in calls:
                u, state, has = step(g, state, params)
                out.append((u, state, has))
            first, out = jax.device_get((first, out))
            return (*first, *(_stack([o[i] for o in out]) for i in range(3)))

        _RUNNERS[key] = run
    return _RUNNERS[key]


def _calls(n, seed=3):
    rng = np.random.default_rng(seed)
    return [strategies.build(LAYOUT, lambda shape: rng.standard_normal(shape).astype(np.float32)) for _ in range(n)]


@pytest.mark.parametrize("use_grad_mean", [True, False], ids=["mean", "sum"])
def test_state_values_per_ministep(check, use_grad_mean):
    """MultiSteps(sgd with momentum 0.9, k=3) over 7 calls: after every call acc_grads is the running mean
    (or sum) of this cycle's gradients, exactly zero right after an emission; the momentum trace changes
    only at an emission, to mean + 0.9 * trace; each emission is -lr * trace. The whole state after every
    call is golden."""
    k, n = 3, 7
    calls = _calls(n)
    init, _, us, states, has = _runner(k, use_grad_mean)(PARAMS, calls)
    window, trace, emissions = [], [np.zeros(np.shape(x)) for x in jax.tree.leaves(PARAMS)], 0
    for i, g in enumerate(calls):
        window.append([np.asarray(x, np.float64) for x in jax.tree.leaves(g)])
        emitted = len(window) == k
        acc = jax.tree.leaves(jax.tree.map(lambda x: x[i], states.acc_grads))
        state_trace = jax.tree.leaves(jax.tree.map(lambda x: x[i], states.inner_opt_state))
        before_trace = jax.tree.leaves(init.inner_opt_state if i == 0 else
                                       jax.tree.map(lambda x: x[i - 1], states.inner_opt_state))
        u = jax.tree.leaves(jax.tree.map(lambda x: x[i], us))
        total = [np.sum([w[j] for w in window], axis=0) for j in range(len(acc))]
        magnitude = [np.sum([np.abs(w[j]) for w in window], axis=0) for j in range(len(acc))]
        running = [t / len(window) if use_grad_mean else t for t in total]
        if emitted:
            emissions += 1
            trace = [r + MOMENTUM * t for r, t in zip(running, trace)]
            for a in acc:
                check.exact("acc_grads is zero right after an emission", a, np.zeros(a.shape))
            for x, t, m in zip(state_trace, trace, magnitude):
                # the trace accumulates sums of terms of either sign: rounding relative to their size
                check.reference("momentum trace after an emission", x, t, scale=m + np.abs(t),
                                why="the trace sums terms of either sign: it may cancel")
            for x, t, m in zip(u, trace, magnitude):
                check.reference("emitted update = -lr * trace", x, -LR * t, scale=LR * (m + np.abs(t)),
                                why="the trace sums terms of either sign: it may cancel")
            window = []
        else:
            for a, r, m in zip(acc, running, magnitude):
                check.reference("acc_grads = running mean or sum of this cycle", a, r, scale=m,
                                why="a running mean, acc += (g - acc) / n, of gradients of either sign: it may cancel")
            for x, b in zip(state_trace, before_trace):
                check.identical("inner state unchanged between emissions", x, b)
            for x in u:
                check.exact("zeros between emissions", x, np.zeros(x.shape))
        check.exact("mini_step", int(states.mini_step[i]), (i + 1) % k)
        check.exact("gradient_step", int(states.gradient_step[i]), emissions)
        check.exact("has_updated", bool(has[i]), emitted)
    # The accumulator and the momentum trace are sums of gradients of either sign: their rounding is
    # relative to the gradients summed so far (a bound on every operand), not to a sum that cancelled.
    so_far = {name: np.cumsum([np.abs(np.asarray(trees.leaves(g)[name], np.float64)) for g in calls], axis=0)
              for name in trees.leaves(PARAMS)}
    scales = {path: so_far[path.rsplit("/", 1)[-1]] for path in trees.leaves(states)
              if path.rsplit("/", 1)[-1] in so_far}
    check.golden_tree(f"state_values/{'mean' if use_grad_mean else 'sum'}", states, scales=scales,
                      why="the accumulator and the momentum trace sum gradients of either sign: ulps at the sum "
                          "of the gradients' magnitudes so far")


# k=3 reuses test_state_values_per_ministep[mean]'s compiled functions; k=2 is in test_emission_pattern.
@pytest.mark.parametrize("k", [1, 3], ids=lambda k: f"k={k}")
def test_has_updated_before_and_after_each_ministep(check, k):
    """has_updated is False on the initial state (gradient_step 0, although mini_step is 0 too), then
    True exactly after every k-th call; the sequence, initial state included, is golden."""
    n = 2 * k + 1
    _, has0, _, states, has = _runner(k)(PARAMS, _calls(n, seed=k))
    check.exact("has_updated before the first update", bool(has0), False)
    check.exact("has_updated after each call", [bool(x) for x in has], [(i + 1) % k == 0 for i in range(n)])
    check.exact("has_updated = mini_step == 0 and gradient_step > 0", [bool(x) for x in has],
                [bool(m == 0 and s > 0) for m, s in zip(states.mini_step, states.gradient_step)])
    check.golden_exact(f"has_updated/k={k}", np.concatenate([[has0], has]))


COUNTER_EDGES = (-1, 0, 1)


def test_has_updated_at_counter_boundaries(check):
    """has_updated on states whose counters sit just below, at and just above its comparisons (mini_step
    == 0, gradient_step > 0). Negative counters are states users reach: an every_k_schedule that returns
    a negative k makes mini_step (a remainder by k) negative, and a restored state holds what was saved."""
    tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=2)
    state = tx.init(PARAMS)
    table = [[bool(tx.has_updated(state._replace(mini_step=jnp.asarray(m, jnp.int32),
                                                 gradient_step=jnp.asarray(g, jnp.int32))))
              for g in COUNTER_EDGES] for m in COUNTER_EDGES]
    check.describe_input(f"has_updated with mini_step (rows) and gradient_step (columns) in {COUNTER_EDGES}")
    check.exact("has_updated = mini_step == 0 and gradient_step > 0", table,
                [[m == 0 and g > 0 for g in COUNTER_EDGES] for m in COUNTER_EDGES])
    check.golden_fact("has_updated/counter_edges", table)


# -- float16 gradients on float32 params ------------------------------------------------------------------
F16_OPTIMIZERS = {
    "sgd": lambda: optax.sgd(LR),
    "adam": lambda: optax.adam(1e-2),
    "multisteps_sgd": lambda: optax.MultiSteps(optax.sgd(LR), every_k_schedule=2),
    "multisteps_adam": lambda: optax.MultiSteps(optax.adam(1e-2), every_k_schedule=2),
}
F16_GRADS = [{"b": np.array([0.5, -1.25, 3.0], np.float16),
              "w": np.array([[1.0, 2.0, -3.0], [0.1, 0.2, 0.3]], np.float16)},
             {"b": np.array([1.5, 0.25, -1.0], np.float16),
              "w": np.array([[4.0, -2.0, 1.0], [0.3, 0.1, 0.7]], np.float16)}]


@pytest.mark.parametrize("name", sorted(F16_OPTIMIZERS))
def test_float16_grads_on_float32_params(check, name):
    """Two updates with float16 gradients of float32 params (mixed-precision backward passes): whether it
    raises is the contract (Optax 0.2.6 rejects it inside MultiSteps(sgd) with a TypeError from lax.cond);
    when it runs, the dtypes of the updates and of the state are golden facts and the second update's
    values are golden; for sgd they also match -lr * g (or the mean of both calls for MultiSteps) within
    the reference tolerance of the update's dtype."""
    params = jax.tree.map(lambda g: np.ones(g.shape, np.float32), F16_GRADS[0])

    @jax.jit  # one compile; a dtype mismatch inside lax.cond raises while tracing, as it does eagerly
    def two_updates(params, grads):
        tx = F16_OPTIMIZERS[name]()
        state = tx.init(params)
        updates = []
        for g in grads:
            u, state = tx.update(g, state, params)
            updates.append(u)
        return updates, state

    def run():
        return jax.device_get(two_updates(params, F16_GRADS))

    check.describe_input("float16 gradients for float32 params, two updates under jit")
    result = check.error_contract(f"float16_on_float32/{name}", run)
    if isinstance(result, Exception):
        return
    updates, state = result
    key = f"float16_on_float32/{name}"
    check.golden_fact(f"{key}/update_dtypes", [str(x.dtype) for x in jax.tree.leaves(updates[-1])])
    check.golden_fact(f"{key}/state_layout", trees.layout(state, keys="keystr"))
    check.golden_tree(f"{key}/second_update", updates[-1])
    if name.endswith("sgd"):
        first, second = ([np.asarray(x, np.float64) for x in jax.tree.leaves(g)] for g in F16_GRADS)
        for u, a, b in zip(jax.tree.leaves(updates[-1]), first, second):
            if name.startswith("multisteps"):  # the running mean: rounding relative to both gradients
                check.reference("-lr * mean of the float16 gradients", u, -LR * (a + b) / 2,
                                scale=LR * (np.abs(a) + np.abs(b)), why="the mean of two gradients may cancel")
            else:
                check.reference("-lr * the float16 gradient", u, -LR * b)


# -- bfloat16 ---------------------------------------------------------------------------------------------
def test_bfloat16_accumulator(check):
    """bfloat16 params and gradients through MultiSteps(sgd, k=2): the dtype of acc_grads after init and
    after a call, and of the updates, are golden facts (Optax 0.2.8 keeps a float32 accumulator); the
    first call's accumulator holds the gradient exactly, and the emission is -lr * mean within the
    bfloat16 reference tolerance."""
    params = {"b": jnp.zeros((3,), jnp.bfloat16), "w": jnp.zeros((2, 3), jnp.bfloat16)}
    grads = [jax.tree.map(lambda x: np.asarray(x, jnp.bfloat16), g) for g in F16_GRADS]  # the same values
    tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=2)

    @jax.jit
    def two_calls(params, grads):
        state = tx.init(params)
        u1, state1 = tx.update(grads[0], state, params)
        u2, state2 = tx.update(grads[1], state1, params)
        return state.acc_grads, state1.acc_grads, u2

    acc0, acc1, u2 = jax.device_get(two_calls(params, grads))
    check.golden_fact("bfloat16/accumulator_dtypes", {
        "init": [str(x.dtype) for x in jax.tree.leaves(acc0)],
        "after_call": [str(x.dtype) for x in jax.tree.leaves(acc1)],
        "updates": [str(x.dtype) for x in jax.tree.leaves(u2)]})
    for a, g in zip(jax.tree.leaves(acc1), jax.tree.leaves(grads[0])):
        # acc + (g - acc) / 1: the running mean's formula at its first step, judged in ulps
        check.reference("first call: acc_grads == the gradient", a, np.asarray(g, np.float64))
    leaves = [[np.asarray(x, np.float64) for x in jax.tree.leaves(g)] for g in grads]
    for u, a, b in zip(jax.tree.leaves(u2), *leaves):
        check.reference("emitted -lr * mean", u, -LR * (a + b) / 2, scale=LR * (np.abs(a) + np.abs(b)),
                        why="the mean of two gradients may cancel")
    check.golden_tree("bfloat16/emitted", u2)


_BF16_RUNNERS = {}


def _bf16_microbatches(k):
    """MultiSteps(sgd, k) over k stacked microbatches in one jitted lax.scan: compiled once per (k, layout)."""
    if k not in _BF16_RUNNERS:
        tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=k)

        @jax.jit
        def run(params, grads_stacked):
            def body(state, g):
                u, state = tx.update(g, state, params)
                return state, u
            state, us = jax.lax.scan(body, tx.init(params), grads_stacked)
            return us, state.acc_grads

        _BF16_RUNNERS[k] = run
    return _BF16_RUNNERS[k]


# One layout, so one compile per k: nested containers holding a vector, a row and a column matrix and
# a 0-d leaf.
_BF16_LAYOUT = strategies.TEMPLATES["size1"]


@given(k=st.sampled_from([2, 3]), data=st.data())
def test_property_bfloat16_microbatches_equal_mean_step(check, k, data):
    """k bfloat16 microbatches through MultiSteps(sgd) on bfloat16 params: k-1 exact zeros, then one sgd
    step on their mean, -lr * mean, within the bfloat16 reference tolerance (the running mean and the
    product round in bfloat16, relative to the microbatches' magnitude: the floor is scaled by it);
    the accumulator is back to exact zeros after the emission. The reference is computed from the
    bfloat16 arrays the library received."""
    drawn = data.draw(strategies.pytree(_BF16_LAYOUT, "bfloat16", batch=k))
    grads = jax.tree.map(lambda g: np.asarray(g, jnp.bfloat16), drawn)  # cast on the host (ml_dtypes)
    params = jax.tree.map(lambda g: jnp.zeros(g.shape[1:], jnp.bfloat16), grads)
    us, acc = jax.device_get(_bf16_microbatches(k)(params, grads))
    for u, g, a in zip(jax.tree.leaves(us), jax.tree.leaves(grads), jax.tree.leaves(acc)):
        check.exact("update dtype is the gradients'", str(u.dtype), "bfloat16")
        check.exact("zeros before emission", np.asarray(u[:-1], np.float64), np.zeros(u[:-1].shape))
        stacked = np.asarray(g, np.float64)
        check.reference("emitted = one sgd step on the mean", u[-1], -LR * stacked.mean(0),
                        scale=LR * np.abs(stacked).sum(0), why="a running mean, acc += (g - acc) / n, of gradients of either sign: the mean may cancel")
        check.exact("accumulator zero after the emission", np.asarray(a, np.float64), np.zeros(a.shape))
