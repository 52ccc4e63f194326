"""Every learning-rate schedule and schedule wrapper of Optax's public surface, every parameter at a
non-default value (harness/coverage/ledger.toml names the contract of each), at the steps just before,
at and after every transition and at the int32 count where a training state's counter stops.

References are NumPy float64 forms of the documented formulas (the docstrings of polynomial_schedule,
warmup_constant_schedule, warmup_exponential_decay_schedule, sgdr_schedule, the one-cycle schedules,
piecewise_interpolate_schedule, inject_hyperparams, scale_by_schedule and scale_by_learning_rate),
never the library's code. Schedules that take a step vector are evaluated on one vector length
(N_STEPS) and the interpolating ones one int32 step at a time, as in test_schedules.py: the eager
primitives compiled for one case serve every other.
"""

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.contract.tolerances import UNIT_ROUNDOFF

pytestmark = pytest.mark.family("schedules")

EPS32 = UNIT_ROUNDOFF["float32"]
N_STEPS = 16
INT32_MAX = np.iinfo(np.int32).max  # a state's count stops here (optax.safe_increment)
SCALE_WHY = ("the schedule's formula cancels or amplifies ((init - end) * frac**power + end, a cosine near its "
             "end): its float32 rounding is relative to the operand magnitude its reference returns")


# -- float64 references (the documented formulas) ---------------------------------------------------
def _power_gain(frac, power, u=8 * EPS32):
    """How much frac**power moves per unit of rounding in frac (u: a few ulps of 1): power for power >= 1,
    up to u**(power - 1) near frac = 0 for power < 1."""
    return np.maximum((frac + u) ** power - frac**power, frac**power - np.maximum(frac - u, 0.0) ** power) / u


def _linear(t, init, end, steps, begin=0):
    """init before begin; init + (t - begin) / steps * (end - init) on [begin, begin + steps); end after."""
    frac = np.clip((np.asarray(t, np.float64) - begin) / steps, 0.0, 1.0)
    return init + frac * (end - init), np.full(np.shape(t), max(abs(init), abs(end)))


def _polynomial(t, init, end, power, steps, begin=0):
    """(init - end) * (1 - clip(t - begin, 0, steps) / steps)**power + end."""
    frac = 1.0 - np.clip(np.asarray(t, np.float64) - begin, 0, steps) / steps
    return (init - end) * frac**power + end, max(abs(init), abs(end)) * _power_gain(frac, power)


def _exponential(t, init, steps, rate, begin=0, staircase=False, end=None):
    """init * rate**((t - begin) / steps) from begin on (the exponent floored with staircase), bounded by end."""
    p = np.maximum((np.asarray(t, np.float64) - begin) / steps, 0.0)
    p = np.floor(p) if staircase else p
    value = init * rate**p
    if end is not None:
        value = np.maximum(value, end) if rate < 1.0 else np.minimum(value, end)
    return value, np.abs(init * rate**p) * (np.abs(p * np.log(rate)) + p + 1)


def _cosine(t, init, steps, alpha=0.0, exponent=1.0):
    """alpha * init + (1 - alpha) * init * ((1 + cos(pi min(t, steps) / steps)) / 2)**exponent."""
    c = 0.5 * (1.0 + np.cos(np.pi * np.minimum(np.asarray(t, np.float64), steps) / steps))
    return alpha * init + (1.0 - alpha) * init * c**exponent, abs(init) * (1.0 - alpha) * _power_gain(c, exponent)


def _warmup_cosine(t, init_value, peak_value, warmup_steps, decay_steps, end_value=0.0, exponent=1.0):
    """Linear warmup init_value -> peak_value, then cosine to end_value until decay_steps (warmup included)."""
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return _join(t, [lambda s: _linear(s, init_value, peak_value, warmup_steps),
                     lambda s: _cosine(s, peak_value, decay_steps - warmup_steps, alpha, exponent)], [warmup_steps])


def _join(t, parts, boundaries):
    """parts[i] at t - boundaries[i-1] on [boundaries[i-1], boundaries[i])."""
    t = np.asarray(t, np.float64)
    expected, scale = np.zeros(t.shape), np.zeros(t.shape)
    for ref, start, end in zip(parts, [0, *boundaries], [*boundaries, np.inf]):
        e, s = ref(np.maximum(t - start, 0.0))
        inside = (t >= start) & (t < end)
        expected, scale = np.where(inside, e, expected), np.where(inside, s, scale)
    return expected, scale


