"""Non-finite gradients in gradient accumulation: optax.MultiSteps with a should_skip_update_fn, and
optax.apply_if_finite.

MultiSteps documents that a mini-step rejected by should_skip_update_fn is "as if this mini-step never
happened": the update is zeros and mini_step, gradient_step, the accumulator (acc_grads) and the inner
state are unchanged, while skip_state holds what the function returned for this call (skip_not_finite:
should_skip and num_not_finite, the count of NaN/inf elements; skip_large_updates: should_skip, which is
"not norm_squared < max_squared_norm", and norm_squared, the sum of squares of every element).
apply_if_finite documents notfinite_count (consecutive non-finite updates, reset to 0 by a finite one),
last_finite (whether this update was finite), total_notfinite (never reset), and that once more than
max_consecutive_errors updates in a row were non-finite it gives up and applies them.

References are NumPy float64 models of those sentences, fed the arrays the library received.
"""

import functools

import jax
import numpy as np
import optax
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.contract import strategies

pytestmark = pytest.mark.family("accumulation")

LR = 0.1
K = 2
MAX_SQUARED_NORM = 1e4  # skip_large_updates' threshold: every finite gradient below stays far under it
NONFINITE = {"nan": np.nan, "+inf": np.inf, "-inf": -np.inf}


def _skip_fn(name):
    """Looked up at call time, so a patched optax is seen."""
    if name == "skip_not_finite":
        return optax.skip_not_finite
    return functools.partial(optax.skip_large_updates, max_squared_norm=MAX_SQUARED_NORM)


SKIPS = ("skip_large_updates", "skip_not_finite")
# One tree layout for every check here (a vector, a 0-d leaf, a matrix), so each jitted function
# compiles once, whatever the values (NaN, inf or finite) and however many calls a check makes.
LAYOUT = {"b": (3,), "s": (), "w": (2, 3)}
PARAMS = strategies.build(LAYOUT, lambda shape: np.zeros(shape, np.float32))
_RUNNERS = {}


def _jitted(tx, with_has_updated):
    """tx's init and update, jitted once; run(params, calls) returns the initial state, and the
    updates, states (and has_updated) after every call, stacked along a leading call axis, as NumPy."""
    init = jax.jit(tx.init)

    @jax.jit
    def step(g, state, params):
        u, state = tx.update(g, state, params)
        return u, state, (tx.has_updated(state) if with_has_updated else ())

    def run(params, calls):
        state = first = init(params)
        out = []
        for g in calls:
            u, state, has = step(g, state, params)
            out.append((u, state, has))
        out = jax.device_get(out)  # one transfer; the checks read NumPy, no op dispatch per look
        return (jax.device_get(first), *(_stack([o[i] for o in out]) for i in range(3)))

    return run


def _runner(skip):
    """MultiSteps(sgd(LR), K) with the named skip function (None: without one), looked up at first use."""
    if skip not in _RUNNERS:
        tx = optax.MultiSteps(optax.sgd(LR), every_k_schedule=K,
                              should_skip_update_fn=None if skip is None else _skip_fn(skip))
        _RUNNERS[skip] = _jitted(tx, with_has_updated=True)
    return _RUNNERS[skip]


def _stack(seq):
    """A list of trees -> one tree whose leaves have a leading call axis."""
    return jax.tree.map(lambda *xs: np.stack(xs), *seq)


def _at(tree, i):
    return jax.tree.map(lambda x: np.asarray(x)[i], tree)


def _model(grads_seq, skip, k=K):
    """MultiSteps(sgd(LR), k) with a skip function, as documented, in float64. Per call: whether it is
    skipped, the update, (mini_step, gradient_step), has_updated, and the skip_state entries."""
    window, mini, step = [], 0, 0
    out = []
    for g in grads_seq:
        leaves = [np.asarray(x, np.float64) for x in jax.tree.leaves(g)]
        count = int(sum(np.sum(~np.isfinite(x)) for x in leaves))
        with np.errstate(over="ignore", invalid="ignore"):
            norm_sq = float(sum(np.sum(x * x) for x in leaves))
        skipped = count > 0 if skip == "skip_not_finite" else not norm_sq < MAX_SQUARED_NORM
        update = [np.zeros_like(x) for x in leaves]
        if not skipped:
            window.append(leaves)
            mini += 1
            if mini == k:
                update = [-LR * np.mean([w[i] for w in window], axis=0) for i in range(len(leaves))]
                mini, step, window = 0, step + 1, []
        out.append(dict(skipped=skipped, update=update, counters=(mini, step), has_updated=mini == 0 and step > 0,
                        num_not_finite=count, norm_squared=norm_sq))
    return out


