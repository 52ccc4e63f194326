"""Mask and weight-decay contracts: optax.add_decayed_weights, optax.masked, optax.adamw(mask=...),
optax.periodic_update, and what malformed masks do.

References are NumPy float64 formulas: decayed update = grad + wd * param on masked leaves and the
grad, bit for bit, elsewhere; AdamW from its documented update rule. Malformed masks (a missing or
extra key, 0/1 or float leaves, wrong nesting, a prefix of the params tree, ...) have no documented
outcome: the exception type is recorded, and when there is none the produced updates are recorded
too, so a version that starts or stops raising, or silently decays other leaves, is reported.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.contract import strategies, trees

pytestmark = pytest.mark.family("masks")

LR = 0.1
WD = 0.25
B1, B2, EPS = 0.9, 0.999, 1e-8

# Two layers; kernels are rank 2, biases rank 1. The mask decays kernels only. Few distinct shapes:
# eager calls compile each primitive once per shape.
LAYOUT = {"dense": {"kernel": (3, 4), "bias": (4,)}, "head": {"kernel": (4, 4), "bias": (4,)}}
KERNEL_MASK = {"dense": {"kernel": True, "bias": False}, "head": {"kernel": True, "bias": False}}


def _kernels_only(tree):
    return jax.tree.map(lambda x: x.ndim > 1, tree)


MASKS = {"dict": KERNEL_MASK, "callable": _kernels_only}


def _tree(seed, dtype="float32"):
    rng = np.random.default_rng(seed)
    return strategies.build(LAYOUT, lambda s: jnp.asarray(rng.standard_normal(s).astype(np.float32), dtype))


def _f64(x):
    return np.asarray(x, np.float64)


def _is_kernel(path: str) -> bool:
    return path.endswith("kernel")


# -- add_decayed_weights, masked, adamw with well-formed masks -------------------------------------
@pytest.mark.parametrize("mask_kind", sorted(MASKS))
def test_decay_reaches_kernels_not_biases(check, mask_kind):
    """add_decayed_weights(wd, mask): kernels get grad + wd * param, biases keep the grad bit for bit."""
    params, grads = _tree(1), _tree(2)
    tx = optax.add_decayed_weights(WD, mask=MASKS[mask_kind])
    state = tx.init(params)
    updates, state = tx.update(grads, state, params)
    p, g, u = trees.leaves(params), trees.leaves(grads), trees.leaves(updates)
    check.exact("update tree paths", sorted(u), sorted(g))
    for path in u:
        if _is_kernel(path):
            check.reference(f"decayed {path}", u[path], _f64(g[path]) + WD * _f64(p[path]),
                            scale=np.abs(_f64(g[path])) + WD * np.abs(_f64(p[path])),
                            why="grad + wd * param: terms of either sign may cancel")
        else:
            check.identical(f"undecayed {path} is the grad", u[path], g[path])
    check.golden_tree(f"decay/{mask_kind}/updates", updates)
    check.golden_fact(f"decay/{mask_kind}/state", [type(state).__name__, type(state.inner_state).__name__,
                                                   trees.layout(state)])



def test_decay_defaults(check):
    """add_decayed_weights() as called with its defaults (weight_decay 0.0, no mask): grad + 0 * param, so
    every leaf is the grad, value for value, and the state is empty (no mask wrapper, no schedule count);
    then weight_decay=WD without a mask decays every leaf, biases included."""
    params, grads = _tree(1), _tree(2)
    for name, tx, wd in (("defaults", optax.add_decayed_weights(), 0.0), ("no_mask", optax.add_decayed_weights(WD), WD)):
        state = tx.init(params)
        updates, _ = tx.update(grads, state, params)
        p, g, u = trees.leaves(params), trees.leaves(grads), trees.leaves(updates)
        check.exact(f"{name}: update tree paths", sorted(u), sorted(g))
        for path in u:
            check.reference(f"{name}: {path} = grad + {wd:g} * param", u[path], _f64(g[path]) + wd * _f64(p[path]),
                            scale=np.abs(_f64(g[path])) + wd * np.abs(_f64(p[path])),
                            why="grad + wd * param: terms of either sign may cancel")
        check.exact(f"{name}: state", [type(state).__name__, trees.layout(state)], ["EmptyState", trees.layout(())])

@pytest.mark.parametrize("mask_kind", sorted(MASKS))
def test_masked_keeps_inner_state_for_masked_leaves_only(check, mask_kind):
    """optax.masked(sgd with momentum): masked leaves follow the inner optimizer over two steps,
    the others pass through unchanged, and the inner state holds the masked leaves only."""
    momentum = 0.9
    params, g1, g2 = _tree(3), _tree(4), _tree(5)
    tx = optax.masked(optax.sgd(LR, momentum=momentum), MASKS[mask_kind])
    state = tx.init(params)
    u1, state = tx.update(g1, state, params)
    u2, state = tx.update(g2, state, params)
    f1, f2 = trees.leaves(g1), trees.leaves(g2)
    for step, u, g in [(1, u1, f1), (2, u2, f2)]:
        for path, leaf in trees.leaves(u).items():
            if _is_kernel(path):
                a, b = _f64(g[path]), (momentum * _f64(f1[path]) if step == 2 else 0.0)
                check.reference(f"step {step} masked {path}: -lr * (g + momentum * trace)", leaf, -LR * (a + b),
                                scale=LR * (np.abs(a) + np.abs(b)), why="g + momentum * trace may cancel")
            else:
                check.identical(f"step {step} unmasked {path} passes through", leaf, g[path])
    state_paths = [path for path, _dtype, _shape in trees.layout(state)]
    check.exact("inner state leaves are the kernels", [p.rsplit("/", 2)[-2:] for p in state_paths],
                [["dense", "kernel"], ["head", "kernel"]])
    check.golden_fact(f"masked/{mask_kind}/state", trees.layout(state))
    check.golden_tree(f"masked/{mask_kind}/u2", u2)


ADAMW_WHY = ("adamw's update m^/(sqrt(v^)+eps) + wd*theta sums terms of either sign, and the bias corrections "
             "1/(1-b^t) amplify the moments' rounding: ulps at the magnitude _adamw_reference returns")


def _adamw_reference(params, grads_seq, masked, lr, wd):
    """AdamW in float64 from optax's documented rule, one {path: update} per step.

    m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;  m^ = m / (1-b1^t);  v^ = v / (1-b2^t);
    u = -lr (m^ / (sqrt(v^) + eps) + wd * theta [masked leaves only]);  theta <- theta + u.
    Also returns, per step, the magnitude the update's rounding is relative to (for `scale=`).
    The hyperparameters are the float32 values the library actually holds (0.999 is not a float32:
    1 - b2**t amplifies that representation error to ~1e-5, which is not arithmetic rounding).
    """
    b1, b2, eps = (float(np.float32(x)) for x in (B1, B2, EPS))
    lr, wd = float(np.float32(lr)), float(np.float32(wd))
    theta = {k: _f64(v) for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in theta.items()}
    m_abs = {k: np.zeros_like(v) for k, v in theta.items()}
    v = {k: np.zeros_like(x) for k, x in theta.items()}
    steps = []
    for t, grads in enumerate(grads_seq, 1):
        out, scales = {}, {}
        for k in theta:
            g = _f64(grads[k])
            m[k] = b1 * m[k] + (1 - b1) * g
            m_abs[k] = b1 * m_abs[k] + (1 - b1) * np.abs(g)
            v[k] = b2 * v[k] + (1 - b2) * g * g
            denom = np.sqrt(v[k] / (1 - b2**t)) + eps
            decay = wd * theta[k] if masked[k] else 0.0
            out[k] = -lr * (m[k] / (1 - b1**t) / denom + decay)
            # optax forms 1 - b2**t in float32: its rounding (relative to b2**t ~ 1, not to the
            # small difference) reaches the update halved by the sqrt, i.e. times this condition number.
            condition = 1.0 + 0.5 * b2**t / (1 - b2**t) + b1**t / (1 - b1**t)
            scales[k] = lr * (m_abs[k] / (1 - b1**t) / denom * condition + np.abs(decay))
            theta[k] = theta[k] + out[k]
        steps.append((out, scales))
    return steps


@pytest.mark.parametrize("mask_kind", sorted(MASKS))
def test_adamw_mask_reference(check, mask_kind):
    """adamw(mask=...): three steps against an independent float64 AdamW, decay on kernels only."""
    params = _tree(6)
    grads_seq = [_tree(7 + i) for i in range(3)]
    tx = optax.adamw(LR, b1=B1, b2=B2, eps=EPS, weight_decay=WD, mask=MASKS[mask_kind])
    state = tx.init(params)
    p = params
    observed = []
    for g in grads_seq:
        u, state = tx.update(g, state, p)
        p = optax.apply_updates(p, u)
        observed.append(u)
    flat_params = trees.leaves(params)
    expected = _adamw_reference(flat_params, [trees.leaves(g) for g in grads_seq],
                                {k: _is_kernel(k) for k in flat_params}, LR, WD)
    for step, (u, (ref, scales)) in enumerate(zip(observed, expected), 1):
        for path, leaf in trees.leaves(u).items():
            check.reference(f"step {step} {path}", leaf, ref[path], scale=scales[path], why=ADAMW_WHY)
        check.golden_tree(f"adamw/{mask_kind}/step{step}", u)
    check.golden_fact(f"adamw/{mask_kind}/state", trees.layout(state))


def test_adamw_mask_only_affects_decay(check):
    """Unmasked leaves of adamw(mask=...) get adam's update: the mask gates the decay only. Two library
    paths computing adam's formula: held to each other within the equivalence ulps."""
    params = _tree(10)
    grads_seq = [_tree(11 + i) for i in range(2)]
    with_decay = optax.adamw(LR, weight_decay=WD, mask=KERNEL_MASK)
    plain = optax.adam(LR)
    sw, sp = with_decay.init(params), plain.init(params)
    for step, g in enumerate(grads_seq, 1):
        uw, sw = with_decay.update(g, sw, params)
        up, sp = plain.update(g, sp, params)
        for path, leaf in trees.leaves(uw).items():
            if not _is_kernel(path):
                check.agree(f"step {step} unmasked {path} equals adam", leaf, trees.leaves(up)[path])
        check.golden_tree(f"adamw_vs_adam/step{step}", uw)