def _interpolate(t, init, boundaries_and_scales, kind):
    """Between boundaries, linearly or along half a cosine, from init times the scales so far to the
    next boundary's value; the last value after the last boundary."""
    t = np.asarray(t, np.float64)
    bounds = [0, *sorted(boundaries_and_scales)]
    values = np.cumprod([init] + [boundaries_and_scales[b] for b in sorted(boundaries_and_scales)])
    expected = np.full(t.shape, values[-1])
    for start, end, v0, v1 in zip(bounds, bounds[1:], values, values[1:]):
        pct = (t - start) / (end - start)
        between = v0 + (v1 - v0) * pct if kind == "linear" else v1 + (v0 - v1) / 2 * (1 + np.cos(np.pi * pct))
        expected = np.where((t >= start) & (t < end), between, expected)
    return expected, np.full(t.shape, np.max(np.abs(values)))


def _vector(schedule, steps):
    """The schedule at int32 steps, on a vector padded to N_STEPS (one shape for every case)."""
    steps = np.asarray(steps, np.int32)
    padded = np.concatenate([steps, np.full(N_STEPS - steps.size, steps[-1], np.int32)])
    return np.asarray(schedule(jnp.asarray(padded)))[: steps.size]


def _scalar(schedule, steps):
    """One int32 step at a time (piecewise_interpolate_schedule compares a scalar step with its boundaries)."""
    return np.array([np.asarray(schedule(jnp.asarray(s, jnp.int32))) for s in steps])


# -- every schedule, every parameter, every transition ----------------------------------------------------
SGDR_KWARGS = [dict(init_value=0.0, peak_value=1.0, warmup_steps=3, decay_steps=10, end_value=0.1, exponent=2.0),
               dict(init_value=0.1, peak_value=0.5, warmup_steps=2, decay_steps=8, end_value=0.0)]