def _check_against_model(check, skip, grads_seq, init, us, states, has):
    """Every call against _model: updates, counters, has_updated, skip_state, and for a skipped call
    a state bit-identical to the one before it (acc_grads, counters, inner state)."""
    expected = _model(grads_seq, skip)
    window_abs = []  # |g| of the calls accepted since the last emission: the operands of the mean
    for i, (g, exp) in enumerate(zip(grads_seq, expected)):
        u = [np.asarray(x) for x in jax.tree.leaves(_at(us, i))]
        state = _at(states, i)
        before = init if i == 0 else _at(states, i - 1)
        check.exact("should_skip as documented", bool(state.skip_state["should_skip"]), exp["skipped"])
        check.exact("counters (mini_step, gradient_step)", [int(state.mini_step), int(state.gradient_step)],
                    list(exp["counters"]))
        check.exact("has_updated", bool(np.asarray(has)[i]), exp["has_updated"])
        if skip == "skip_not_finite":
            check.exact("skip_state num_not_finite", int(state.skip_state["num_not_finite"]), exp["num_not_finite"])
        else:
            # NaN when any element is NaN, +inf when the rest is finite and some element is +-inf: the
            # reference is the same, and a NaN or an infinity is equal only to itself
            check.reference("skip_state norm_squared", np.asarray(state.skip_state["norm_squared"]),
                            np.array(exp["norm_squared"]))
        if exp["skipped"]:
            for name in ("mini_step", "gradient_step", "acc_grads", "inner_opt_state"):
                for a, b in zip(jax.tree.leaves(getattr(state, name)), jax.tree.leaves(getattr(before, name))):
                    check.identical(f"skipped call leaves {name} unchanged", np.asarray(a), np.asarray(b))
            for x in u:
                check.exact("skipped call updates zeros", x, np.zeros(x.shape))
            continue
        window_abs.append([np.abs(np.asarray(x, np.float64)) for x in jax.tree.leaves(g)])
        if exp["counters"][0] == 0:  # an emission: -lr * mean of the accepted gradients of this cycle
            # A running mean of terms of either sign: rounding is relative to the terms, not the mean.
            scale = [LR * np.sum([w[j] for w in window_abs], axis=0) for j in range(len(u))]
            for x, e, s in zip(u, exp["update"], scale):
                check.reference("emitted -lr * mean of the accepted gradients", x, e, scale=s,
                                why="a running mean, acc += (g - acc) / n, of gradients of either sign: the mean may cancel")
            window_abs = []
        else:
            for x in u:
                check.exact("zeros between emissions", x, np.zeros(x.shape))


def _finite(rng):
    return strategies.build(LAYOUT, lambda shape: rng.standard_normal(shape).astype(np.float32))


def _fixed_sequence(value):
    """Finite, poisoned (w[1, 2]), finite (emits), poisoned right after an emission (b[0]), finite,
    poisoned in two leaves (s and w[0, 0]), finite (emits): poisoned calls at every mini-step position."""
    rng = np.random.default_rng(11)

    def poisoned(where):
        g = _finite(rng)
        for leaf, index in where:
            g[leaf][index] = value
        return g

    return [_finite(rng), poisoned([("w", (1, 2))]), _finite(rng), poisoned([("b", 0)]), _finite(rng),
            poisoned([("s", ()), ("w", (0, 0))]), _finite(rng)]


@pytest.mark.parametrize("value", sorted(NONFINITE))
@pytest.mark.parametrize("skip", SKIPS)
def test_nonfinite_ministep_skipped(check, skip, value):
    """NaN, +inf or -inf in a leaf: the mini-step is skipped (zeros out; counters, accumulator and inner
    state unchanged, also right after an emission), skip_state records it, and each emission is -lr times
    the mean of the accepted gradients only. Counters, has_updated, skip_state and acc_grads per call are
    golden."""
    seq = _fixed_sequence(NONFINITE[value])
    init, us, states, has = _runner(skip)(PARAMS, seq)
    _check_against_model(check, skip, seq, init, us, states, has)
    key = f"nonfinite/{skip}/{value}"
    check.golden_exact(f"{key}/counters", np.stack([states.mini_step, states.gradient_step], axis=1))
    check.golden_exact(f"{key}/has_updated", has)
    check.golden_tree(f"{key}/skip_state", states.skip_state)
    check.golden_tree(f"{key}/acc_grads", states.acc_grads)


