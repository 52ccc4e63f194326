"""optax.contrib.reduce_on_plateau: the learning-rate scale a training loop gets after the loss stops
improving, call by call, with every parameter at a non-default value.

The reference is a float64 model written from the docstring: the values are averaged over
accumulation_size calls; at the window's last call the average improves when it is below
(1 - rtol) * best - atol; patience windows without improvement multiply the scale by factor (never below
min_scale) and start a cooldown of that many windows in which the plateau count stays 0. Runs are chosen
so the model is exact in float32 (thresholds 0.625 and 0.25, scales powers of two, a floor of 0.2), so
which side of a threshold the library sees is known. Each run goes through one jitted scan: factor,
rtol and atol are fixed (the constructor checks them in Python), the other parameters are traced, so the
four runs share one compiled program.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

pytestmark = pytest.mark.family("schedules")

F32 = np.float32
FACTOR, RTOL, ATOL = 0.5, 0.25, 0.125  # threshold (1 - rtol) * best - atol: 0.625 at best 1, 0.25 at best 0.5
N_CALLS = 20
FIELDS = ("scale", "best_value", "plateau_count", "cooldown_count", "count", "avg_value")
DTYPES = {"scale": "float32", "best_value": "float32", "plateau_count": "int32", "cooldown_count": "int32",
          "count": "int32", "avg_value": "float32"}
GRADS = {"b": np.zeros(3, F32), "w": np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.5]], F32)}  # zeros; non-square


def _below(x):
    return float(np.nextafter(F32(x), F32(0.0)))


def _above(x):
    return float(np.nextafter(F32(x), F32(np.inf)))


@jax.jit
def _run(values, patience, cooldown, accumulation_size, min_scale):
    """Every state field and the updates after each call; params of another layout than the updates
    (the transformation ignores them, so the layouts need not match)."""
    tx = optax.contrib.reduce_on_plateau(factor=FACTOR, patience=patience, rtol=RTOL, atol=ATOL, cooldown=cooldown,
                                         accumulation_size=accumulation_size, min_scale=min_scale)

    def call(state, value):
        updates, state = tx.update(GRADS, state, value=value)
        return state, (state._asdict(), updates)

    return jax.lax.scan(call, tx.init({"p": jnp.zeros((), jnp.float32)}), values)[1]


def _model(values, patience, cooldown, k, min_scale):
    """The float64 model of the docstring: each field after each call."""
    scale, best, plateau, cool, count, avg = 1.0, np.inf, 0, 0, 0, 0.0
    rows = []
    for value in np.asarray(values, np.float64):
        avg, count = (count * avg + value) / (count + 1), count + 1
        if count == k:
            improved = avg < (1.0 - RTOL) * best - ATOL
            best = avg if improved else best
            stale = 0 if improved else plateau + 1
            if cool > 0:
                plateau, cool = 0, cool - 1
            else:
                hit = stale == patience
                plateau, cool = (0, cooldown) if hit else (stale, 0)
                scale = max(scale * FACTOR if hit else scale, min_scale)
            count, avg = 0, 0.0
        rows.append((scale, best, plateau, cool, count, avg))
    return {field: np.array(column) for field, column in zip(FIELDS, zip(*rows))}


def _pad(values):
    return np.array(values + [values[-1]] * (N_CALLS - len(values)), F32)


RUNS = {  # name -> (values, patience, cooldown, accumulation_size, min_scale)
    # a loss stuck at 1: reductions at calls 4, 9, 14 (0.125 floored to 0.2) and 19, two calls of cooldown after each
    "patience_cooldown_floor": (_pad([1.0]), 3, 2, 1, 0.2),
    # best 1: just over, at and just under the threshold 0.625 (only under improves)
    "threshold_at_best_1": (_pad([1.0, _above(0.625), 0.625, _below(0.625)]), 100, 0, 1, 0.0),
    # best 0.5: the threshold scales with best (0.375 - 0.125 = 0.25), atol is not scaled
    "threshold_at_best_0.5": (_pad([0.5, _above(0.25), 0.25, _below(0.25)]), 100, 0, 1, 0.0),
    # windows of 3 calls: means 2 (best), 3, 2 (reduction, 1 window of cooldown), 1 (best), 1, 1 (reduction)
    "accumulation": (np.array([3, 1, 2, 4, 2, 3, 2.5, 1.5, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 2], F32), 2, 1, 3, 0.0),
    # Degenerate values the docstring leaves open, read literally (golden, and the model's literal reading):
    # patience 0 reduces at each improvement only; a negative cooldown is never a cooldown; accumulation_size
    # 0 never ends a window (the scale stays 1, the mean runs over every call).
    "patience_0": (_pad([4.0, 3.0, 3.0, 2.0, 2.0, 1.0]), 0, 3, 1, 0.0),
    "cooldown_negative": (_pad([4.0, 3.0, 3.0, 2.0, 2.0, 1.0]), 1, -1, 1, 0.0),
    "accumulation_0": (_pad([4.0, 3.0, 3.0, 2.0, 2.0, 1.0]), 1, 0, 0, 0.0),
}
EXPECTED_SCALES = {  # the scale after each call, stated for the reader (the model agrees, below)
    "patience_cooldown_floor": [1.0] * 3 + [0.5] * 5 + [0.25] * 5 + [0.2] * 7,
    "accumulation": [1.0] * 8 + [0.5] * 9 + [0.25] * 3,
}


def _observe(name):
    values, patience, cooldown, k, min_scale = RUNS[name]
    states, updates = jax.device_get(_run(values, np.int32(patience), np.int32(cooldown), np.int32(k), F32(min_scale)))
    return states, updates, _model(values, patience, cooldown, k, min_scale)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_reduce_on_plateau_calls(check, name):
    """Every state field after every call against the float64 model (counters exactly), the updates as
    scale * grads (a zero leaf stays zero), the whole trajectory golden."""
    values, patience, cooldown, k, min_scale = RUNS[name]
    check.describe_input(f"reduce_on_plateau(factor={FACTOR}, patience={patience}, rtol={RTOL}, atol={ATOL}, "
                         f"cooldown={cooldown}, accumulation_size={k}, min_scale={min_scale}) fed {N_CALLS} losses")
    states, updates, model = _observe(name)
    for field in FIELDS:
        check.exact(f"{field} dtype", str(states[field].dtype), DTYPES[field])
        if DTYPES[field] == "int32":
            check.exact(f"{field} after each call", states[field], model[field])
        else:
            check.reference(f"{field} after each call", states[field], model[field])
    if name in EXPECTED_SCALES:
        check.exact("scale after each call", states["scale"], np.array(EXPECTED_SCALES[name], F32))
    for key, grad in GRADS.items():
        expected = model["scale"].reshape(-1, *[1] * grad.ndim) * grad.astype(np.float64)
        check.reference(f"updates {key} = scale * grads", updates[key], expected)
    check.exact("a zero gradient leaf stays zero", updates["b"], np.zeros((N_CALLS, 3)))
    check.golden_tree(f"reduce_on_plateau/{name}", {"state": states, "updates": updates})


def test_reduce_on_plateau_thresholds(check):
    """Which call improves: just over and at (1 - rtol) * best - atol is no improvement (the plateau
    count grows, best stays), just under is (best becomes the value, the count restarts)."""
    for name, best in (("threshold_at_best_1", 1.0), ("threshold_at_best_0.5", 0.5)):
        states = _observe(name)[0]
        check.exact(f"{name}: plateau count after over, at, under", states["plateau_count"][1:4], [1, 2, 0])
        check.exact(f"{name}: best after over, at", states["best_value"][1:3], [best, best])
        check.exact(f"{name}: best after under", states["best_value"][3], RUNS[name][0][3])


def test_reduce_on_plateau_accumulation_boundaries(check):
    """accumulation_size 3: the calls just before (k-1), at (k) and after (k+1) a window's end: the count
    and running mean before it, the reset at it, a new window after it; the scale moves only at k."""
    states = _observe("accumulation")[0]
    check.exact("count after calls 1..7", states["count"][:7], [1, 2, 0, 1, 2, 0, 1])
    check.reference("running mean at k-1 (calls 1, 2)", states["avg_value"][1], 2.0)
    check.exact("mean reset at k", states["avg_value"][2], 0.0)
    check.exact("a new window at k+1 starts from its value", states["avg_value"][3], 4.0)
    check.exact("scale before, at and after the reducing window's end (calls 8, 9, 10)",
                states["scale"][7:10], [1.0, 0.5, 0.5])


def test_reduce_on_plateau_init_state(check):
    """The initial state: scale 1 in the lowest float dtype of the params (bfloat16 beside float32), best
    +inf, counters int32 zeros, the running mean 0."""
    tx = optax.contrib.reduce_on_plateau()
    for name, params in (("float32", {"w": np.ones((2, 3), F32)}),
                         ("mixed", {"w": np.ones((2, 3), F32), "h": jnp.ones(3, jnp.bfloat16)})):
        state = jax.device_get(tx.init(params)._asdict())
        check.golden_fact(f"reduce_on_plateau/init/{name}/dtypes", {k: str(v.dtype) for k, v in state.items()})
        check.exact(f"{name}: scale dtype", str(state["scale"].dtype), "bfloat16" if name == "mixed" else "float32")
        check.exact(f"{name}: values", {k: float(v) for k, v in state.items()},
                    {**dict.fromkeys(FIELDS, 0.0), "scale": 1.0, "best_value": float("inf")})


BAD_ARGUMENTS = {  # name -> kwargs: each constructor check at its boundary and just beyond
    "factor=0": {"factor": 0.0}, "factor=tiny": {"factor": 1e-30}, "factor=1": {"factor": 1.0},
    "factor=under_1": {"factor": _below(1.0)}, "factor=over_1": {"factor": _above(1.0)},
    "factor=-tiny": {"factor": -1e-30}, "rtol=-tiny": {"rtol": -1e-30}, "atol=-tiny": {"atol": -1e-30},
    "rtol=0,atol=0": {"rtol": 0.0, "atol": 0.0}, "rtol=0,atol=tiny": {"rtol": 0.0, "atol": 1e-30},
    "rtol=tiny,atol=0": {"rtol": 1e-30, "atol": 0.0}, "rtol=1": {"rtol": 1.0}, "rtol=over_1": {"rtol": _above(1.0)},
}


def test_reduce_on_plateau_argument_checks(check):
    """factor must be in (0, 1), rtol and atol >= 0 and not both 0, rtol <= 1: the raise-or-not outcome of
    each boundary and just beyond is golden; an update without the loss value is an error too."""
    for name in sorted(BAD_ARGUMENTS):
        check.error_contract(f"reduce_on_plateau/arguments/{name}", optax.contrib.reduce_on_plateau,
                             **BAD_ARGUMENTS[name])
    tx = optax.contrib.reduce_on_plateau()
    check.error_contract("reduce_on_plateau/update_without_value", tx.update, GRADS, tx.init(GRADS))