CASES = {  # name -> (schedule, evaluation, steps: around every transition, reference)
    "polynomial": (
        lambda: optax.polynomial_schedule(init_value=2.0, end_value=0.5, power=1.5, transition_steps=20,
                                          transition_begin=4),
        _vector, [0, 3, 4, 5, 14, 23, 24, 25, 100, INT32_MAX],
        lambda t: _polynomial(t, 2.0, 0.5, 1.5, 20, 4)),
    "polynomial_root": (  # power < 1: the slope is unbounded at the end, the rounding amplified there
        lambda: optax.polynomial_schedule(init_value=-1.0, end_value=0.25, power=0.5, transition_steps=7),
        _vector, [0, 1, 3, 5, 6, 7, 8, 1000],
        lambda t: _polynomial(t, -1.0, 0.25, 0.5, 7)),
    "polynomial_no_transition": (  # documented: transition_steps <= 0 gives the constant init_value
        lambda: optax.polynomial_schedule(init_value=0.3, end_value=0.0, power=2.0, transition_steps=0),
        _scalar, [0, 1, 5], lambda t: (np.full(np.shape(t), 0.3), np.full(np.shape(t), 0.3))),
    "polynomial_negative_begin": (  # documented: a negative transition_begin falls back to 0
        lambda: optax.polynomial_schedule(init_value=1.0, end_value=0.0, power=1.0, transition_steps=4,
                                          transition_begin=-3),
        _vector, [0, 1, 3, 4, 5], lambda t: _polynomial(t, 1.0, 0.0, 1.0, 4)),
    "warmup_constant": (
        lambda: optax.warmup_constant_schedule(init_value=0.1, peak_value=1.0, warmup_steps=8),
        _vector, [0, 1, 7, 8, 9, 50, INT32_MAX], lambda t: _linear(t, 0.1, 1.0, 8)),
    "warmup_exponential": (
        lambda: optax.warmup_exponential_decay_schedule(
            init_value=0.05, peak_value=1.0, warmup_steps=6, transition_steps=4, decay_rate=0.5,
            transition_begin=3, staircase=True, end_value=0.1),
        _vector, [0, 5, 6, 7, 8, 9, 10, 12, 13, 14, 24, 25, 26, 1000, INT32_MAX],
        lambda t: _join(t, [lambda s: _linear(s, 0.05, 1.0, 6),
                            lambda s: _exponential(s, 1.0, 4, 0.5, 3, True, 0.1)], [6])),
    # staircase at its default (False): the exponent continuous between the transitions
    "warmup_exponential_continuous": (
        lambda: optax.warmup_exponential_decay_schedule(
            init_value=0.05, peak_value=1.0, warmup_steps=6, transition_steps=4, decay_rate=0.5,
            transition_begin=3, end_value=0.1),
        _vector, [0, 5, 6, 7, 8, 9, 10, 12, 13, 14, 24, 25, 26, 1000, INT32_MAX],
        lambda t: _join(t, [lambda s: _linear(s, 0.05, 1.0, 6),
                            lambda s: _exponential(s, 1.0, 4, 0.5, 3, False, 0.1)], [6])),
    "sgdr": (
        lambda: optax.sgdr_schedule(SGDR_KWARGS),
        _vector, [0, 2, 3, 4, 9, 10, 11, 12, 13, 17, 18, 19, 100],
        lambda t: _join(t, [lambda s: _warmup_cosine(s, **SGDR_KWARGS[0]),
                            lambda s: _warmup_cosine(s, **SGDR_KWARGS[1])], [10])),
    "linear_onecycle": (  # phase ends at pct_start * T = 10 and pct_final * T = 30, then T = 40
        lambda: optax.linear_onecycle_schedule(transition_steps=40, peak_value=2.0, pct_start=0.25, pct_final=0.75,
                                               div_factor=10.0, final_div_factor=100.0),
        _scalar, [0, 9, 10, 11, 29, 30, 31, 39, 40, 41, 200],
        lambda t: _interpolate(t, 0.2, {10: 10.0, 30: 0.1, 40: 0.01}, "linear")),
    "cosine_onecycle": (  # up to peak at pct_start * T = 10, down to peak / div / final_div at T = 40
        lambda: optax.cosine_onecycle_schedule(transition_steps=40, peak_value=2.0, pct_start=0.25,
                                               div_factor=10.0, final_div_factor=100.0),
        _scalar, [0, 9, 10, 11, 39, 40, 41, 200],
        lambda t: _interpolate(t, 0.2, {10: 10.0, 40: 1e-3}, "cosine")),
    "interpolate_cosine": (
        lambda: optax.piecewise_interpolate_schedule("cosine", 2.0, {5: 0.5, 12: 3.0}),
        _scalar, [0, 4, 5, 6, 11, 12, 13, 50],
        lambda t: _interpolate(t, 2.0, {5: 0.5, 12: 3.0}, "cosine")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_transitions(check, name):
    """Every parameter at a non-default value, evaluated just before, at and after every transition and at
    the last int32 step: golden values and the documented formula in float64."""
    make, evaluate, steps, reference = CASES[name]
    values = evaluate(make(), steps)
    expected, scale = reference(np.array(steps))
    check.describe_input(f"{name} at steps {steps}")
    check.golden(f"surface/{name}", values, scale=scale, why=SCALE_WHY)
    check.reference(f"{name} closed form", values, expected, scale=scale, why=SCALE_WHY)


def test_constant_schedule(check):
    """constant_schedule(value) returns the value itself at every step, the last int32 step included."""
    schedule = optax.constant_schedule(0.37)
    values = [schedule(step) for step in (0, 1, jnp.asarray(INT32_MAX, jnp.int32))]
    check.golden_fact("surface/constant/types", [type(v).__name__ for v in values])
    for v in values:
        check.exact("the value itself", v, 0.37)


# -- wrappers that feed a schedule to an optimizer ---------------------------------------------------------
DECAY = 4  # the cosine schedule the wrappers are given reaches its end at count 4
PARAMS = {"kernel": jnp.ones((2, 3), jnp.float32), "zero": jnp.ones((3,), jnp.float32)}  # non-square; zero grads


def _grads(step):
    """Non-square gradients that change every step, and a leaf whose gradient is always zero."""
    kernel = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5) * np.float32(step + 1) / 4
    return {"kernel": jnp.asarray(kernel), "zero": jnp.zeros((3,), jnp.float32)}


def _run(tx, steps, state=None):
    """`steps` updates from `state` (a fresh one by default): the updates and the state after each."""
    state = tx.init(PARAMS) if state is None else state
    updates, states = [], []
    for step in range(steps):
        update, state = tx.update(_grads(step), state, PARAMS)
        updates.append(update)
        states.append(state)
    return updates, states


def _sgd_nesterov_reference(rates, momentum):
    """sgd(lr, momentum, nesterov=True): m = g + momentum * m; update = -lr * (g + momentum * m)."""
    m, out = 0.0, []
    for step, lr in enumerate(rates):
        g = np.asarray(_grads(step)["kernel"], np.float64)
        m = g + momentum * m
        out.append(-float(lr) * (g + momentum * m))
    return out


@pytest.mark.parametrize("factory", ["inject_hyperparams", "inject_stateful_hyperparams"])
def test_injected_options(check, factory):
    """inject_hyperparams / inject_stateful_hyperparams with static_args and hyperparam_dtype: the static
    argument stays out of the state, the injected rates are stored in the asked dtype (bfloat16: the
    schedule's value rounded), the updates follow them, zero gradients give zero updates, and the count
    saturates at the int32 maximum with the rate held at the schedule's end."""
    schedule = optax.cosine_decay_schedule(0.5, DECAY)
    inject = getattr(optax, factory)
    lr = schedule if factory == "inject_hyperparams" else optax.schedules.WrappedSchedule(schedule_fn=schedule)
    tx = inject(optax.sgd, static_args=("nesterov",), hyperparam_dtype=jnp.bfloat16)(
        learning_rate=lr, momentum=0.5, nesterov=True)
    updates, states = _run(tx, DECAY + 2)
    rates = np.array([np.asarray(st.hyperparams["learning_rate"], np.float32) for st in states])
    check.golden_fact(f"surface/{factory}/hyperparams", {k: str(jnp.asarray(v).dtype)
                                                         for k, v in sorted(states[-1].hyperparams.items())})
    check.golden(f"surface/{factory}/rates", rates)
    bf16 = np.asarray(jnp.asarray(_cosine(np.arange(DECAY + 2), 0.5, DECAY)[0], jnp.bfloat16), np.float64)
    check.reference("stored rate == bfloat16(schedule(step))", rates, bf16)
    kernels = np.stack([np.asarray(u["kernel"]) for u in updates])
    check.golden(f"surface/{factory}/kernel_updates", kernels)
    check.reference("updates follow the stored rates", kernels, np.stack(_sgd_nesterov_reference(rates, 0.5)))
    check.exact("zero gradients give zero updates", np.stack([np.asarray(u["zero"]) for u in updates]),
                np.zeros((DECAY + 2, 3)))
    _check_count_saturates(check, factory, tx, states[-1], float(bf16[-1]))


def _check_count_saturates(check, factory, tx, state, end_rate):
    """From counts one below the int32 maximum, two more updates: every count stops at the maximum."""
    near = jnp.asarray(INT32_MAX - 1, jnp.int32)
    state = state._replace(count=near)
    if factory == "inject_stateful_hyperparams":
        state = state._replace(hyperparams_states={"learning_rate": state.hyperparams_states["learning_rate"]._replace(
            count=near)})
    _, states = _run(tx, 2, state)
    counts = np.array([int(st.count) for st in states], np.int64)
    check.golden_exact(f"surface/{factory}/saturated_counts", counts)
    check.exact("the count stops at the int32 maximum", counts, np.full(2, INT32_MAX, np.int64))
    rates = np.array([np.asarray(st.hyperparams["learning_rate"], np.float32) for st in states])
    check.reference("the rate stays at the schedule's end", rates, np.full(2, end_rate))


def test_scale_by_schedule_and_learning_rate(check):
    """scale_by_schedule(step_size_fn) multiplies by the schedule at the count before each update;
    scale_by_learning_rate(schedule, flip_sign=False) too, without the sign flip, and
    scale_by_learning_rate(constant) by -constant. Counts 0..5 cross the schedule's end (4)."""
    schedule = optax.cosine_decay_schedule(0.5, DECAY, alpha=0.2)
    cases = {"scale_by_schedule": (optax.scale_by_schedule(step_size_fn=schedule), 1.0),
             "scale_by_learning_rate_schedule": (optax.scale_by_learning_rate(schedule, flip_sign=False), 1.0),
             "scale_by_learning_rate_constant": (optax.scale_by_learning_rate(0.25), None)}
    rates, scale = _cosine(np.arange(DECAY + 2), 0.5, DECAY, alpha=0.2)
    for name, (tx, sign) in cases.items():
        updates, _ = _run(tx, DECAY + 2)
        kernels = np.stack([np.asarray(u["kernel"]) for u in updates])
        check.golden(f"surface/{name}", kernels)
        factors = sign * rates if sign is not None else np.full(DECAY + 2, -0.25)
        expected = np.stack([f * np.asarray(_grads(s)["kernel"], np.float64) for s, f in enumerate(factors)])
        check.reference(f"{name}: factor * gradient", kernels, expected)
        check.exact(f"{name}: zero gradients stay zero", np.stack([np.asarray(u["zero"]) for u in updates]),
                    np.zeros((DECAY + 2, 3)))


def test_injected_bad_static_args(check):
    """static_args that are not parameters of the inner factory: the exception type is the contract."""
    check.error_contract("surface/inject/bad_static_args",
                         lambda: optax.inject_hyperparams(optax.sgd, static_args=("not_a_parameter",)))