# -- periodic_update -------------------------------------------------------------------------------
_periodic_jit = jax.jit(optax.periodic_update)  # one program: steps and update_period are traced


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_periodic_update_copies_on_multiples(check, mode):
    """periodic_update(online, target, step, period=3): target becomes online at steps 0, 3, 6, else unchanged."""
    period = 3
    fn = _periodic_jit if mode == "jit" else optax.periodic_update
    target = _tree(12)
    online = _tree(13)
    history = []
    for step in range(8):
        online = jax.tree.map(lambda x: x + 1.0, online)
        steps = jnp.asarray(step, jnp.int32) if mode == "jit" else step
        new_target = fn(online, target, steps, jnp.asarray(period) if mode == "jit" else period)
        expected = online if step % period == 0 else target
        for path, leaf in trees.leaves(new_target).items():
            check.identical(f"{'copied' if step % period == 0 else 'kept'} at step {step}: {path}",
                        leaf, trees.leaves(expected)[path])
        target = new_target
        history.append(np.asarray(trees.leaves(target)["dense/bias"]))
    check.golden(f"periodic/{mode}/dense_bias_history", np.stack(history))  # x + 1.0: a formula's values


def test_periodic_update_negative_period(check):
    """A negative update_period: the target becomes online where jnp.mod(step, period) == 0, NumPy's mod
    (the divisor's sign) as the reference: steps 0 and 2 of 0..3 for period -2, kept at 1 and 3."""
    online, target = _tree(13), _tree(12)
    for step in range(4):
        new = _periodic_jit(online, target, jnp.asarray(step, jnp.int32), jnp.asarray(-2))
        copied = np.mod(step, -2) == 0
        for path, leaf in trees.leaves(new).items():
            check.identical(f"{'copied' if copied else 'kept'} at step {step}: {path}", leaf,
                            trees.leaves(online if copied else target)[path])


