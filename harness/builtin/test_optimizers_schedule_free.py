"""Schedule-Free learning (optax.contrib): schedule_free_adamw, schedule_free_sgd, the schedule_free wrapper they
build on and schedule_free_eval_params, on a separable quadratic f(y) = sum(a y**2 / 2 - b y) over a 2-leaf tree.

References (harness/builtin/reference/schedule_free.py) are NumPy float64 models of the docstrings and the paper:
the base optimizer's step moves z, x averages z with weights (max lr so far)**weight_lr_power, the params are
y = (1 - b1) z + b1 x and evaluation happens at x. They are fed the float32 gradients the library computed at
its own y. Each configuration is one jitted lax.scan over 8 steps.
"""

import functools

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import optax
import pytest

from harness.builtin.quadratic import PARAMS0, TRAJECTORY_WHY, loss as _f, vec as _vec
from harness.builtin.reference import schedule_free as ref

pytestmark = pytest.mark.family("optimizers")

F32 = np.float32
STEPS = 8
AVERAGE_WHY = "z and x are averages of terms of either sign (steps, decay): rounding at the terms' size"


@functools.cache
def _run(make):
    def run(params):
        tx = make()
        state0 = tx.init(params)

        def step(carry, _):
            y, state = carry
            g = jax.grad(_f)(y)
            u, state = tx.update(g, state, y)
            y = optax.apply_updates(y, u)
            return (y, state), (g, u, y, optax.contrib.schedule_free_eval_params(state, y), state)

        _, seen = jax.lax.scan(step, (params, state0), None, length=STEPS)
        return state0, seen
    return jax.jit(run)


def _steps(make, params=PARAMS0):
    state0, (g, u, y, x, states) = jax.device_get(_run(make)(params))
    at = lambda tree, k: _vec(jax.tree.map(lambda leaf: leaf[k], tree))  # noqa: E731
    return state0, [at(g, k) for k in range(STEPS)], u, [at(y, k) for k in range(STEPS)], \
        [at(x, k) for k in range(STEPS)], [at(states.z, k) for k in range(STEPS)], states


def _golden_trajectory(check, key, values):
    """Golden values of a trajectory (steps, params), ulps taken at each step's largest |param| (TRAJECTORY_WHY)."""
    values = np.stack(values)
    scale = np.broadcast_to(np.max(np.abs(values), axis=1, keepdims=True), values.shape)
    check.golden(key, values, scale=scale, why=TRAJECTORY_WHY)


def _check_iterates(check, name, expected, ys, xs, zs, scale):
    for k, ((y, z, x), y_obs, x_obs, z_obs) in enumerate(zip(expected, ys, xs, zs)):
        check.reference(f"step {k} params y", y_obs, y, scale=scale, why=AVERAGE_WHY)
        check.reference(f"step {k} z", z_obs, z, scale=scale, why=AVERAGE_WHY)
        check.reference(f"step {k} eval params x", x_obs, x, scale=scale, why=AVERAGE_WHY)


# -- schedule_free_adamw ------------------------------------------------------------------------------------------
ADAMW = dict(learning_rate=0.05, warmup_steps=3, b1=0.8, b2=0.95, eps=1e-3, weight_decay=0.1, weight_lr_power=1.5)


def _adamw():
    return optax.contrib.schedule_free_adamw(**ADAMW)


def test_schedule_free_adamw(check):
    """schedule_free_adamw with every parameter set (a 3-step warmup, b1=0.8, b2=0.95, eps=1e-3, weight decay 0.1,
    weight_lr_power=1.5), 8 steps: z moves by -lr_t (g / (sqrt(v_hat) + eps) + wd y) with lr_t the warmup
    read at the base optimizer's count (0 on the first step, so z stays put), the average's weights read it at
    schedule_free's step count (from 1); params y, z and schedule_free_eval_params' x against float64. The
    state's layout after init and after the steps, the params and the eval params are golden."""
    a = ADAMW
    state0, gs, u, ys, xs, zs, states = _steps(_adamw)
    direction = ref.rms_direction(gs, a["b2"], a["eps"])
    lr = lambda count: ref.warmup_constant(a["learning_rate"], a["warmup_steps"], count)  # noqa: E731
    expected = ref.schedule_free(
        _vec(PARAMS0), gs, lambda t, g, y: -lr(t) * (direction[t] + a["weight_decay"] * y),
        [lr(t + 1) for t in range(STEPS)], a["b1"], a["weight_lr_power"])
    _check_iterates(check, "adamw", expected, ys, xs, zs, scale=np.abs(_vec(PARAMS0)) + a["learning_rate"] * STEPS)
    check.reference("first step leaves z at the initial params (warmup lr 0 at count 0)", zs[0], _vec(PARAMS0))
    last = jax.tree.map(lambda leaf: leaf[-1], states)
    check.layout("schedule_free_adamw/state_after_init", state0)
    check.layout("schedule_free_adamw/state_after_steps", last)
    check.golden_exact("schedule_free_adamw/step_count", states.step_count)
    _golden_trajectory(check, "schedule_free_adamw/params", ys)
    _golden_trajectory(check, "schedule_free_adamw/eval_params", xs)


