"""Learning-rate schedule contracts of optax.schedules.

References are NumPy float64 closed forms written from the formulas Optax documents (the docstrings
of cosine_decay_schedule, polynomial/linear_schedule, exponential_decay, piecewise_constant_schedule,
warmup_cosine_decay_schedule and join_schedules), never from the library's code. Each reference
helper returns the expected values and, per element, the operand magnitude (`scale=`) that bounds
the float32 rounding of the library's formula where it cancels or amplifies (see each helper).

Schedules are evaluated eagerly on a step vector of one fixed length, so the eager primitive cache
is reused across Hypothesis examples; the jit-vs-eager property jits once per decay_steps.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import platforms
from harness.contract.tolerances import UNIT_ROUNDOFF
from harness.model.report import NAN_STEPS_FACT

pytestmark = pytest.mark.family("schedules")

EPS32 = UNIT_ROUNDOFF["float32"]
N_STEPS = 16  # every property evaluates a schedule on this many steps (one shape, one compile)


# -- float64 references (the documented formulas) ---------------------------------------------------
def _cosine_ref(t, init, decay_steps, alpha=0.0, exponent=1.0):
    """alpha*I + (1 - alpha)*I*[(1 + cos(pi t / T)) / 2]**p for t <= T, alpha*I after.

    Scale: 1 + cos(pi t / T) cancels near t = T, leaving the cosine factor c with an absolute
    float32 error of a few ulps of 1 (u = 8 eps bounds cos, the angle's rounding and the sum);
    c**p turns an error u into at most (c + u)**p - c**p, i.e. p*u for p >= 1 but u**p near c = 0
    for p < 1. The operand magnitude is therefore |I|(1 - alpha) times that gain over u.
    """
    t = np.asarray(t, np.float64)
    c = 0.5 * (1.0 + np.cos(np.pi * np.minimum(t, decay_steps) / decay_steps))
    decayed = alpha * init + (1.0 - alpha) * init * c**exponent
    expected = np.where(t <= decay_steps, decayed, alpha * init)
    u = 8 * EPS32
    gain = np.maximum((c + u) ** exponent - c**exponent, c**exponent - np.maximum(c - u, 0.0) ** exponent) / u
    return expected, abs(init) * (1.0 - alpha) * gain


def _linear_ref(t, init, end, transition_steps, transition_begin=0):
    """I before B; I + (t - B)/T (E - I) on [B, B + T); E after.

    Scale: the library computes (I - E)(1 - (t - B)/T) + E, a difference of operands of size
    max(|I|, |E|) that can cancel to near zero.
    """
    t = np.asarray(t, np.float64)
    ramp = init + (t - transition_begin) / transition_steps * (end - init)
    expected = np.where(t < transition_begin, init, np.where(t < transition_begin + transition_steps, ramp, end))
    return expected, np.full(t.shape, max(abs(init), abs(end)))


def _exponential_ref(t, init, transition_steps, rate, transition_begin=0, staircase=False, end_value=None):
    """I * rate**((t - B)/T) for t >= B (floor of the exponent with staircase), I before; clipped at
    end_value (a lower bound when rate < 1, an upper bound otherwise).

    Scale: rate**p is exp(p ln rate); rounding p and rate to float32 moves the result by a relative
    (|p ln rate| + p) eps, so the operand magnitude is |value| times that factor.
    """
    t = np.asarray(t, np.float64)
    p = (t - transition_begin) / transition_steps
    if staircase:
        p = np.floor(p)
    p = np.maximum(p, 0.0)
    expected = init * rate**p
    if end_value is not None:
        expected = np.maximum(expected, end_value) if rate < 1.0 else np.minimum(expected, end_value)
    return expected, np.abs(init * rate**p) * (np.abs(p * np.log(rate)) + p)


def _piecewise_ref(t, init, boundaries_and_scales):
    """I times the product of every scale whose boundary b satisfies t >= b."""
    t = np.asarray(t, np.float64)
    expected = np.full(t.shape, float(init))
    for boundary, scale in boundaries_and_scales.items():
        expected = np.where(t >= boundary, expected * scale, expected)
    return expected, np.ones(t.shape)


def _join_ref(t, parts, boundaries):
    """parts[i] (a reference) at t - boundaries[i-1] on [boundaries[i-1], boundaries[i])."""
    t = np.asarray(t, np.float64)
    starts = [0] + list(boundaries)
    ends = list(boundaries) + [np.inf]
    expected, scale = np.zeros(t.shape), np.zeros(t.shape)
    for ref, start, end in zip(parts, starts, ends):
        e, s = ref(np.maximum(t - start, 0.0))
        inside = (t >= start) & (t < end)
        expected, scale = np.where(inside, e, expected), np.where(inside, s, scale)
    return expected, scale


def _interpolate_ref(t, init, boundaries_and_scales, kind="linear"):
    """Documented piecewise interpolation: the value at each boundary is init times the product of the
    scales so far; between boundaries it moves linearly, or along half a cosine, from one boundary's
    value to the next; after the last boundary it stays there.

    Scale: interpolating is a difference of neighbouring boundary values, so the operand magnitude
    is the largest of them.
    """
    t = np.asarray(t, np.float64)
    bounds = [0] + sorted(boundaries_and_scales)
    values = np.cumprod([init] + [boundaries_and_scales[b] for b in sorted(boundaries_and_scales)])
    expected = np.full(t.shape, values[-1])
    for i in range(len(bounds) - 1):
        start, end, v0, v1 = bounds[i], bounds[i + 1], values[i], values[i + 1]
        if end <= start:
            continue  # an empty interval (a boundary at 0)
        pct = (t - start) / (end - start)
        between = v0 + (v1 - v0) * pct if kind == "linear" else v1 + (v0 - v1) / 2 * (1 + np.cos(np.pi * pct))
        expected = np.where((t >= start) & (t < end), between, expected)
    return expected, np.full(t.shape, np.max(np.abs(values)))


def _onecycle_boundaries(transition_steps, pct_start, div, final_div, pct_final=None):
    """The documented phases as {step: scale} from init = peak/div: up to peak at pct_start * T,
    (linear variant) back to peak/div at pct_final * T, and to init/final_div at T. Phase ends are
    whole steps (the fraction of T rounded down)."""
    if pct_final is None:
        return {int(np.floor(pct_start * transition_steps)): div, transition_steps: 1.0 / (div * final_div)}
    return {int(np.floor(pct_start * transition_steps)): div,
            int(np.floor(pct_final * transition_steps)): 1.0 / div,
            transition_steps: 1.0 / final_div}


def _warmup_cosine_ref(t, init, peak, warmup_steps, decay_steps, end_value=0.0, exponent=1.0):
    """Linear warmup init -> peak over warmup_steps, then cosine peak -> end_value until decay_steps
    (decay_steps includes the warmup), end_value after."""
    alpha = 0.0 if peak == 0.0 else end_value / peak
    return _join_ref(t, [
        lambda s: _linear_ref(s, init, peak, warmup_steps),
        lambda s: _cosine_ref(s, peak, decay_steps - warmup_steps, alpha, exponent),
    ], [warmup_steps])


SCALE_WHY = ("the schedule's formula cancels or amplifies (1 + cos near the end of a decay, init - end in "
             "an interpolation): its float32 rounding is relative to the operand magnitude its reference returns")


def _reference_each(check, label, values, expected, scales):
    """check.reference with each element's own operand magnitude, in one comparison of the whole vector (the
    ulps are taken elementwise, as one call per element took them); none for an empty selection."""
    values = np.asarray(values)
    if values.size:
        check.reference(label, values.ravel(), np.ravel(expected), scale=np.ravel(scales), why=SCALE_WHY)


def _evaluate(schedule, steps):
    """The schedule at int32 steps, evaluated on a vector padded to N_STEPS: every schedule is then
    called with one shape, so eager primitives compiled once are reused by every check."""
    steps = np.asarray(steps, np.int32)
    padded = np.concatenate([steps, np.full(N_STEPS - steps.size, steps[-1], np.int32)])
    return np.asarray(schedule(jnp.asarray(padded)))[: steps.size]


# -- the guide ----------------------------------------------------------------------------------------
def test_guide_case(check):
    """The guide: cosine_decay_schedule(0.1, decay_steps=10, alpha=0) -> 0.1, 0.05, 0.0 at 0, 5, 10."""
    schedule = optax.cosine_decay_schedule(init_value=0.1, decay_steps=10, alpha=0.0)
    values = np.array([np.asarray(schedule(step)) for step in (0, 5, 10)])
    check.golden("guide/cosine", values)
    check.reference("guide/cosine", values, np.array([0.1, 0.05, 0.0]))
    expected, scale = _cosine_ref([0, 5, 10], 0.1, 10)
    _reference_each(check, "guide/cosine closed form", values, expected, scale)
    check.series("learning rate", np.arange(11), np.asarray(schedule(jnp.arange(11))))


def test_guide_case_jitted(check):
    """The guide's schedule as a jitted train step sees it (one scalar step, hyper-parameters baked in):
    every step 0..10 recorded, eager and jitted, so a compiler change shows as bits that moved. Two
    library paths: they are held to each other only by the equivalence tolerance (check.agree)."""
    schedule = optax.cosine_decay_schedule(init_value=0.1, decay_steps=10, alpha=0.0)
    jitted_step = jax.jit(schedule)
    steps = range(11)
    eager = np.array([np.asarray(schedule(jnp.asarray(t, jnp.int32))) for t in steps])
    jitted = np.array([np.asarray(jitted_step(jnp.asarray(t, jnp.int32))) for t in steps])
    expected, scale = _cosine_ref(np.arange(11), 0.1, 10)
    check.golden("guide/cosine/eager_steps", eager, scale=scale, why=SCALE_WHY)
    check.golden("guide/cosine/jit_steps", jitted, scale=scale, why=SCALE_WHY)
    check.agree("guide cosine: jit vs eager", jitted, eager, scale=scale, why=SCALE_WHY)
    _reference_each(check, "guide/cosine jitted closed form", jitted, expected, scale)


# -- fixed cases of every schedule: golden, reference, dtypes, jit ---------------------------------------
CASES = {
    "cosine": (
        lambda: optax.cosine_decay_schedule(init_value=2.0, decay_steps=100, alpha=0.1, exponent=2.0),
        [0, 1, 25, 50, 99, 100, 101, 1000],
        lambda t: _cosine_ref(t, 2.0, 100, 0.1, 2.0),
    ),
    "warmup_cosine": (
        lambda: optax.warmup_cosine_decay_schedule(
            init_value=0.0, peak_value=1.0, warmup_steps=10, decay_steps=110, end_value=1e-3),
        [0, 1, 5, 9, 10, 11, 60, 109, 110, 111, 500],
        lambda t: _warmup_cosine_ref(t, 0.0, 1.0, 10, 110, 1e-3),
    ),
    "linear": (
        lambda: optax.linear_schedule(init_value=1.0, end_value=0.01, transition_steps=100, transition_begin=5),
        [0, 4, 5, 6, 55, 104, 105, 110],
        lambda t: _linear_ref(t, 1.0, 0.01, 100, 5),
    ),
    "exponential": (
        lambda: optax.exponential_decay(init_value=1.0, transition_steps=10, decay_rate=0.5, transition_begin=5),
        [0, 4, 5, 6, 10, 15, 25, 105],
        lambda t: _exponential_ref(t, 1.0, 10, 0.5, 5),
    ),
    "exponential_staircase": (
        lambda: optax.exponential_decay(init_value=1.0, transition_steps=10, decay_rate=0.5,
                                        transition_begin=5, staircase=True, end_value=0.05),
        [0, 5, 14, 15, 16, 24, 25, 44, 45, 46, 200],
        lambda t: _exponential_ref(t, 1.0, 10, 0.5, 5, staircase=True, end_value=0.05),
    ),
    "exponential_growth_capped": (
        lambda: optax.exponential_decay(init_value=0.1, transition_steps=4, decay_rate=2.0, end_value=1.0),
        [0, 1, 4, 8, 12, 13, 14, 100],
        lambda t: _exponential_ref(t, 0.1, 4, 2.0, end_value=1.0),
    ),
    "piecewise_constant": (
        lambda: optax.piecewise_constant_schedule(init_value=1.0, boundaries_and_scales={100: 0.1, 200: 0.01}),
        [0, 50, 99, 100, 101, 150, 199, 200, 250],
        lambda t: _piecewise_ref(t, 1.0, {100: 0.1, 200: 0.01}),
    ),
    "join": (
        lambda: optax.join_schedules(
            [optax.constant_schedule(1.0),
             optax.linear_schedule(init_value=1.0, end_value=0.5, transition_steps=10),
             optax.cosine_decay_schedule(init_value=0.5, decay_steps=20)],
            boundaries=[5, 15]),
        [0, 4, 5, 6, 14, 15, 16, 25, 35, 36, 100],
        lambda t: _join_ref(t, [
            lambda s: (np.ones_like(s), np.ones_like(s)),
            lambda s: _linear_ref(s, 1.0, 0.5, 10),
            lambda s: _cosine_ref(s, 0.5, 20),
        ], [5, 15]),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_case(check, name):
    """Documented examples and typical settings: golden values and the float64 closed form."""
    make, steps, reference = CASES[name]
    values = _evaluate(make(), steps)
    expected, scale = reference(np.array(steps))
    check.golden(f"fixed/{name}", values, scale=scale, why=SCALE_WHY)
    _reference_each(check, f"{name} closed form", values, expected, scale)
    # The whole curve, for the HTML report's plot (one vectorised call; it compares nothing).
    curve_steps = np.unique(np.linspace(0, steps[-2] if len(steps) > 1 else steps[0], 64).astype(np.int32))
    check.series("learning rate", curve_steps, np.asarray(make()(jnp.asarray(curve_steps))))


def _dtype_fact(value):
    if isinstance(value, jax.Array):
        return [str(value.dtype), bool(getattr(value, "weak_type", False))]
    if isinstance(value, np.ndarray | np.generic):
        return [str(value.dtype), "numpy"]
    return [type(value).__name__, "python"]


# exponential_staircase and exponential_growth_capped run the same code as exponential here.
DTYPE_CASES = sorted(set(CASES) - {"exponential_staircase", "exponential_growth_capped"})


@pytest.mark.parametrize("name", DTYPE_CASES)
def test_value_dtype_per_step_type(check, name):
    """The value's dtype (and weak type, which decides promotion against bfloat16 updates) for a
    python-int, an int32 and a float32 step; the values agree across step types."""
    make, _, _ = CASES[name]
    schedule = make()
    steps = {"python_int": 7, "int32": jnp.asarray(7, jnp.int32), "float32": jnp.asarray(7.0, jnp.float32)}
    values = {kind: schedule(step) for kind, step in steps.items()}
    check.golden_fact(f"dtype/{name}", {kind: _dtype_fact(v) for kind, v in values.items()})
    for kind, v in values.items():
        check.agree(f"value at step 7: {kind} vs int32", np.asarray(v, np.float32),
                    np.asarray(values["int32"], np.float32))


@pytest.mark.parametrize("name", DTYPE_CASES)
def test_jit_matches_eager(check, name):
    """jax.jit(schedule) (hyper-parameters baked in as constants, as in a jitted train step) == eager."""
    make, steps, reference = CASES[name]
    schedule = make()
    jitted = _evaluate(jax.jit(schedule), steps)
    _, scale = reference(np.array(steps))
    # the eager values are fixed/<name>: both paths are recorded
    check.golden(f"jit/{name}", jitted, scale=scale, why=SCALE_WHY)
    check.agree(f"{name}: jit vs eager", jitted, _evaluate(schedule, steps))


# Schedules that only take a scalar step (piecewise_interpolate_schedule compares the step against a
# vector of boundaries), evaluated one int32 step at a time.
INTERPOLATED = {
    "interpolate_linear": (
        lambda: optax.piecewise_interpolate_schedule("linear", 1.0, {4: 0.1, 8: 0.01}),
        [0, 2, 3, 4, 5, 6, 8, 10],
        lambda t: _interpolate_ref(t, 1.0, {4: 0.1, 8: 0.01}, "linear"),
    ),
    "interpolate_boundary_at_0": (
        lambda: optax.piecewise_interpolate_schedule("linear", 1.0, {0: 0.5, 10: 0.1}),
        [0, 1, 3, 7, 9, 10, 11],
        lambda t: _interpolate_ref(t, 1.0, {0: 0.5, 10: 0.1}, "linear"),
    ),
    "linear_onecycle": (
        lambda: optax.linear_onecycle_schedule(transition_steps=100, peak_value=1.0),
        [0, 7, 29, 30, 31, 57, 84, 85, 86, 99, 100, 150],
        lambda t: _interpolate_ref(t, 1.0 / 25.0, _onecycle_boundaries(100, 0.3, 25.0, 1e4, 0.85)),
    ),
    "linear_onecycle_3_steps": (
        lambda: optax.linear_onecycle_schedule(transition_steps=3, peak_value=1.0),
        [0, 1, 2, 3, 7],
        lambda t: _interpolate_ref(t, 1.0 / 25.0, _onecycle_boundaries(3, 0.3, 25.0, 1e4, 0.85)),
    ),
    "cosine_onecycle": (
        lambda: optax.cosine_onecycle_schedule(transition_steps=100, peak_value=1.0),
        [0, 7, 29, 30, 31, 64, 99, 100, 150],
        lambda t: _interpolate_ref(t, 1.0 / 25.0, _onecycle_boundaries(100, 0.3, 25.0, 1e4), "cosine"),
    ),
}


@pytest.mark.parametrize("name", sorted(INTERPOLATED))
def test_interpolated_case(check, name):
    """Piecewise-interpolated and one-cycle schedules at int32 steps: golden values and the documented
    interpolation between the accumulated boundary values."""
    make, steps, reference = INTERPOLATED[name]
    schedule = make()
    values = np.array([np.asarray(schedule(jnp.asarray(step, jnp.int32))) for step in steps])
    check.golden(f"interpolated/{name}", values)
    expected, scale = reference(np.array(steps))
    _reference_each(check, f"{name} closed form", values, expected, scale)


@pytest.mark.parametrize("name", sorted(INTERPOLATED))
def test_interpolated_python_int_steps(check, name):
    """The same schedules at python-int steps (as a hand-written loop calls them): the dtype and the
    values, NaN included, are golden; they may differ from the int32 path, which is recorded, not assumed."""
    make, steps, _ = INTERPOLATED[name]
    schedule = make()
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = [schedule(step) for step in steps]
    values = np.array([np.asarray(v) for v in raw])  # in the dtype the schedule returned
    # The first difference stops the check: NaNs, then values, then the dtype name.
    check.golden_fact(f"interpolated_python_int/{name}/{NAN_STEPS_FACT}",
                      {"steps": [s for s, v in zip(steps, values) if np.isnan(v)]})
    check.golden(f"interpolated_python_int/{name}", values)
    check.golden_fact(f"interpolated_python_int/{name}/dtype", sorted({_dtype_fact(v)[0] for v in raw}))


INJECT_PARAMS = {
    "float32": lambda: {"a": jnp.ones((2,), jnp.float32), "b": jnp.ones((3,), jnp.float32)},
    "bfloat16": lambda: {"a": jnp.ones((2,), jnp.bfloat16), "b": jnp.ones((3,), jnp.bfloat16)},
    "bfloat16_first": lambda: {"a": jnp.ones((2,), jnp.bfloat16), "b": jnp.ones((3,), jnp.float32)},
    "float32_first": lambda: {"a": jnp.ones((2,), jnp.float32), "b": jnp.ones((3,), jnp.bfloat16)},
}


@pytest.mark.parametrize("layout", sorted(INJECT_PARAMS))
def test_injected_schedule(check, layout):
    """optax.inject_hyperparams(optax.sgd)(learning_rate=schedule): the learning rate in the state is the
    schedule at the step just taken, in a dtype the wrapper picks from the params (golden fact: with
    bfloat16 params the learning rate itself is rounded to bfloat16); updates are -lr * grad."""
    params = INJECT_PARAMS[layout]()
    tx = optax.inject_hyperparams(optax.sgd)(learning_rate=optax.cosine_decay_schedule(0.1, 10))
    state = tx.init(params)
    grads = jax.tree.map(jnp.ones_like, params)
    rates = []
    for _ in range(6):
        updates, state = tx.update(grads, state, params)
        rates.append(state.hyperparams["learning_rate"])
    rates = np.array([np.asarray(r) for r in rates])
    new_params = optax.apply_updates(params, updates)
    check.golden_fact(f"inject/{layout}/dtypes", {
        "learning_rate": str(rates.dtype),
        "updates": {k: str(v.dtype) for k, v in sorted(updates.items())},
        "params_after_apply_updates": {k: str(v.dtype) for k, v in sorted(new_params.items())},
    })
    check.golden(f"inject/{layout}/learning_rates", rates)
    expected, scale = _cosine_ref(np.arange(6), 0.1, 10)
    _reference_each(check, "stored learning rate == schedule(step)", rates, expected, scale)
    for key, update in sorted(updates.items()):
        expected = -np.asarray(rates[-1], np.float64) * np.ones(update.shape)
        check.agree(f"update {key} == -lr * grad", np.asarray(update), expected)


# -- Hypothesis properties ----------------------------------------------------------------------------
def _floats(lo, hi):
    """Hyper-parameters exactly representable in float32, never subnormal."""
    return st.floats(float(np.float32(lo)), float(np.float32(hi)), width=32, allow_subnormal=False)


def _signed(lo, hi):
    return st.tuples(st.sampled_from([-1.0, 1.0]), _floats(lo, hi)).map(lambda p: p[0] * p[1])


_DECAY_STEPS = st.one_of(st.integers(1, 20), st.integers(21, 1_000_000))
_EXPONENTS = st.one_of(st.just(1.0), _floats(0.25, 4.0))


def _steps(data, horizon, marks=(), upper=None):
    """N_STEPS int32 steps in [0, upper]: 0, 1, the horizon and its neighbours, the given marks, then
    random ones (upper defaults to three horizons)."""
    upper = 3 * horizon + 3 if upper is None else upper
    fixed = [0, 1, horizon // 2, horizon - 1, horizon, horizon + 1, 2 * horizon + 3, *marks]
    extra = data.draw(st.lists(st.integers(0, upper), min_size=N_STEPS - len(fixed),
                               max_size=N_STEPS - len(fixed)), label="steps")
    return np.clip(np.array(fixed + extra), 0, upper).astype(np.int32)


@given(init=_signed(1e-4, 1e3), decay_steps=_DECAY_STEPS, alpha=_floats(0.0, 1.0), exponent=_EXPONENTS,
       data=st.data())
def test_property_cosine_closed_form(check, init, decay_steps, alpha, exponent, data):
    """cosine_decay_schedule == the documented closed form for any init, decay_steps, alpha, exponent."""
    steps = _steps(data, decay_steps)
    values = _evaluate(optax.cosine_decay_schedule(init, decay_steps, alpha, exponent), steps)
    expected, scale = _cosine_ref(steps, init, decay_steps, alpha, exponent)
    _reference_each(check, "cosine closed form", values, expected, scale)


@given(init=_signed(1e-4, 1e3), decay_steps=_DECAY_STEPS, alpha=_floats(0.0, 1.0), exponent=_EXPONENTS,
       data=st.data())
def test_property_cosine_shape(check, init, decay_steps, alpha, exponent, data):
    """Non-increasing (in |value|) on [0, decay_steps]; constant at alpha*init from decay_steps on (the
    formula at the clipped step: equal within the equivalence ulps, and to alpha*init within the reference's)."""
    steps = np.sort(_steps(data, decay_steps))
    values = _evaluate(optax.cosine_decay_schedule(init, decay_steps, alpha, exponent), steps)
    # |v| / |init| in float32: dividing by a positive constant is monotone, and the bound's
    # tolerance is then relative to the schedule's own scale.
    normalized = np.float32(np.sign(init)) * values / np.float32(abs(init))
    inside = steps <= decay_steps
    check.bound("non-increasing on [0, decay_steps]", normalized[inside][1:], normalized[inside][:-1])
    after = steps >= decay_steps
    check.agree("constant from decay_steps on", values[after], np.full(after.sum(), values[after][0]))
    # alpha * init below float32's smallest normal is flushed to zero by XLA on CPU (documented platform
    # behaviour): the reference is the flushed value there.
    final = alpha * init if abs(alpha * init) >= np.finfo(np.float32).smallest_normal else np.copysign(0.0, alpha * init)
    check.reference("alpha * init after decay_steps", values[after], np.full(after.sum(), final))


_JIT_COSINE = {}


def _jit_cosine(decay_steps):
    """Jitted with init/alpha/exponent traced: one compile per decay_steps, not per example."""
    if decay_steps not in _JIT_COSINE:
        @jax.jit
        def run(init, alpha, exponent, steps):
            return optax.cosine_decay_schedule(init, decay_steps, alpha, exponent)(steps)
        _JIT_COSINE[decay_steps] = run
    return _JIT_COSINE[decay_steps]


# jit and eager do not round the angle pi * t / T alike. Eagerly, pi * t is divided by T; under jit,
# XLA's algebraic simplifier rewrites A / Const as A * (1 / Const) and folds the constants, so the
# angle is t * float32(float32(pi) * float32(1 / T)) (for T = 1000 one ulp above float32(pi / 1000)),
# and for 18-33% of the steps (T = 10, 1000, 100000) it is one ulp from the eager angle.
# (Under jit, (1 - alpha) * c**p + alpha is also one fused multiply-add: at most an ulp of the value.)
# An ulp of the angle moves cos by a few ulps of 1 at most, by one near t = T, i.e. the cosine factor
# c = (1 + cos) / 2 by 2**-25 there, and the value by that times |I| (1 - alpha) d(c**p)/dc, which
# _cosine_ref's operand magnitude `scale` bounds. Relative to a value that cancelled near t = T, that
# is far more than the equivalence tolerance (64 ulp of the value): init=-133, T=1000, t=990 gives
# eager -0.032815546 and jit -0.032811582, 1064 ulp of the value apart and exactly |I| * 2**-25 apart
# (test_cosine_jit_angle_rounding records it). So jit and eager must agree within the equivalence
# tolerance where the value is well conditioned, scale <= WELL_CONDITIONED * |value| (measured on the
# baseline over 3.7 million steps of this input space: at most 0.19 of the tolerance used); on the other
# steps each path meets the closed form with its operand-scaled tolerance (measured: at most 0.06 used).
WELL_CONDITIONED = 8


@given(init=_signed(1e-4, 1e3), decay_steps=st.sampled_from([1, 10, 1000, 100_000]),
       alpha=_floats(0.0, 1.0), exponent=_EXPONENTS, data=st.data())
def test_property_cosine_jit_matches_eager(check, init, decay_steps, alpha, exponent, data):
    """The same schedule under jit (traced hyper-parameters) and eagerly: equal up to rounding order where
    the value is well conditioned; where 1 + cos(pi t / T) cancels, both meet the closed form."""
    steps = _steps(data, decay_steps)
    eager = _evaluate(optax.cosine_decay_schedule(init, decay_steps, alpha, exponent), steps)
    jitted = np.asarray(_jit_cosine(decay_steps)(init, alpha, exponent, jnp.asarray(steps)))
    check.exact("jit keeps the dtype", str(jitted.dtype), str(eager.dtype))
    expected, scale = _cosine_ref(steps, init, decay_steps, alpha, exponent)
    conditioned = scale <= WELL_CONDITIONED * np.abs(expected)
    check.agree("jit vs eager", jitted[conditioned], eager[conditioned])
    for path, values in (("jit", jitted), ("eager", eager)):
        _reference_each(check, f"{path} where 1 + cos cancels: cosine closed form", values[~conditioned],
                        expected[~conditioned], scale[~conditioned])


def test_cosine_jit_angle_rounding(check):
    """Finding: jit and eager cosine_decay_schedule round the angle differently (see WELL_CONDITIONED):
    eagerly (pi * t) / T, under jit t * (pi * (1/T)), the division by the constant T having become a
    multiplication in XLA's algebraic simplifier. Where the angles are an ulp apart the values are
    |I| * 2**-25 apart, which near t = T is hundreds of ulps of the value (t=990: 1064) but one ulp of
    the operands. Both vectors are golden at the operands' scale, and the two paths are held to each
    other the same way: a stack that drops or changes the rewrite shows as bits that moved, with the
    paths "now bit-identical" (jax 0.12 does so); both paths meet the closed form."""
    init, decay_steps = -133.0, 1000
    steps = np.array([0, 250, 500, 750, 900, 950, 953, 962, 966, 980, 990, 995, 999, 1000, 1001, 2003], np.int32)
    eager = _evaluate(optax.cosine_decay_schedule(init, decay_steps), steps)
    jitted = np.asarray(_jit_cosine(decay_steps)(init, 0.0, 1.0, jnp.asarray(steps)))
    expected, scale = _cosine_ref(steps, init, decay_steps)
    check.golden("jit_vs_eager/eager", eager, scale=scale, why=SCALE_WHY)
    check.golden("jit_vs_eager/jit", jitted, scale=scale, why=SCALE_WHY)
    check.agree("jit vs eager", jitted, eager, scale=scale, why=SCALE_WHY)
    for path, values in (("jit", jitted), ("eager", eager)):
        _reference_each(check, f"{path}: cosine closed form", values, expected, scale)


@given(init=_floats(0.0, 1.0), peak=_floats(1e-3, 10.0), warmup=st.integers(1, 1000),
       decay=st.integers(1, 100_000), end_fraction=_floats(0.0, 1.0), exponent=_EXPONENTS, data=st.data())
def test_property_warmup_cosine(check, init, peak, warmup, decay, end_fraction, exponent, data):
    """Starts at init, reaches peak at the warmup boundary without a jump, decays to end_value, stays there."""
    decay_steps = warmup + decay
    end_value = end_fraction * peak
    steps = _steps(data, decay_steps, marks=[warmup - 1, warmup, warmup + 1])
    schedule = optax.warmup_cosine_decay_schedule(init, peak, warmup, decay_steps, end_value, exponent)
    values = _evaluate(schedule, steps)
    expected, scale = _warmup_cosine_ref(steps, init, peak, warmup, decay_steps, end_value, exponent)
    _reference_each(check, "warmup cosine closed form", values, expected, scale)
    at = dict(zip(steps.tolist(), values))
    check.reference("start value", at[0], init, scale=max(init, peak), why=SCALE_WHY)
    check.reference("peak at the warmup boundary", at[warmup], peak)
    check.reference("end value", at[decay_steps], end_value, scale=peak, why=SCALE_WHY)
    # Continuity: the step into the boundary is at most one warmup increment. Both sides are divided
    # (in float32) by the larger of init and peak, so the bound's tolerance is relative to the values.
    norm = np.float32(max(init, peak))
    jump = np.abs(np.float32(at[warmup]) / norm - np.float32(at[warmup - 1]) / norm)
    check.bound("no jump at the warmup boundary", jump, abs(peak - init) / warmup / float(norm), scale=1.0,
                why="the jump is a difference of two values of magnitude <= 1 (divided by max(init, peak)): "
                    "its rounding is relative to them, not to the increment it is bounded by")


@given(init=_signed(1e-4, 1e3), end=_signed(0.0, 1e3), transition_steps=st.integers(1, 100_000),
       transition_begin=st.integers(0, 10_000), data=st.data())
def test_property_linear(check, init, end, transition_steps, transition_begin, data):
    """linear_schedule == the documented piecewise-linear closed form, transition_begin included."""
    horizon = transition_begin + transition_steps
    steps = _steps(data, horizon, marks=[transition_begin - 1, transition_begin, transition_begin + 1])
    values = _evaluate(optax.linear_schedule(init, end, transition_steps, transition_begin), steps)
    expected, scale = _linear_ref(steps, init, end, transition_steps, transition_begin)
    _reference_each(check, "linear closed form", values, expected, scale)


@given(init=_signed(1e-4, 1e3), transition_steps=st.integers(1, 10_000), rate=_floats(0.1, 2.0),
       transition_begin=st.integers(0, 1000), staircase=st.booleans(),
       end_fraction=st.one_of(st.none(), _floats(0.01, 100.0)), data=st.data())
def test_property_exponential(check, init, transition_steps, rate, transition_begin, staircase, end_fraction,
                              data):
    """exponential_decay == the documented closed form (transition_begin, staircase, end_value bound).

    Steps reach 30 transitions past the begin, where rate**30 spans 1e-30 .. 1e9 (the float32 range
    holds every value: init is at most 1e3). With staircase, steps at an exact multiple of
    transition_steps past the begin are left to test_staircase_at_exact_multiples: there the
    library floors a float32 quotient that XLA on CPU may round one ulp below the integer.
    """
    end_value = None if end_fraction is None else init * end_fraction
    begin, period = transition_begin, transition_steps
    steps = _steps(data, begin + 10 * period, marks=[begin - 1, begin, begin + period - 1, begin + 1 + period],
                   upper=begin + 30 * period)
    schedule = optax.exponential_decay(init, transition_steps, rate, transition_begin, staircase, end_value)
    values = _evaluate(schedule, steps)
    expected, scale = _exponential_ref(steps, init, transition_steps, rate, transition_begin, staircase, end_value)
    keep = np.ones(steps.shape, bool)
    if staircase:
        keep = ~((steps > begin) & ((steps - begin) % period == 0))
    _reference_each(check, "exponential closed form", values[keep], expected[keep], scale[keep])


STAIR_PERIODS = [10, 41, 47, 100, 1000, 4099]
JITTED_STAIR_PERIODS = [10, 47]  # one of each kind, to keep the compiles few
STAIRS = 8


def test_staircase_at_exact_multiples(check):
    """Finding: staircase is documented as an integer division, but the library floors count / T
    computed in float32, and XLA on CPU does not round that division correctly: for about one
    transition_steps in eight (41, 47, 55, ...) k*T / T lands one ulp below k, so the value stays on
    the previous stair for exactly that step. The values and the late stairs are golden, so a fix
    (or a new set of late stairs) is visible; everywhere else test_property_exponential holds."""
    late, values = {}, []
    for period in STAIR_PERIODS:
        schedule = optax.exponential_decay(1.0, period, 0.5, staircase=True)
        stairs = _evaluate(schedule, np.arange(STAIRS + 1) * period)
        values.append(stairs)
        # late: on the previous stair (nearer 0.5**(k-1) than 0.5**k), not an ulp away from 0.5**k
        late[str(period)] = [k for k in range(1, STAIRS + 1) if abs(stairs[k] - 0.5 ** (k - 1)) < abs(stairs[k] - 0.5**k)]
        if period in JITTED_STAIR_PERIODS:  # a jitted train step sees one scalar step at a time
            scalar = np.asarray(jax.jit(schedule)(jnp.asarray(period, jnp.int32)))
            check.agree(f"jitted scalar step == vector element (T={period})", scalar, stairs[1])
    check.golden("staircase/exact_multiples", np.stack(values))
    check.golden_fact("staircase/late_stairs", late)


_BOUNDARIES = st.dictionaries(st.integers(1, 1000), _floats(0.0, 2.0), min_size=1, max_size=4)


@given(init=_signed(1e-4, 1e3), boundaries_and_scales=_BOUNDARIES, data=st.data())
def test_property_piecewise_constant(check, init, boundaries_and_scales, data):
    """piecewise_constant_schedule: init times every scale whose boundary has been reached (t >= b)."""
    marks = [m for b in sorted(boundaries_and_scales)[:2] for m in (b - 1, b)]
    steps = _steps(data, max(boundaries_and_scales), marks=marks)
    values = _evaluate(optax.piecewise_constant_schedule(init, boundaries_and_scales), steps)
    expected, scale = _piecewise_ref(steps, init, boundaries_and_scales)
    _reference_each(check, "piecewise constant closed form", values, expected, scale)


@given(start=_signed(1e-4, 10.0), peak=_floats(1e-3, 10.0), ramp=st.integers(1, 1000),
       boundary=st.integers(1, 2000), decay=st.integers(1, 10_000), alpha=_floats(0.0, 1.0), data=st.data())
def test_property_join(check, start, peak, ramp, boundary, decay, alpha, data):
    """join_schedules: the second schedule restarts its count at the boundary; the first holds before it."""
    schedule = optax.join_schedules(
        [optax.linear_schedule(start, peak, ramp), optax.cosine_decay_schedule(peak, decay, alpha)], [boundary])
    steps = _steps(data, boundary + decay, marks=[boundary - 1, boundary, boundary + 1])
    values = _evaluate(schedule, steps)
    expected, scale = _join_ref(steps, [
        lambda s: _linear_ref(s, start, peak, ramp),
        lambda s: _cosine_ref(s, peak, decay, alpha),
    ], [boundary])
    _reference_each(check, "join closed form", values, expected, scale)


# -- invalid arguments, and the values just at and beyond each argument check -------------------------
# Each check is pinned at the boundary and just beyond it (a non-positive transition_steps, a negative or
# zero scale, a zero peak_value), so a moved comparison shows as a raise that appears or disappears, or
# as values that change.
INVALID = {
    "cosine/decay_steps=0": lambda: optax.cosine_decay_schedule(0.1, decay_steps=0),
    "cosine/decay_steps=-5": lambda: optax.cosine_decay_schedule(0.1, decay_steps=-5),
    "warmup_cosine/warmup=decay": lambda: optax.warmup_cosine_decay_schedule(0.0, 1.0, 10, 10),
    "warmup_cosine/warmup>decay": lambda: optax.warmup_cosine_decay_schedule(0.0, 1.0, 12, 10),
    "warmup_cosine/warmup=0": lambda: optax.warmup_cosine_decay_schedule(0.0, 1.0, 0, 10),
    "linear/transition_steps=0": lambda: optax.linear_schedule(1.0, 0.0, transition_steps=0),
    "linear/transition_begin=-3": lambda: optax.linear_schedule(1.0, 0.0, 10, transition_begin=-3),
    "exponential/transition_steps=0": lambda: optax.exponential_decay(1.0, 0, 0.5),
    "exponential/decay_rate=0": lambda: optax.exponential_decay(1.0, 10, 0.0),
    "piecewise/negative_scale": lambda: optax.piecewise_constant_schedule(1.0, {10: -0.5}),
    "join/too_few_boundaries": lambda: optax.join_schedules(
        [optax.constant_schedule(1.0), optax.constant_schedule(0.5), optax.constant_schedule(0.1)], [5]),
    "piecewise/zero_scale": lambda: optax.piecewise_constant_schedule(1.0, {10: 0.0}),
    "interpolate/negative_scale": lambda: optax.piecewise_interpolate_schedule("linear", 1.0, {10: -0.5}),
    "interpolate/zero_scale": lambda: optax.piecewise_interpolate_schedule("linear", 1.0, {10: 0.0}),
    **{f"{kind}_onecycle/transition_steps={n}": (lambda kind=kind, n=n: getattr(
        optax, f"{kind}_onecycle_schedule")(transition_steps=n, peak_value=1.0)) for kind in ("linear", "cosine")
       for n in (-1, 0, 1)},
    "exponential/transition_steps=-1": lambda: optax.exponential_decay(1.0, -1, 0.5),
    "exponential/transition_steps=1": lambda: optax.exponential_decay(1.0, 1, 0.5),
    "exponential/transition_begin=-1": lambda: optax.exponential_decay(1.0, 10, 0.5, transition_begin=-1),
    "exponential/transition_begin=default": lambda: optax.exponential_decay(1.0, 10, 0.5),
    "polynomial/transition_steps=-1": lambda: optax.polynomial_schedule(1.0, 0.0, 2.0, transition_steps=-1),
    "polynomial/transition_steps=1": lambda: optax.polynomial_schedule(1.0, 0.0, 2.0, transition_steps=1),
    # the value just beyond the clamp of a negative transition_begin to 0
    "polynomial/transition_begin=-1": lambda: optax.polynomial_schedule(1.0, 0.0, 1, 10, transition_begin=-1),
    # an option string equal to "linear" but built at run time, as one read from a config file is
    "interpolate/type_built_at_run_time": lambda: optax.piecewise_interpolate_schedule(
        "".join(["lin", "ear"]), 1.0, {10: 0.5}),
    "warmup_cosine/peak=0": lambda: optax.warmup_cosine_decay_schedule(0.5, 0.0, 10, 20),
    "warmup_cosine/peak=0,end=0.1": lambda: optax.warmup_cosine_decay_schedule(0.5, 0.0, 10, 20, end_value=0.1),
    "warmup_cosine/peak=-1": lambda: optax.warmup_cosine_decay_schedule(0.0, -1.0, 10, 20, end_value=-0.25),
}
INVALID_STEPS = [0, 1, 5, 9, 10, 11, 20]
# The documented formula, where the call is valid. Not the one-cycle schedules at transition_steps=1: their
# first phase rounds down to 0 steps, a 0/0 the docstrings do not define (golden values only).
INVALID_REFERENCES = {
    "piecewise/zero_scale": lambda t: _piecewise_ref(t, 1.0, {10: 0.0}),
    "interpolate/zero_scale": lambda t: _interpolate_ref(t, 1.0, {10: 0.0}),
    "exponential/transition_steps=-1": lambda t: (np.ones(t.shape), np.ones(t.shape)),
    "exponential/transition_steps=1": lambda t: _exponential_ref(t, 1.0, 1, 0.5),
    "exponential/transition_begin=-1": lambda t: _exponential_ref(t, 1.0, 10, 0.5),
    "exponential/transition_begin=default": lambda t: _exponential_ref(t, 1.0, 10, 0.5),
    "polynomial/transition_steps=-1": lambda t: (np.ones(t.shape), np.ones(t.shape)),
    "polynomial/transition_steps=1": lambda t: (np.where(t < 1, 1.0, 0.0), np.ones(t.shape)),
    "polynomial/transition_begin=-1": lambda t: _linear_ref(t, 1.0, 0.0, 10),  # power 1, clamped to begin at 0
    "interpolate/type_built_at_run_time": lambda t: _interpolate_ref(t, 1.0, {10: 0.5}),
    "warmup_cosine/peak=0": lambda t: _warmup_cosine_ref(t, 0.5, 0.0, 10, 20),
    "warmup_cosine/peak=0,end=0.1": lambda t: _warmup_cosine_ref(t, 0.5, 0.0, 10, 20, end_value=0.1),
    "warmup_cosine/peak=-1": lambda t: _warmup_cosine_ref(t, 0.0, -1.0, 10, 20, end_value=-0.25),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_arguments(check, case):
    """Construction and evaluation: the exception type is the contract; when nothing is raised the
    values produced are golden (and meet the documented formula where one applies), so a change in the
    silent behaviour is visible too."""
    def build_and_evaluate():
        schedule = INVALID[case]()
        return np.array([np.asarray(schedule(step), np.float32) for step in INVALID_STEPS])

    result = check.error_contract(f"invalid/{case}", build_and_evaluate)
    if not isinstance(result, Exception):
        check.golden(f"invalid/{case}/values", result)
        if case in INVALID_REFERENCES:
            expected, scale = INVALID_REFERENCES[case](np.array(INVALID_STEPS))
            _reference_each(check, f"{case} closed form", result, expected, scale)


@pytest.mark.needs(platforms.FLOAT64)
def test_float64_with_x64(check):
    """With x64 enabled, a float64 schedule stays float64 and meets the float64 closed form."""
    with jax.enable_x64(True):
        schedule = optax.cosine_decay_schedule(init_value=jnp.float64(0.1), decay_steps=10, alpha=0.0)
        values = np.asarray(schedule(jnp.arange(11)))
    check.golden_fact("x64/cosine/dtype", str(values.dtype))
    check.golden("x64/cosine", values)
    steps = np.arange(11)
    check.reference("x64 cosine closed form", values, 0.1 * 0.5 * (1 + np.cos(np.pi * steps / 10)), scale=0.1,
                    why=SCALE_WHY)