# -- malformed masks -------------------------------------------------------------------------------
BAD_MASKS = {
    # Structure mismatches
    "missing_key": {"dense": {"kernel": True}, "head": {"kernel": True, "bias": False}},
    "extra_key": {"dense": {"kernel": True, "bias": False, "scale": False}, "head": {"kernel": True, "bias": False}},
    "swapped_nesting": {"kernel": {"dense": True, "head": True}, "bias": {"dense": False, "head": False}},
    "deeper_nesting": {"dense": {"kernel": {"w": True}, "bias": False}, "head": {"kernel": True, "bias": False}},
    "flat_keys": {"dense/kernel": True, "dense/bias": False, "head/kernel": True, "head/bias": False},
    "none_leaf": {"dense": {"kernel": True, "bias": None}, "head": {"kernel": True, "bias": False}},
    "list_container": [True, False],
    # Prefixes of the params tree (documented as allowed; the result is recorded)
    "prefix": {"dense": True, "head": False},
    "prefix_root": True,
    "callable_prefix": lambda tree: {"dense": True, "head": False},
    # Non-boolean leaves
    "int01": {"dense": {"kernel": 1, "bias": 0}, "head": {"kernel": 1, "bias": 0}},
    "float01": {"dense": {"kernel": 1.0, "bias": 0.0}, "head": {"kernel": 1.0, "bias": 0.0}},
    "float_fraction": {"dense": {"kernel": 0.5, "bias": 0.0}, "head": {"kernel": 0.5, "bias": 0.0}},
    "string_leaves": {"dense": {"kernel": "yes", "bias": ""}, "head": {"kernel": "yes", "bias": ""}},
    "jnp_bool_scalars": jax.tree.map(jnp.asarray, KERNEL_MASK),
    "elementwise_arrays": "elementwise",  # built from the params: one bool per element
    # A callable that looks at values: concrete when eager, traced under jit
    "callable_value_dependent": lambda tree: jax.tree.map(lambda x: jnp.sum(x) > 0, tree),
}