# -- schedule_free_sgd ----------------------------------------------------------------------------------------------
SGD = dict(learning_rate=0.3, warmup_steps=2, b1=0.6, weight_decay=0.05, weight_lr_power=3.0)


def _sgd():
    return optax.contrib.schedule_free_sgd(**SGD)


def test_schedule_free_sgd(check):
    """schedule_free_sgd with every parameter set (a 2-step warmup, b1=0.6, weight decay 0.05 multiplied by the
    learning rate as its docstring says, weight_lr_power=3), 8 steps: z moves by -lr_t (g + wd y); y, z and the
    eval params x against float64; params, eval params and the state's layout golden."""
    s = SGD
    state0, gs, u, ys, xs, zs, states = _steps(_sgd)
    lr = lambda count: ref.warmup_constant(s["learning_rate"], s["warmup_steps"], count)  # noqa: E731
    expected = ref.schedule_free(_vec(PARAMS0), gs, lambda t, g, y: -lr(t) * (g + s["weight_decay"] * y),
                                 [lr(t + 1) for t in range(STEPS)], s["b1"], s["weight_lr_power"])
    _check_iterates(check, "sgd", expected, ys, xs, zs,
                    scale=np.abs(_vec(PARAMS0)) + s["learning_rate"] * np.abs(np.stack(gs)).max(0) * STEPS)
    check.layout("schedule_free_sgd/state_after_init", state0)
    check.layout("schedule_free_sgd/state_after_steps", jax.tree.map(lambda leaf: leaf[-1], states))
    _golden_trajectory(check, "schedule_free_sgd/params", ys)
    _golden_trajectory(check, "schedule_free_sgd/eval_params", xs)


# -- state_dtype and bfloat16 params ----------------------------------------------------------------------------
def _sgd_bf16_state():
    return optax.contrib.schedule_free_sgd(learning_rate=0.3, state_dtype="bfloat16")


def test_schedule_free_state_dtype(check):
    """schedule_free_sgd(state_dtype='bfloat16') on float32 params: z is kept in bfloat16 (the state's layout after
    init and after 8 steps is golden), the params stay float32, and z is the float32 step rounded to bfloat16
    each time (z_{t+1} = bf16(z_t - lr g_t), the documented 'dtype for z'); params golden. The layouts of
    schedule_free_adamw with state_dtype='bfloat16' and on bfloat16 params are golden too."""
    state0, gs, u, ys, xs, zs, states = _steps(_sgd_bf16_state)
    z = _vec(PARAMS0).astype(ml_dtypes.bfloat16)
    for k in range(STEPS):
        step = (z.astype(np.float64) - 0.3 * gs[k])
        check.reference(f"step {k} z (bfloat16)", zs[k], step, scale=np.abs(z.astype(np.float64)) + 0.3 * np.abs(gs[k]),
                        why="z - lr g: terms of either sign, rounded to bfloat16")
        z = zs[k]
    check.layout("schedule_free_sgd/bf16_state/state_after_init", state0)
    check.layout("schedule_free_sgd/bf16_state/state_after_steps", jax.tree.map(lambda leaf: leaf[-1], states))
    _golden_trajectory(check, "schedule_free_sgd/bf16_state/params", ys)
    for name, tx, params in (
            ("schedule_free_adamw/bf16_state", optax.contrib.schedule_free_adamw(state_dtype="bfloat16"), PARAMS0),
            ("schedule_free_adamw/bf16_params", optax.contrib.schedule_free_adamw(),
             jax.tree.map(lambda p: np.asarray(p, ml_dtypes.bfloat16), PARAMS0))):
        state0, state, updates = _shapes(tx, params)
        check.layout(f"{name}/state_after_init", state0)
        check.layout(f"{name}/state_after_step", state)
        check.layout(f"{name}/updates", updates)


def _shapes(tx, params):
    """The state after init and after one update, and the updates, by shape and dtype only (jax.eval_shape:
    nothing is compiled or run), as zeros of those shapes and dtypes for check.layout."""
    def init_and_step(params):
        state0 = tx.init(params)
        updates, state = tx.update(jax.tree.map(jnp.ones_like, params), state0, params)
        return state0, state, updates
    return jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), jax.eval_shape(init_and_step, params))