def _filled(b, w, s=0.0):
    return {"b": np.asarray(b, np.float32), "s": np.asarray(s, np.float32), "w": np.full((2, 3), w, np.float32)}


def test_skip_large_updates_threshold(check):
    """skip_large_updates(max_squared_norm=T) skips a finite mini-step iff not(norm_squared < T): just
    below T it accepts, at exactly T (100**2) and above it skips; norm_squared is recorded either way."""
    below = float(np.nextafter(np.float32(100.0), np.float32(0.0)))  # its square rounds to just under T
    seq = [_filled([0.0, 0.0, below], 0.0), _filled([100.0, 0.0, 0.0], 0.0), _filled([0.0, 0.0, 0.0], 100.0),
           _filled([1.0, 2.0, 3.0], 1.0, 0.5), _filled([0.5, 0.5, 0.5], -0.5, 2.0)]
    init, us, states, has = _runner("skip_large_updates")(PARAMS, seq)
    check.exact("should_skip: below T, at T, 6 T, small, small", [bool(x) for x in states.skip_state["should_skip"]],
                [False, True, True, False, False])
    check.reference("norm_squared", states.skip_state["norm_squared"],
                    np.array([below ** 2, 1e4, 6e4, 20.25, 6.25]))
    _check_against_model(check, "skip_large_updates", seq, init, us, states, has)
    check.golden_tree("nonfinite/skip_large_updates/threshold/skip_state", states.skip_state)
    check.golden_exact("nonfinite/skip_large_updates/threshold/counters",
                       np.stack([states.mini_step, states.gradient_step], axis=1))