def _consumer(name, mask):
    if name == "add_decayed_weights":
        return optax.add_decayed_weights(WD, mask=mask), 1
    return optax.masked(optax.sgd(LR, momentum=0.9), mask), 2  # masked_momentum: a stateful inner


def _bad_mask_run(consumer, mask):
    tx, n_steps = _consumer(consumer, mask)

    def run(params, grads):
        state = tx.init(params)
        for _ in range(n_steps):
            updates, state = tx.update(grads, state, params)
        return updates

    return run


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("consumer", ["add_decayed_weights", "masked_momentum"])
@pytest.mark.parametrize("case", sorted(BAD_MASKS))
def test_bad_mask(check, case, consumer, mode):
    """A malformed mask: the exception type (or no error) is the contract; without an error the
    produced updates are recorded as well, so a silent change of which leaves are decayed shows."""
    params, grads = _tree(14), _tree(15)
    mask = BAD_MASKS[case]
    if isinstance(mask, str):  # "elementwise": built from these params
        mask = jax.tree.map(lambda x: x > 0, params)
    run = _bad_mask_run(consumer, mask)
    if mode == "jit":
        run = jax.jit(run)
    key = f"bad_mask/{consumer}/{case}/{mode}"
    result = check.error_contract(key, run, params, grads)
    if not isinstance(result, Exception):
        check.golden_tree(f"{key}/result", result)


