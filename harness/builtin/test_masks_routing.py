"""Routing, freezing, conditional and constraining transforms: optax.partition (and its older name
multi_transform), masked's mask_compatible_extra_args, set_to_zero, freeze, selective_transform,
conditionally_mask, conditionally_transform, zero_nans, keep_params_nonnegative, flatten,
add_decayed_weights with a schedule, incremental_update and apply_updates.

References are NumPy float64 models of the docstrings: a routed leaf follows its own transform and no
other; a frozen or zeroed leaf is exactly zero; conditionally_mask gives zeros and conditionally_transform
the raw gradient while should_transform_fn(step) is false, leaving the inner state untouched;
zero_nans replaces NaN (not inf) by 0 and records which leaves had one; keep_params_nonnegative turns an
update that would make a param negative into -param; flatten runs its inner transform on one
concatenated vector; incremental_update is step_size * new + (1 - step_size) * old.

Every parameter is set to a non-default value; counts and thresholds are crossed one call or one ulp at a
time; malformed masks and labels record their exception (or, without one, their result) as golden.
"""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import optax
import pytest

pytestmark = pytest.mark.family("masks")

F32 = np.float32
LR, MOMENTUM, WD = 0.1, 0.9, 0.3
LAYOUT = {"bias": (3,), "kernel": (2, 3), "scale": ()}
_JIT = {}