@pytest.mark.parametrize("value", sorted(NONFINITE))
def test_nonfinite_without_skip_fn(check, value):
    """Without should_skip_update_fn nothing is skipped: a NaN/inf enters the accumulator, the emission
    carries it, and the reset after it (0 * acc) can leave NaN in that element for every later cycle.
    Recorded as golden (in ulps; NaN and inf equal only themselves), with whether the last cycle is still poisoned;
    the other elements and the counters are unaffected."""
    seq = [_filled([1.0, 2.0, 3.0], 1.0) for _ in range(3 * K)]
    seq[0]["b"][1] = NONFINITE[value]
    _, us, states, _ = _runner(None)(PARAMS, seq)
    key = f"nonfinite/no_skip_fn/{value}"
    check.golden(f"{key}/acc_grads_b", states.acc_grads["b"])
    check.golden(f"{key}/updates_b", us["b"])
    check.golden_fact(f"{key}/last_cycle_poisoned", bool(not np.isfinite(us["b"][-1, 1])))
    emitted = us["b"][K - 1::K]
    check.reference("the other elements are unaffected", emitted[:, [0, 2]],
                    np.tile(-LR * np.array([1.0, 3.0]), (len(emitted), 1)))
    check.exact("counters advance as if finite", [int(states.mini_step[-1]), int(states.gradient_step[-1])],
                [0, len(seq) // K])


# -- Hypothesis: NaN/+-inf in any leaf and position of the fixed layout ---------------------------------------
@pytest.mark.parametrize("skip", SKIPS)
@given(data=st.data())
def test_property_nonfinite_ministep_skipped(check, skip, data):
    """K finite mini-steps and one poisoned gradient (NaN, +inf or -inf at a drawn leaf and element,
    the vector, the 0-d leaf or the matrix) arriving at a drawn position, also right after the emission:
    the poisoned call is skipped as documented and the emission is -lr times the mean of the K finite
    gradients. Finite elements are at most 10 in magnitude, so a finite gradient's norm_squared (under
    10 * 10**2) is far below MAX_SQUARED_NORM and skip_large_updates skips only the poisoned call."""
    drawn = data.draw(strategies.pytree(LAYOUT, max_magnitude=10.0, batch=K + 1), label="grads")
    shapes = [np.shape(x)[1:] for x in jax.tree.leaves(drawn)]  # in JAX's leaf order
    leaf = data.draw(st.integers(0, len(shapes) - 1), label="leaf")
    element = data.draw(st.integers(0, int(np.prod(shapes[leaf])) - 1), label="element")
    value = data.draw(st.sampled_from(sorted(NONFINITE)), label="value")
    position = data.draw(st.integers(0, K), label="position of the poisoned call")
    calls = [_at(drawn, i) for i in range(K + 1)]
    poisoned = [np.array(x) for x in jax.tree.leaves(calls.pop())]
    poisoned[leaf].reshape(-1)[element] = NONFINITE[value]
    calls.insert(position, jax.tree.unflatten(jax.tree.structure(PARAMS), poisoned))
    init, us, states, has = _runner(skip)(PARAMS, calls)
    _check_against_model(check, skip, calls, init, us, states, has)
    check.exact("one emission after K accepted calls", [int(states.mini_step[-1]), int(states.gradient_step[-1])],
                [0, 1])


# -- apply_if_finite ------------------------------------------------------------------------------------------
MAX_CONSECUTIVE = 2
_AIF = {}


def _aif_sequence(value):
    """finite, 4 poisoned in a row (the third and fourth are more than MAX_CONSECUTIVE in a row: applied),
    finite (resets the count), poisoned (rejected again), finite."""
    rng = np.random.default_rng(5)
    seq = [_finite(rng) for _ in range(8)]
    for i, (leaf, index) in zip((1, 2, 3, 4, 6), [("w", (0, 1)), ("b", 2), ("w", (1, 0)), ("s", ()), ("w", (1, 2))]):
        seq[i][leaf][index] = value
    return seq


@pytest.mark.parametrize("value", sorted(NONFINITE))
def test_apply_if_finite_counters(check, value):
    """apply_if_finite(sgd with momentum, max_consecutive_errors=2): notfinite_count, last_finite and
    total_notfinite after each call follow the documentation; a rejected update is zeros with the inner
    state (the momentum) unchanged; the third non-finite update in a row is applied, NaN/inf included,
    and poisons the momentum. Counters and updates per call are golden (NaN/inf compared exactly)."""
    if "run" not in _AIF:
        tx = optax.apply_if_finite(optax.sgd(LR, momentum=0.5), max_consecutive_errors=MAX_CONSECUTIVE)
        _AIF["run"] = _jitted(tx, with_has_updated=False)
    seq = _aif_sequence(NONFINITE[value])
    init, us, states, _ = _AIF["run"](PARAMS, seq)
    check.exact("initial counters", [int(init.notfinite_count), bool(init.last_finite), int(init.total_notfinite)],
                [0, True, 0])
    count = total = 0
    trace = [np.zeros(np.shape(x)) for x in jax.tree.leaves(PARAMS)]
    rows = []
    for i, g in enumerate(seq):
        leaves = [np.asarray(x, np.float64) for x in jax.tree.leaves(g)]
        finite = all(np.isfinite(x).all() for x in leaves)
        count, total = (0, total) if finite else (count + 1, total + 1)
        applied = finite or count > MAX_CONSECUTIVE
        state = _at(states, i)
        rows.append([int(state.notfinite_count), int(state.last_finite), int(state.total_notfinite)])
        check.exact("notfinite_count, last_finite, total_notfinite", rows[-1], [count, int(finite), total])
        u = jax.tree.leaves(_at(us, i))
        if applied:
            trace = [x + 0.5 * t for x, t in zip(leaves, trace)]  # inf stays inf: no inf - inf here
            for x, t in zip(u, trace):  # NaN/inf compare equal to themselves, finite elements within tolerance
                check.reference("applied update = -lr * momentum trace", x, -LR * t)
        else:
            for x in u:
                check.exact("rejected update is zeros", x, np.zeros(x.shape))
            before = init.inner_state if i == 0 else _at(states, i - 1).inner_state
            for a, b in zip(jax.tree.leaves(state.inner_state), jax.tree.leaves(before)):
                check.identical("rejected update leaves the inner state unchanged", a, b)
    key = f"apply_if_finite/{value}"
    check.golden_exact(f"{key}/counters", np.array(rows, np.int32))
    check.golden_fact(f"{key}/state_dtypes", [str(states.notfinite_count.dtype), str(states.last_finite.dtype),
                                              str(states.total_notfinite.dtype)])
    check.golden_tree(f"{key}/updates", us)