# -- properties ------------------------------------------------------------------------------------
def _alternating_mask(layout):
    """Leaves 0, 2, 4... (in the template's order) masked, the others not: a fixed mask per layout."""
    shapes = strategies.leaf_shapes(layout)
    flags = iter([i % 2 == 0 for i in range(len(shapes))])
    return strategies.build(layout, lambda _shape: next(flags))


_JITTED = {}


def _jitted(kind, template, dtype):
    """One jitted function per (kind, layout, dtype): examples reuse the compiled code."""
    key = (kind, template, dtype)
    if key not in _JITTED:
        mask = _alternating_mask(strategies.TEMPLATES[template])
        if kind == "decay":
            def fn(params, grads, wd):
                tx = optax.add_decayed_weights(wd, mask=mask)
                return tx.update(grads, tx.init(params), params)[0]
        elif kind == "adamw":
            def fn(params, grads_seq, wd):
                tx = optax.adamw(LR, b1=B1, b2=B2, eps=EPS, weight_decay=wd, mask=mask)
                state = tx.init(params)
                out = []
                for g in grads_seq:
                    u, state = tx.update(g, state, params)
                    params = optax.apply_updates(params, u)
                    out.append(u)
                return out
        else:
            fn = optax.periodic_update
        _JITTED[key] = jax.jit(fn)
    return _JITTED[key]


def _leaf(x, dtype):
    """The drawn values rounded to the leaf dtype in NumPy. Leaves stay NumPy arrays: the jitted
    function takes them as they are, with no eager conversion or transfer op per leaf and example."""
    return np.asarray(x).astype(jnp.dtype(dtype))


def _draw_tree(data, layout, dtype, max_magnitude=None):
    tree = data.draw(strategies.pytree(layout, dtype, max_magnitude))
    return jax.tree.map(lambda x: _leaf(x, dtype), tree)


def _mixed_dtypes(layout, pattern):
    """A fixed dtype per leaf (pattern(i) for the i-th leaf): a mixed-precision tree compiles once."""
    return [pattern(i) for i in range(len(strategies.leaf_shapes(layout)))]


def _draw_mixed(data, layout, dtypes, max_magnitude=None):
    leaves = iter([_leaf(data.draw(strategies.array(shape, dtype, max_magnitude)), dtype)
                   for shape, dtype in zip(strategies.leaf_shapes(layout), dtypes)])
    return strategies.build(layout, lambda _shape: next(leaves))


@given(template=strategies.template_names(), dtype=st.sampled_from(["float32", "bfloat16", "float16"]),
       wd=st.one_of(st.just(0.0), st.floats(1e-4, 2.0)), data=st.data())
def test_property_masked_decay(check, template, dtype, wd, data):
    """Any layout and dtype: masked leaves get grad + wd * param; unmasked leaves are the grad, bit for bit."""
    layout = strategies.TEMPLATES[template]
    params, grads = _draw_tree(data, layout, dtype), _draw_tree(data, layout, dtype)
    # wd is a Python float: weakly typed inside jit, so it does not promote bfloat16/float16 leaves.
    updates = _jitted("decay", template, dtype)(params, grads, wd)
    flags = jax.tree.leaves(_alternating_mask(layout))
    for flag, p, g, u in zip(flags, jax.tree.leaves(params), jax.tree.leaves(grads), jax.tree.leaves(updates)):
        check.exact("update dtype is the leaf dtype", str(u.dtype), dtype)
        if flag:
            p64, g64 = _f64(p), _f64(g)
            # The formula as the library evaluates it in the leaf dtype: wd is a weakly typed Python
            # float, so JAX converts it to the leaf dtype before multiplying, and the update is stored
            # in the leaf dtype. Below float16's smallest normal (2**-14) the stored value's spacing is
            # the absolute 2**-24 of the subnormals (XLA on CPU computes float16 in float32 and keeps
            # subnormal float16 results), which no relative tolerance covers: wd=1e-4, param=-0.03125,
            # grad=0 gives -52 * 2**-24 = -3.0994e-06, correctly rounded, 0.43 of that spacing from the
            # unrounded -3.125e-06, where the 8 u bound is 0.41 of it.
            wd_held = float(_leaf(wd, dtype))
            expected = _f64(_leaf(g64 + wd_held * p64, dtype))
            check.reference("masked leaf: grad + wd * param", u, expected, scale=np.abs(g64) + wd * np.abs(p64),
                            why="grad + wd * param: terms of either sign may cancel")
        else:
            check.identical("unmasked leaf is the grad, bit for bit", u, g)