def _tree(seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return {k: (scale * rng.standard_normal(s)).astype(F32) for k, s in LAYOUT.items()}


def _f64(x):
    return np.asarray(x, np.float64)


def _runs(name, make):
    """tx = make(); init then one update per (grads, extra args) pair, jitted once per name and layout."""
    if name not in _JIT:
        def run(params, calls):
            tx = make()
            state, out = tx.init(params), []
            for g, extra in calls:
                u, state = tx.update(g, state, params, **extra)
                out.append((u, state))
            return out
        _JIT[name] = jax.jit(run)
    return lambda params, calls: jax.device_get(_JIT[name](params, calls))


def _momentum_ref(seq):
    """sgd(LR, momentum=MOMENTUM) updates per call, {leaf: update}, and the operands' scale."""
    trace, out = None, []
    for g in seq:
        g = {k: _f64(v) for k, v in g.items()}
        trace = g if trace is None else {k: g[k] + MOMENTUM * trace[k] for k in g}
        out.append({k: -LR * v for k, v in trace.items()})
    return out


_WHY = "g + momentum * trace: terms of either sign may cancel"


def _scale(seq, i, key):
    return LR * sum(np.abs(_f64(g[key])) * MOMENTUM ** (i - j) for j, g in enumerate(seq[:i + 1]))


# -- partition / multi_transform ------------------------------------------------------------------------------
LABELS = {"bias": "decay", "kernel": "momentum", "scale": "zero"}
PARTS = {"momentum": lambda: optax.sgd(LR, momentum=MOMENTUM), "decay": lambda: optax.add_decayed_weights(WD),
         "zero": optax.set_to_zero}


def _partition(name, labels):
    fn = getattr(optax, name)
    return _runs(f"{name}/{'callable' if callable(labels) else 'tree'}",
                 lambda: fn({k: make() for k, make in PARTS.items()}, labels))


@pytest.mark.parametrize("labels", ["tree", "callable"])
@pytest.mark.parametrize("name", ["partition", "multi_transform"])
def test_partition_routes_each_leaf(check, name, labels):
    """partition({momentum, decay, zero}, param_labels) over three calls: the kernel follows sgd with
    momentum, the bias gets grad + wd * param, the scalar is exactly zero; one inner state per label."""
    param_labels = LABELS if labels == "tree" else (lambda tree: {k: LABELS[k] for k in tree})
    params, seq = _tree(50), [_tree(51 + i) for i in range(3)]
    out = _partition(name, param_labels)(params, [(g, {}) for g in seq])
    ref = _momentum_ref([{"kernel": g["kernel"]} for g in seq])
    for i, (u, _state) in enumerate(out):
        check.reference(f"call {i + 1} kernel: sgd with momentum", u["kernel"], ref[i]["kernel"],
                        scale=_scale(seq, i, "kernel"), why=_WHY)
        g, p = _f64(seq[i]["bias"]), _f64(params["bias"])
        check.reference(f"call {i + 1} bias: grad + wd * param", u["bias"], g + WD * p,
                        scale=np.abs(g) + WD * np.abs(p), why="grad + wd * param may cancel")
        check.exact(f"call {i + 1} scale: zero", u["scale"], 0.0)
    state = out[-1][1]
    check.exact("one inner state per label", sorted(state.inner_states), sorted(PARTS))
    check.golden_fact(f"partition/{name}/{labels}/state", [type(state).__name__, sorted(state.inner_states)])
    check.golden_tree(f"partition/{name}/{labels}/updates", [u for u, _ in out])


class _AddOffset:
    """A transform taking an extra argument shaped like the updates (a per-leaf offset), added to them:
    what masked/partition must mask alongside the updates when mask_compatible_extra_args is set."""

    def __new__(cls):
        def update(updates, state, params=None, *, offset=None, **extra):
            del params, extra
            return jax.tree.map(lambda u, o: u + o, updates, offset), state
        return optax.GradientTransformationExtraArgs(lambda params: optax.EmptyState(), update)


MASK = {"bias": False, "kernel": True, "scale": True}
_EXTRA = {
    "masked": lambda compatible: optax.masked(_AddOffset(), MASK, mask_compatible_extra_args=compatible),
    "partition": lambda compatible: optax.partition(
        {"add": _AddOffset(), "keep": optax.identity()},
        {k: "add" if v else "keep" for k, v in MASK.items()}, mask_compatible_extra_args=compatible),
}


@pytest.mark.parametrize("compatible", [True, False], ids=["compatible", "default"])
@pytest.mark.parametrize("wrapper", sorted(_EXTRA))
def test_mask_compatible_extra_args(check, wrapper, compatible):
    """An extra argument with the updates' structure: with mask_compatible_extra_args=True it is masked
    like the updates, so the masked leaves get grad + offset and the others the grad, bit for bit; by
    default it reaches the inner transform whole (the outcome, an error here, is golden)."""
    params, g, offset = _tree(60), _tree(61), _tree(62)
    run = jax.jit(lambda p, g, o: _call_once(_EXTRA[wrapper](compatible), p, g, offset=o))
    key = f"extra_args/{wrapper}/{compatible}"
    result = check.error_contract(key, run, params, g, offset)
    if isinstance(result, Exception):
        return
    for k, masked in MASK.items():
        if masked:
            check.reference(f"{k}: grad + offset", result[k], _f64(g[k]) + _f64(offset[k]),
                            scale=np.abs(_f64(g[k])) + np.abs(_f64(offset[k])), why="grad + offset may cancel")
        else:
            check.identical(f"{k}: grad passes through", result[k], g[k])
    check.golden_tree(f"{key}/updates", result)


def _call_once(tx, params, grads, **extra):
    return tx.update(grads, tx.init(params), params, **extra)[0]


class _AddScaledOffset:
    """updates + factor * offset: beside the per-leaf offset, a scalar extra argument (the form of a loss
    value or a step passed through extra_args), which has another structure than the updates."""

    def __new__(cls):
        def update(updates, state, params=None, *, offset=None, factor=None, **extra):
            del params, extra
            return jax.tree.map(lambda u, o: u + factor * o, updates, offset), state
        return optax.GradientTransformationExtraArgs(lambda params: optax.EmptyState(), update)


_EXTRA_SCALED = {
    "masked": lambda: optax.masked(_AddScaledOffset(), MASK, mask_compatible_extra_args=True),
    "partition": lambda: optax.partition(
        {"add": _AddScaledOffset(), "keep": optax.identity()},
        {k: "add" if v else "keep" for k, v in MASK.items()}, mask_compatible_extra_args=True),
}


@pytest.mark.parametrize("wrapper", sorted(_EXTRA_SCALED))
def test_mask_compatible_extra_args_other_structure(check, wrapper):
    """With mask_compatible_extra_args=True only the extra arguments shaped like the updates are masked:
    a scalar one reaches the inner transform as it is. The masked leaves get grad + factor * offset, the
    others the grad, bit for bit (the outcome, raise or not, is golden)."""
    params, g, offset, factor = _tree(70), _tree(71), _tree(72), F32(0.75)
    run = jax.jit(lambda p, g, o, f: _call_once(_EXTRA_SCALED[wrapper](), p, g, offset=o, factor=f))
    key = f"extra_args/{wrapper}/other_structure"
    check.describe_input("extra args offset (shaped like the updates) and factor (a float32 scalar)")
    result = check.error_contract(key, run, params, g, offset, factor)
    if isinstance(result, Exception):
        return
    for k, masked in MASK.items():
        if masked:
            check.reference(f"{k}: grad + factor * offset", result[k], _f64(g[k]) + 0.75 * _f64(offset[k]),
                            scale=np.abs(_f64(g[k])) + 0.75 * np.abs(_f64(offset[k])), why="the sum may cancel")
        else:
            check.identical(f"{k}: grad passes through", result[k], g[k])
    check.golden_tree(f"{key}/updates", result)


def test_masked_node_in_inner_state(check):
    """masked(sgd with momentum): the inner state holds the masked leaves' traces and a MaskedNode (an empty
    placeholder) for every other leaf, so a checkpoint's layout depends on the mask; the types are golden."""
    tx = optax.masked(optax.sgd(LR, momentum=MOMENTUM), MASK)
    state = tx.init(_tree(63))
    trace = state.inner_state[0].trace
    check.exact("unmasked leaf is a MaskedNode", isinstance(trace["bias"], optax.MaskedNode), True)
    check.exact("MaskedNode has no leaves", jax.tree.leaves(optax.MaskedNode()), [])
    check.golden_fact("masked_node/inner_trace", {k: type(v).__name__ for k, v in sorted(trace.items())})


def test_named_chain(check):
    """named_chain(("clip", clip(0.5)), ("sgd", sgd with momentum)): the same updates as chain, bit for bit,
    over two calls, with the states keyed by name; a repeated name raises (the type is golden)."""
    params, seq = _tree(64), [_tree(65 + i) for i in range(2)]
    parts = lambda: (optax.clip(0.5), optax.sgd(LR, momentum=MOMENTUM))
    named = _runs("named_chain", lambda: optax.named_chain(*zip(("clip", "sgd"), parts())))(params, [(g, {}) for g in seq])
    plain = _runs("chain", lambda: optax.chain(*parts()))(params, [(g, {}) for g in seq])
    for i in range(2):
        for k in sorted(LAYOUT):
            check.identical(f"call {i + 1} {k}: named_chain = chain", named[i][0][k], plain[i][0][k])
    check.exact("states keyed by name", list(named[-1][1]), ["clip", "sgd"])
    clipped = [{k: np.clip(v, -0.5, 0.5) for k, v in g.items()} for g in seq]
    for k in sorted(LAYOUT):
        check.reference(f"call 2 {k}: sgd with momentum of the clipped grads", named[1][0][k],
                        _momentum_ref(clipped)[1][k], scale=_scale(clipped, 1, k), why=_WHY)
    check.golden_tree("named_chain/updates", [u for u, _ in named])
    check.error_contract("named_chain/repeated_name", optax.named_chain, ("a", optax.clip(1.0)), ("a", optax.sgd(LR)))


def test_chain_state_of_another_length(check):
    """chain(clip, sgd) given the state of a shorter chain (one transform: a chain grown since its state was
    made or restored) or of a longer one raises: zip would otherwise skip the transforms without a state,
    silently. The exception types are golden."""
    params, g = _tree(66), _tree(67)
    tx = optax.chain(optax.clip(0.5), optax.sgd(LR))
    shorter = optax.chain(optax.clip(0.5)).init(params)
    longer = optax.chain(optax.clip(0.5), optax.sgd(LR), optax.add_decayed_weights(WD)).init(params)
    check.error_contract("chain/shorter_state", tx.update, g, shorter, params)
    check.error_contract("chain/longer_state", tx.update, g, longer, params)


# -- set_to_zero, freeze, selective_transform ------------------------------------------------------------------
FREEZE = {"bias": True, "kernel": False, "scale": True}
_FREEZERS = {
    "freeze": lambda mask: optax.chain(optax.freeze(mask), optax.sgd(LR, momentum=MOMENTUM)),
    "selective_transform": lambda mask: optax.selective_transform(optax.sgd(LR, momentum=MOMENTUM),
                                                                   freeze_mask=mask),
}


@pytest.mark.parametrize("mask", ["tree", "all"])
@pytest.mark.parametrize("name", sorted(_FREEZERS))
def test_freeze(check, name, mask):
    """freeze(mask) (chained before sgd with momentum) and selective_transform(sgd, freeze_mask=mask), two
    calls: frozen leaves are exactly zero, the others follow sgd with momentum; mask=True freezes all."""
    freeze_mask = FREEZE if mask == "tree" else True
    params, seq = _tree(70), [_tree(71 + i) for i in range(2)]
    out = _runs(f"{name}/{mask}", lambda: _FREEZERS[name](freeze_mask))(params, [(g, {}) for g in seq])
    ref = _momentum_ref(seq)
    for i, (u, _state) in enumerate(out):
        for k in sorted(LAYOUT):
            if freeze_mask is True or FREEZE[k]:
                check.exact(f"call {i + 1} frozen {k} is zero", u[k], np.zeros(LAYOUT[k]))
            else:
                check.reference(f"call {i + 1} trained {k}", u[k], ref[i][k], scale=_scale(seq, i, k), why=_WHY)
    check.golden_tree(f"freeze/{name}/{mask}/updates", [u for u, _ in out])


def test_selective_transform_keyword_only_mask(check):
    """selective_transform's freeze_mask is keyword-only: given positionally it raises (the type is golden);
    optimizer is positional-or-keyword: by name it builds the transform, which freezes every leaf of a mask
    of True (zero updates)."""
    check.error_contract("selective_transform/positional_mask", optax.selective_transform, optax.sgd(0.1), True)
    tx = optax.selective_transform(optimizer=optax.sgd(0.1), freeze_mask=True)
    params = _tree(68)
    updates, _ = tx.update(_tree(69), tx.init(params), params)
    for k in sorted(LAYOUT):
        check.exact(f"by keyword, all frozen: {k}", updates[k], np.zeros(LAYOUT[k]))


def test_set_to_zero(check):
    """set_to_zero: exact zeros of each leaf's shape and dtype (float32, bfloat16), for any gradient."""
    g = {**_tree(80), "half": np.array([1.5, -2.0], ml_dtypes.bfloat16)}
    tx = optax.set_to_zero()
    out = jax.device_get(jax.jit(lambda g: tx.update(g, tx.init(g))[0])(g))
    for k, leaf in out.items():
        check.exact(f"{k} is zero", leaf, np.zeros(np.shape(leaf)))
    check.golden_fact("set_to_zero/layout", [[k, str(v.dtype), list(np.shape(v))] for k, v in sorted(out.items())])


# -- conditionally_mask / conditionally_transform ------------------------------------------------------------
_CONDITIONAL = {"conditionally_mask": optax.conditionally_mask,
                "conditionally_transform": optax.conditionally_transform}


def _rejected(name, g):
    return {k: np.zeros(np.shape(v)) for k, v in g.items()} if name == "conditionally_mask" else g


@pytest.mark.parametrize("name", sorted(_CONDITIONAL))
def test_conditional_on_step(check, name):
    """should_transform_fn = step >= 2: calls 1 and 2 (steps 0, 1) are rejected (zeros for conditionally_mask,
    the raw gradient for conditionally_transform, the inner state unchanged), call 3 (step 2, the first
    accepted) and 4 run sgd with momentum from a fresh trace; the step counter counts every call."""
    params, seq = _tree(90), [_tree(91 + i) for i in range(4)]
    out = _runs(f"{name}/step", lambda: _CONDITIONAL[name](optax.sgd(LR, momentum=MOMENTUM),
                                                           lambda step: step >= 2))(params, [(g, {}) for g in seq])
    ref = _momentum_ref(seq[2:])
    for i, (u, state) in enumerate(out):
        check.exact(f"step after call {i + 1}", int(state.step), i + 1)
        expected = _rejected(name, seq[i]) if i < 2 else ref[i - 2]
        for k in sorted(LAYOUT):
            if i < 2:
                check.exact(f"call {i + 1} rejected {k}", u[k], _f64(expected[k]))
            else:
                check.reference(f"call {i + 1} accepted {k}", u[k], expected[k], scale=_scale(seq[2:], i - 2, k),
                                why=_WHY)
    check.golden_tree(f"conditional/{name}/step/updates", [u for u, _ in out])
    check.golden_exact(f"conditional/{name}/step/steps", np.array([int(s.step) for _, s in out]))


@pytest.mark.parametrize("name", sorted(_CONDITIONAL))
def test_conditional_on_extra_args(check, name):
    """forward_extra_args=True: should_transform_fn sees the extra arguments (loss < 1.0); losses just under,
    at and over 1.0 are accepted, rejected, rejected; the inner sgd still receives them harmlessly."""
    params, seq = _tree(95), [_tree(96 + i) for i in range(3)]
    losses = [_below_one(), 1.0, float(np.nextafter(F32(1.0), F32(2.0)))]
    make = lambda: _CONDITIONAL[name](optax.sgd(LR), lambda step, loss: loss < 1.0, forward_extra_args=True)
    out = _runs(f"{name}/extra", make)(params, [(g, {"loss": F32(v)}) for g, v in zip(seq, losses)])
    for i, (u, _state) in enumerate(out):
        for k in sorted(LAYOUT):
            if i == 0:
                check.reference(f"loss under 1: accepted {k}", u[k], -LR * _f64(seq[i][k]))
            else:
                check.exact(f"loss {'at' if i == 1 else 'over'} 1: rejected {k}", u[k], _f64(_rejected(name, seq[i])[k]))
    check.golden_tree(f"conditional/{name}/extra/updates", [u for u, _ in out])


def _below_one():
    return float(np.nextafter(F32(1.0), F32(0.0)))


def test_zero_gradients_through_routing(check):
    """Zero gradients through every router above (the compiled runs are shared): partition gives the decayed
    bias wd * param and zeros elsewhere; freeze, selective_transform and both conditionals give zeros."""
    params, zeros = _tree(50), [({k: np.zeros(s, F32) for k, s in LAYOUT.items()}, {})] * 2
    out = _partition("partition", LABELS)(params, zeros)
    check.reference("partition: decayed bias = wd * param", out[-1][0]["bias"], WD * _f64(params["bias"]))
    for k in ("kernel", "scale"):
        check.exact(f"partition {k} is zero", out[-1][0][k], np.zeros(LAYOUT[k]))
    runs = {"freeze": _runs("freeze/tree", lambda: _FREEZERS["freeze"](FREEZE)),
            "selective_transform": _runs("selective_transform/tree", lambda: _FREEZERS["selective_transform"](FREEZE)),
            **{name: _runs(f"{name}/step", lambda f=f: f(optax.sgd(LR, momentum=MOMENTUM), lambda step: step >= 2))
               for name, f in _CONDITIONAL.items()}}
    for name, run in sorted(runs.items()):
        for k, leaf in run(params, zeros)[-1][0].items():
            check.exact(f"{name} {k} is zero", leaf, np.zeros(LAYOUT[k]))


@pytest.mark.parametrize("name", sorted(_CONDITIONAL))
def test_conditional_bad_condition(check, name):
    """A should_transform_fn that returns a mask (one flag per element) instead of one flag: the outcome (an
    error, traced as under jit) is golden."""
    tx = _CONDITIONAL[name](optax.sgd(LR), lambda step: jnp.array([True, False]) & (step >= 0))
    params = _tree(97)
    check.error_contract(f"conditional/{name}/mask_condition", jax.eval_shape,
                         lambda p: tx.update(p, tx.init(p), p)[0], params)


# -- zero_nans, keep_params_nonnegative ------------------------------------------------------------------------
def test_zero_nans(check):
    """NaN elements become 0, inf and finite elements are kept bit for bit; found_nan says per leaf whether
    it had a NaN; zero gradients pass through with found_nan all false, as init's found_nan is."""
    g = _tree(100)
    g["kernel"][0, 2], g["kernel"][1, 0], g["bias"][1] = np.nan, np.inf, -np.inf
    g["scale"] = F32(np.nan)
    tx = optax.zero_nans()
    run = jax.jit(lambda g: tx.update(g, tx.init(g)))
    (out, state), (zero_out, zero_state) = jax.device_get((run(g), run(jax.tree.map(np.zeros_like, g))))
    for k in sorted(g):
        check.identical(f"{k}: NaN -> 0, the rest kept", out[k], np.where(np.isnan(g[k]), F32(0.0), g[k]))
        check.identical(f"{k}: zeros pass through", zero_out[k], np.zeros_like(g[k]))
    check.exact("found_nan per leaf", {k: bool(v) for k, v in state.found_nan.items()},
                {"bias": False, "kernel": True, "scale": True})
    check.exact("found_nan for zeros", {k: bool(v) for k, v in zero_state.found_nan.items()},
                {k: False for k in LAYOUT})
    check.golden_fact("zero_nans/found_nan", {k: bool(v) for k, v in sorted(state.found_nan.items())})
    check.exact("found_nan of init, before any update", {k: bool(v) for k, v in tx.init(g).found_nan.items()},
                {k: False for k in LAYOUT})


def test_keep_params_nonnegative(check):
    """An update u with param p: p + u < 0 gives -p, otherwise u, exactly. p = 1 with u just over, at and
    just under -1 (p + u = 0 is not negative), a random tree, and zero updates (+0.0 kept, also at p = 0)."""
    params = {"bias": np.array([1.0, 1.0, 1.0], F32), "kernel": np.abs(_tree(110)["kernel"]), "scale": F32(0.0)}
    edge = np.array([-float(np.nextafter(F32(1.0), F32(0.0))), -1.0, -float(np.nextafter(F32(1.0), F32(2.0)))], F32)
    updates = {"bias": edge, "kernel": _tree(111)["kernel"], "scale": F32(-0.5)}
    tx = optax.keep_params_nonnegative()
    run = jax.jit(lambda u, p: tx.update(u, tx.init(p), p)[0])
    out, zero = jax.device_get((run(updates, params), run(jax.tree.map(np.zeros_like, updates), params)))
    for k in sorted(LAYOUT):
        p, u = _f64(params[k]), _f64(updates[k])
        check.exact(f"{k}: -p where p + u < 0, else u", out[k], np.where(p + u < 0, -p, u))
        # bit for bit: at p = 0 (scale), p + u = 0 keeps u = +0.0, where -p would be -0.0
        check.identical(f"{k}: zero updates kept", zero[k], np.zeros(np.shape(p), F32))
    check.exact("bias at the edge: u kept over and at -1, -p under", out["bias"], [edge[0], -1.0, -1.0])
    check.golden_tree("nonnegative/updates", out)


# -- flatten ----------------------------------------------------------------------------------------------------
def test_flatten(check):
    """flatten(clip_by_block_rms(0.5)): one block, the concatenated vector, so every leaf is divided by the
    rms of all elements (per leaf it would differ); flatten(sgd with momentum) over two calls equals sgd
    itself leaf by leaf."""
    params, seq = _tree(120), [_tree(121 + i, 2.0) for i in range(2)]
    out = _runs("flatten/block_rms", lambda: optax.flatten(optax.clip_by_block_rms(0.5)))(params, [(seq[0], {})])
    flat = np.concatenate([np.ravel(_f64(seq[0][k])) for k in sorted(LAYOUT)])
    factor = max(1.0, np.sqrt(np.mean(flat ** 2)) / 0.5)
    for k in sorted(LAYOUT):
        check.reference(f"{k}: divided by the whole vector's rms", out[0][0][k], _f64(seq[0][k]) / factor)
    check.golden_tree("flatten/block_rms", out[0][0])
    flat_sgd = _runs("flatten/sgd", lambda: optax.flatten(optax.sgd(LR, momentum=MOMENTUM)))(params,
                                                                                       [(g, {}) for g in seq])
    plain = _runs("sgd", lambda: optax.sgd(LR, momentum=MOMENTUM))(params, [(g, {}) for g in seq])
    for i in range(2):
        for k in sorted(LAYOUT):
            check.agree(f"call {i + 1} {k}: flattened sgd vs sgd", flat_sgd[i][0][k], plain[i][0][k])
    check.golden_tree("flatten/sgd", [u for u, _ in flat_sgd])
    check.golden_fact("flatten/sgd/state", [list(np.shape(x)) for x in jax.tree.leaves(flat_sgd[-1][1])])


# -- add_decayed_weights with a schedule, incremental_update, apply_updates -------------------------------------
def test_add_decayed_weights_schedule(check):
    """weight_decay as a schedule (0.1 * (count + 1)) with a mask (the bias undecayed), three calls: the
    schedule's count and the decay used at each call are golden (the docstring has the schedule evaluated
    at the step count; this release never advances it, so every call uses schedule(0)); the first call is
    grad + 0.1 * param on decayed leaves against float64, the bias is the grad bit for bit throughout."""
    params, seq = _tree(130), [_tree(131 + i) for i in range(3)]
    mask = {"bias": False, "kernel": True, "scale": True}
    make = lambda: optax.add_decayed_weights(lambda count: 0.1 * (count + 1), mask=mask)
    out = _runs("decay_schedule", make)(params, [(g, {}) for g in seq])
    for i, (u, state) in enumerate(out):
        check.identical(f"call {i + 1} bias undecayed", u["bias"], seq[i]["bias"])
        # The decay used, recovered as (u - g) . p / |p|^2: a cancellation, so kept as a fact to 3 decimals.
        used = [round(float(np.sum((_f64(u[k]) - _f64(seq[i][k])) * _f64(params[k])) /
                            np.sum(_f64(params[k]) ** 2)), 3) for k in ("kernel", "scale")]
        check.golden_fact(f"decay_schedule/call{i + 1}/decay_used", used)
    for k in ("kernel", "scale"):
        g, p = _f64(seq[0][k]), _f64(params[k])
        check.reference(f"call 1 {k}: grad + 0.1 param", out[0][0][k], g + 0.1 * p,
                        scale=np.abs(g) + 0.1 * np.abs(p), why="grad + wd * param may cancel")
    check.golden_exact("decay_schedule/counts", np.array([int(jax.tree.leaves(s)[0]) for _, s in out]))
    check.golden_tree("decay_schedule/updates", [u for u, _ in out])


@jax.jit
def _incremental(new, old, step_size):
    return optax.incremental_update(new, old, step_size)


def test_incremental_update(check):
    """step_size * new + (1 - step_size) * old: 0.25 against float64; step 0 keeps old and step 1 takes new,
    bit for bit (the boundaries of the documented range)."""
    new, old = _tree(140), _tree(141)
    for step in (0.0, 0.25, 1.0):
        out = jax.device_get(_incremental(new, old, step))
        for k in sorted(LAYOUT):
            n, o = _f64(new[k]), _f64(old[k])
            if step in (0.0, 1.0):
                check.identical(f"step_size={step:g} {k}", out[k], (old if step == 0.0 else new)[k])
            else:
                check.reference(f"step_size=0.25 {k}", out[k], step * n + (1 - step) * o,
                                scale=step * np.abs(n) + (1 - step) * np.abs(o), why="a convex combination of "
                                "values of either sign may cancel")
        check.golden_tree(f"incremental/step={step:g}", out)


def test_apply_updates_dtypes(check):
    """apply_updates keeps each param's dtype: float32 updates on bfloat16 params give bfloat16 params,
    bfloat16(p + u); a None update leaves its param; the values and dtypes are golden."""
    params = {"half": np.array([1.0, -2.5, 0.3], ml_dtypes.bfloat16), "full": np.array([0.5, 2.0], F32)}
    updates = {"half": np.array([0.01, 0.2, -0.7], F32), "full": np.array([-0.25, 1e-3], F32)}
    out = jax.device_get(jax.jit(optax.apply_updates)(params, updates))
    check.golden_fact("apply_updates/dtypes", {k: str(v.dtype) for k, v in sorted(out.items())})
    for k in sorted(params):
        p, u = _f64(params[k]), _f64(updates[k])
        check.reference(f"{k}: p + u in the param dtype", out[k], np.asarray(p + u, params[k].dtype).astype(np.float64),
                        scale=np.abs(p) + np.abs(u), why="p + u may cancel")
        check.golden(f"apply_updates/{k}", out[k])


# -- malformed masks and labels ------------------------------------------------------------------------------------
BAD = {
    "missing_key": {"kernel": True, "scale": False},
    "extra_key": {"bias": True, "kernel": False, "scale": False, "other": True},
    "prefix_root": True,
    "int01": {"bias": 1, "kernel": 0, "scale": 1},
    "float_fraction": {"bias": 0.5, "kernel": 0.0, "scale": 0.0},
    "none_leaf": {"bias": True, "kernel": None, "scale": False},
    "list_container": [True, False, True],
}
BAD_LABELS = {
    "unknown_label": {"bias": "decay", "kernel": "momentum", "scale": "nowhere"},
    "missing_key": {"kernel": "momentum", "scale": "zero"},
    "extra_key": {**LABELS, "other": "zero"},
    "none_leaf": {"bias": "decay", "kernel": None, "scale": "zero"},
    "int_labels": {"bias": 0, "kernel": 1, "scale": 0},
}
_BAD_CONSUMERS = {
    "freeze": lambda m: optax.freeze(m),
    "selective_transform": lambda m: optax.selective_transform(optax.sgd(LR), freeze_mask=m),
}
BAD_CASES = {**{c: sorted(BAD) for c in _BAD_CONSUMERS}, "partition": sorted(BAD_LABELS)}


def _bad_run(consumer, case):
    if consumer == "partition":
        make = lambda: optax.partition({k: f() for k, f in PARTS.items()}, BAD_LABELS[case])
    else:
        make = lambda: _BAD_CONSUMERS[consumer](BAD[case])

    def run(params, g):
        tx = make()
        state = tx.init(params)
        u, state = tx.update(g, state, params)
        return tx.update(g, state, params)[0]
    return run


@pytest.mark.parametrize("consumer", sorted(BAD_CASES))
def test_bad_freeze_mask_or_labels(check, consumer):
    """Malformed freeze masks or partition labels (missing or extra keys, a prefix, 0/1 or fractional
    leaves, None, a list): the exception type (or no error), traced as under jit, is golden; without an
    error the updates of two jitted calls are golden too."""
    params, g = _tree(150), _tree(151)
    for case in BAD_CASES[consumer]:
        key = f"bad_mask/{consumer}/{case}"
        run = _bad_run(consumer, case)
        result = check.error_contract(key, jax.eval_shape, run, params, g)
        if not isinstance(result, Exception):
            check.golden_tree(f"{key}/updates", jax.device_get(jax.jit(run)(params, g)))