def _adamw_dtype(i):
    # f32, f32, bf16, bf16: with the alternating mask, a 4-leaf layout has every (masked, dtype) pair
    return ("float32", "bfloat16")[(i // 2) % 2]


@given(template=strategies.template_names(), wd=st.one_of(st.just(0.0), st.floats(1e-4, 1.0)), data=st.data())
def test_property_adamw_reference(check, template, wd, data):
    """Any layout, float32 and bfloat16 leaves in one tree: two adamw(mask=...) steps agree with the
    float64 AdamW formula, decay on masked leaves only.

    float16 is left out: adam squares the gradient, which over- or underflows float16 for
    ordinary gradient magnitudes, so the float64 formula is not what float16 computes.
    """
    layout = strategies.TEMPLATES[template]
    dtypes = _mixed_dtypes(layout, _adamw_dtype)
    params = _draw_mixed(data, layout, dtypes, max_magnitude=10.0)
    grads_seq = [_draw_mixed(data, layout, dtypes, max_magnitude=1e3) for _ in range(2)]
    observed = _jitted("adamw", template, "mixed")(params, grads_seq, wd)
    names = [str(i) for i in range(len(jax.tree.leaves(params)))]
    flags = dict(zip(names, jax.tree.leaves(_alternating_mask(layout))))
    expected = _adamw_reference(dict(zip(names, jax.tree.leaves(params))),
                                [dict(zip(names, jax.tree.leaves(g))) for g in grads_seq], flags, LR, wd)
    for step, (u, (ref, scales)) in enumerate(zip(observed, expected), 1):
        for name, p, leaf in zip(names, jax.tree.leaves(params), jax.tree.leaves(u)):
            check.exact("update dtype is the leaf dtype", str(leaf.dtype), str(p.dtype))
            check.reference(f"adamw step {step}", leaf, ref[name], scale=scales[name], why=ADAMW_WHY)


def _periodic_dtype(i):
    return ("float32", "bfloat16", "float16")[i % 3]


@given(template=strategies.template_names(), period=st.integers(1, 50), data=st.data())
def test_property_periodic_update(check, template, period, data):
    """Any layout (float32, bfloat16 and float16 leaves in one tree), step and period: the result is
    the online tree exactly when step % period == 0, else the target tree, bit for bit."""
    layout = strategies.TEMPLATES[template]
    dtypes = _mixed_dtypes(layout, _periodic_dtype)
    online = _draw_mixed(data, layout, dtypes)
    target = jax.tree.map(lambda x: (-x - 1).astype(x.dtype), online)  # distinct values, half the drawing
    step = period * data.draw(st.integers(0, 10_000)) + data.draw(st.one_of(st.just(0), st.integers(0, period - 1)))
    result = _jitted("periodic", template, "mixed")(online, target, jnp.asarray(step, jnp.int32),
                                                    jnp.asarray(period, jnp.int32))
    expected = online if step % period == 0 else target
    for r, e in zip(jax.tree.leaves(result), jax.tree.leaves(expected)):
        check.identical(f"{'online' if step % period == 0 else 'target'} copied bit for bit", r, e)
