"""Element-wise, block-wise, unit-wise and per-example clipping, and the normalisers: optax.clip,
clip_by_block_rms, adaptive_grad_clip (with transforms.unitwise_norm / unitwise_clip),
per_example_layer_norm_clip, normalize_by_update_norm, centralize, scale_by_trust_ratio,
contrib.normalize; and clip_by_global_norm / per_example_global_norm_clip exactly at their threshold.

References are NumPy float64 formulas written from the docstrings, fed the float32 arrays the library
received: clip is min(max(g, -M), M); clip_by_block_rms divides a leaf by max(1, rms / threshold);
adaptive_grad_clip keeps a unit whose gradient norm is below clipping * max(param norm, eps) and
scales it to that norm otherwise (units: a vector whole, a matrix's columns, a conv kernel's output
channels); normalize_by_update_norm is g * scale_factor / (norm + eps); centralize subtracts the mean
over every axis but the first of leaves of rank >= 2; scale_by_trust_ratio multiplies a leaf by
trust_coefficient * |param| / (|update| + eps), 1 where either norm is zero, norms floored at min_norm.

Every parameter is taken at a non-default value, values just under, at and over each threshold
(thresholds are picked where the library's float32 norm is exact, so which side it sees is known),
zero gradients, and leaves of asymmetric shape (2x3 matrices, (1, 3) rows, conv kernels) whose units
differ if an axis is confused. Each transform compiles once: hyperparameters are traced arguments.
"""

import math
import jax
import numpy as np
import optax
import pytest

pytestmark = pytest.mark.family("clipping")

F32 = np.float32


def _below(x):
    return float(np.nextafter(F32(x), F32(0.0)))


def _above(x):
    return float(np.nextafter(F32(x), F32(np.inf)))


def _f64(tree):
    return jax.tree.map(lambda x: np.asarray(x, np.float64), tree)


def _tree(seed, layout, scale=1.0):
    rng = np.random.default_rng(seed)
    return {k: (scale * rng.standard_normal(s)).astype(F32) for k, s in layout.items()}


ASYM = {"b": (3,), "s": (), "w": (2, 3)}
_JIT = {}


def _update(name, make):
    """One update of make(*hyper), jitted once per name and tree layout; hyper are traced scalars."""
    if name not in _JIT:
        def run(grads, params, hyper):
            tx = make(*hyper)
            return tx.update(grads, tx.init(params), params)[0]
        _JIT[name] = jax.jit(run)
    return lambda grads, params, *hyper: jax.device_get(_JIT[name](grads, params, tuple(hyper)))


def _leafwise(check, label, out, expected, scale=None, why=None):
    for key in sorted(expected):
        check.reference(f"{label} {key}", out[key], expected[key],
                        scale=None if scale is None else scale[key], why=why)


# -- clip(max_delta) ----------------------------------------------------------------------------------------
_clip = _update("clip", lambda m: optax.clip(m))


@pytest.mark.parametrize("max_delta", [0.5, 1.5])
def test_clip_elementwise(check, max_delta):
    """clip(M) maps every element to min(max(g, -M), M): elements just under, at and just over +-M
    (float32 neighbours), zeros, and a random asymmetric tree; a selection, so compared exactly."""
    edge = np.array([_below(max_delta), max_delta, _above(max_delta)], F32)
    grads = {"b": edge, "s": F32(-max_delta),
             "w": np.stack([edge, -edge]).astype(F32)}
    for name, g in (("edges", grads), ("random", _tree(1, ASYM, 2.0)), ("zeros", _zeros(ASYM))):
        out = _clip(g, g, max_delta)
        for key in sorted(g):
            check.exact(f"{name} {key} = clip(g, -M, M)", out[key], np.clip(np.asarray(g[key], np.float64),
                                                                             -max_delta, max_delta))
        check.golden_tree(f"clip/M={max_delta:g}/{name}", out)


def _zeros(layout):
    return {k: np.zeros(s, F32) for k, s in layout.items()}


def test_clip_degenerate_max_delta(check):
    """max_delta <= 0 has no documented outcome: what a zero and a negative bound produce is golden."""
    g = _tree(2, ASYM)
    for m in (0.0, -1.0):
        result = check.error_contract(f"clip/degenerate/M={m:g}", _clip, g, g, m)
        if not isinstance(result, Exception):
            check.golden_tree(f"clip/degenerate/M={m:g}/updates", result)


# -- clip_by_global_norm exactly at max_norm -----------------------------------------------------------------
_cgn = _update("clip_by_global_norm", lambda m: optax.clip_by_global_norm(m))


def test_clip_by_global_norm_at_threshold(check):
    """Global norm exactly 5 (a 3-4-5 tree, exact in float32): max_norm one ulp under 5 clips, max_norm 5
    takes the clipping branch (norm < max_norm is false) with factor 1, one ulp over passes the update
    through bit for bit."""
    g = {"b": np.array([0.0, 4.0, 0.0], F32), "s": F32(0.0), "w": np.array([[0, 0, 3.0], [0, 0, 0]], F32)}
    for side, m in (("under", _below(5.0)), ("at", 5.0), ("over", _above(5.0))):
        out = _cgn(g, g, m)
        _leafwise(check, f"{side}: g * min(1, M / 5)", out, {k: v * min(1.0, m / 5.0) for k, v in _f64(g).items()})
        check.golden_tree(f"global_norm_threshold/{side}", out)
        if side == "over":
            for key in g:
                check.identical(f"over: {key} passes through", out[key], g[key])


# -- clip_by_block_rms(threshold) -----------------------------------------------------------------------------
_block = _update("clip_by_block_rms", lambda t: optax.clip_by_block_rms(t))


def _block_ref(g, t):
    return {k: v / max(1.0, np.sqrt(np.mean(v ** 2)) / t) for k, v in _f64(g).items()}


def test_clip_by_block_rms(check):
    """Each leaf divided by max(1, rms(leaf) / threshold): leaves of rms exactly 2 (b), 3 (w) and 0.5 (s)
    against thresholds just under, at and over 2, so b is clipped, at its threshold or untouched."""
    g = {"b": np.array([2.0, -2.0, 2.0], F32), "s": F32(-0.5), "w": np.array([[3, -3, 3], [-3, 3, 3]], F32)}
    for side, t in (("under", _below(2.0)), ("at", 2.0), ("over", _above(2.0))):
        out = _block(g, g, t)
        _leafwise(check, f"threshold {side} 2", out, _block_ref(g, t))
        check.golden_tree(f"block_rms/{side}", out)
        if side != "under":
            check.identical(f"b at rms <= threshold ({side}) passes through", out["b"], g["b"])
    g = _tree(3, ASYM, 3.0)
    out = _block(g, g, 0.7)
    _leafwise(check, "random asymmetric tree", out, _block_ref(g, 0.7))
    check.golden_tree("block_rms/random", out)
    zero = _block(_zeros(ASYM), _zeros(ASYM), 0.7)
    for key, leaf in zero.items():
        check.exact(f"zeros stay zeros: {key}", leaf, np.zeros(np.shape(leaf)))


# -- adaptive_grad_clip(clipping, eps, axis), unitwise_norm, unitwise_clip -----------------------------------
AGC_LAYOUT = {"b": (3,), "conv": (2, 2, 1, 3), "row": (1, 3), "s": (), "w": (2, 3)}
# Units per documented rank rule: a vector (and a scalar) whole, a matrix per column (axis 0), a conv
# kernel per output channel (axes 0, 1, 2). A (1, 3) row squeezes to a vector: golden only (see below).
_AXES = {"b": None, "conv": (0, 1, 2), "s": None, "w": (0,)}


def _unit_norm(x, axes):
    x = np.asarray(x, np.float64)
    return np.broadcast_to(np.sqrt(np.sum(x * x, axis=axes, keepdims=True)), x.shape)


def _agc_ref(g, p, clipping, eps, axes):
    out = {}
    for k, axis in axes.items():
        gn, pn = _unit_norm(g[k], axis), _unit_norm(p[k], axis)
        max_norm = clipping * np.maximum(pn, eps)
        out[k] = np.where(gn < max_norm, np.asarray(g[k], np.float64),
                          np.asarray(g[k], np.float64) * max_norm / np.maximum(gn, 1e-6))
    return out


_agc = _update("adaptive_grad_clip", lambda c, e: optax.adaptive_grad_clip(c, eps=e))
_agc_axis1 = _update("adaptive_grad_clip/axis=1", lambda c, e: optax.adaptive_grad_clip(c, eps=e, axis=1))


@pytest.mark.parametrize("clipping,eps", [(0.05, 1e-3), (0.3, 0.25)], ids=["eps=default", "eps=0.25"])
def test_adaptive_grad_clip(check, clipping, eps):
    """Unit-wise clipping to clipping * max(|param unit|, eps): a random tree of every documented rank,
    one param leaf zero (its units are clipped against eps) and one large (nothing clipped)."""
    g, p = _tree(4, AGC_LAYOUT), _tree(5, AGC_LAYOUT)
    p["b"] = np.zeros(3, F32)
    p["conv"] = p["conv"] * F32(100.0)
    out = _agc(g, p, clipping, eps)
    _leafwise(check, "unit-wise clip", {k: out[k] for k in _AXES}, _agc_ref(g, p, clipping, eps, _AXES))
    check.golden_tree(f"agc/clipping={clipping:g}/eps={eps:g}", out)


def test_adaptive_grad_clip_axis(check):
    """axis=1: the units are a matrix's rows (not its columns) and a conv kernel's slices along axis 1."""
    g, p = _tree(6, {"conv": (2, 2, 1, 3), "w": (2, 3)}), _tree(7, {"conv": (2, 2, 1, 3), "w": (2, 3)})
    out = _agc_axis1(g, p, 0.2, 1e-3)
    _leafwise(check, "axis=1 unit-wise clip", out, _agc_ref(g, p, 0.2, 1e-3, {"conv": 1, "w": 1}))
    check.golden_tree("agc/axis=1", out)


def test_adaptive_grad_clip_thresholds(check):
    """Gradient unit norm 5 (a 3-4-5 column, exact in float32) against clipping * |param unit| = 5 with
    clipping just under, at and over 1 (at it, g_norm < max_norm is false: the clipping branch, factor 1),
    and the param unit norm just under, at and over eps (where max(|p|, eps) switches)."""
    g = {"w": np.array([[3.0, 0.6], [4.0, 0.8]], F32)}  # column norms 5 and 1
    for side, c in (("under", _below(1.0)), ("at", 1.0), ("over", _above(1.0))):
        p = {"w": np.array([[0.0, 0.0], [5.0, 1.0]], F32)}  # column norms 5 and 1: ratio c
        out = _agc(g, p, c, 1e-3)
        _leafwise(check, f"g_norm {side} max_norm", out, _agc_ref(g, p, c, 1e-3, {"w": (0,)}))
        check.golden_tree(f"agc/g_vs_max/{side}", out)
    for side, pn in (("under", _below(0.5)), ("at", 0.5), ("over", _above(0.5))):
        p = {"w": np.array([[0.0, 0.0], [pn, pn]], F32)}
        out = _agc(g, p, 1.0, 0.5)
        _leafwise(check, f"param norm {side} eps", out, _agc_ref(g, p, 1.0, 0.5, {"w": (0,)}))
        check.golden_tree(f"agc/p_vs_eps/{side}", out)
    zero = _agc(_zeros(AGC_LAYOUT), _tree(8, AGC_LAYOUT), 0.1, 1e-3)
    for key, leaf in zero.items():
        check.exact(f"zero gradients stay zero: {key}", leaf, np.zeros(np.shape(leaf)))



_agc_defaults = _update("adaptive_grad_clip/defaults", lambda c: optax.adaptive_grad_clip(c))
EPS32 = float(F32(1e-3))  # eps's default as the float32 it meets a float32 norm as


def test_adaptive_grad_clip_defaults(check):
    """adaptive_grad_clip(clipping) with eps and axis left at their defaults, as users call it. eps = 1e-3
    floors a param unit's norm: columns of param norm 0, 1e-4 and 5e-4 (floored), just under, at and
    over 1e-3, and 2e-3 and 1 (their own), each with a gradient column of norm 0.5, and a zero param column
    with gradient norm 5e-4 (kept: under 1e-3). unitwise_clip's div_eps = 1e-6 divides a gradient unit of
    norm 1e-7 against max_norm 1e-9 (clipping 1e-6): the result is g * 1e-3 with it, g * 1e-2 without."""
    pn = np.array([0.0, 1e-4, 5e-4, _below(EPS32), EPS32, _above(EPS32), 2e-3, 1.0, 0.0], F32)
    p = {"w": np.stack([np.zeros_like(pn), pn]).astype(F32)}  # column j's norm is pn[j], exactly
    g = {"w": np.array([[0.3] * 8 + [3e-4], [0.4] * 8 + [4e-4]], F32)}
    out = _agc_defaults(g, p, 1.0)
    _leafwise(check, "defaults: clipping * max(|p unit|, 1e-3)", out, _agc_ref(g, p, 1.0, 1e-3, {"w": (0,)}))
    check.golden_tree("agc/defaults/eps_floor", out)
    check.identical("defaults: a gradient unit under clipping * 1e-3 is kept", out["w"][:, -1], g["w"][:, -1])
    g = {"w": np.array([[6e-8, 1.2e-6, 3.0], [8e-8, 1.6e-6, 4.0]], F32)}  # norms 1e-7 < div_eps < 2e-6
    p = {"w": np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], F32)}
    out = _agc_defaults(g, p, 1e-6)
    _leafwise(check, "defaults: g * max_norm / max(|g unit|, 1e-6)", out, _agc_ref(g, p, 1e-6, 1e-3, {"w": (0,)}))
    check.golden_tree("agc/defaults/div_eps", out)


UNITWISE_SHAPES = {"rank1": (3,), "rank2": (2, 3), "row": (1, 3), "rank3": (2, 3, 2), "rank4": (2, 2, 1, 3),
                   "rank5": (2, 1, 2, 1, 3)}


def test_unitwise_norm_by_rank(check):
    """unitwise_norm(x) for each rank: the result (its shape is x's) is golden, and for the ranks the
    docstring states (1: whole vector, 2: axis 0, 4: axes 0-2) it matches float64. Rank 3 (the docstring
    says axes 0-2, the code reduces axis 0), a (1, 3) row and rank 5 (an error in this release) are golden
    only: the outcome is the contract."""
    documented = {"rank1": None, "rank2": (0,), "rank4": (0, 1, 2)}
    for case in sorted(UNITWISE_SHAPES):
        x = _tree(9, {"x": UNITWISE_SHAPES[case]})["x"]
        result = check.error_contract(f"unitwise_norm/{case}", _unitwise_norm, x)
        if isinstance(result, Exception):
            continue
        check.golden(f"unitwise_norm/{case}", result)
        if case in documented:
            check.reference(f"{case} units", result, _unit_norm(x, documented[case]))


def _unitwise_norm(x):
    return jax.device_get(jax.jit(optax.transforms.unitwise_norm)(x))


def test_unitwise_norm_axis(check):
    """unitwise_norm(x, axis=...) reduces exactly the axes given, for a rank-2 and a rank-5 array."""
    x = _tree(10, {"m": (2, 3), "v": (2, 1, 2, 1, 3)})
    for key, axis in (("m", 1), ("v", (1, 3, 4))):
        out = jax.device_get(optax.transforms.unitwise_norm(x[key], axis=axis))
        check.reference(f"axis={axis}", out, _unit_norm(x[key], axis))
        check.golden(f"unitwise_norm/axis/{key}", out)


def test_unitwise_clip(check):
    """unitwise_clip(g_norm, max_norm, grad, div_eps): grad where g_norm < max_norm, else
    grad * max_norm / max(g_norm, div_eps); a non-default div_eps above a small g_norm, g_norm just under,
    at and over max_norm; mismatched shapes raise (the type is golden)."""
    grad = np.array([1.0, -2.0, 3.0, 0.5, 0.25, -1.0], F32)
    g_norm = np.array([_below(2.0), 2.0, _above(2.0), 1e-4, 1e-4, 3.0], F32)
    max_norm = np.array([2.0, 2.0, 2.0, 1e-5, 1e-5, 1.0], F32)
    out = jax.device_get(optax.transforms.unitwise_clip(g_norm, max_norm, grad, div_eps=1e-3))
    g64, n64, m64 = (np.asarray(a, np.float64) for a in (grad, g_norm, max_norm))
    check.reference("unitwise_clip", out, np.where(n64 < m64, g64, g64 * m64 / np.maximum(n64, 1e-3)))
    check.golden("unitwise_clip/div_eps=1e-3", out)
    check.error_contract("unitwise_clip/shape_mismatch", optax.transforms.unitwise_clip, g_norm[:1], max_norm, grad)


def test_adaptive_grad_clip_zero_params_and_rank5(check):
    """A rank-5 leaf without axis: an error in this release, the outcome golden; with axis it is clipped."""
    g, p = _tree(11, {"v": (2, 1, 2, 1, 3)}), _tree(12, {"v": (2, 1, 2, 1, 3)})
    result = check.error_contract("agc/rank5_without_axis", _agc, g, p, 0.1, 1e-3)
    if not isinstance(result, Exception):
        check.golden_tree("agc/rank5_without_axis/updates", result)
    tx = optax.adaptive_grad_clip(0.1, axis=(0, 1, 2, 3))
    out = jax.device_get(tx.update(g, tx.init(p), p)[0])
    _leafwise(check, "rank 5 with axis", out, _agc_ref(g, p, 0.1, 1e-3, {"v": (0, 1, 2, 3)}))
    check.golden_tree("agc/rank5_with_axis", out)


# -- per-example clipping at the threshold, per-layer clipping ---------------------------------------------------
DOC_GRADS = np.array([[0.0, 0.0, 0.0], [0.0, 3.0, 4.0], [4.0, 0.0, 3.0], [3.0, 4.0, 0.0]], F32)


@jax.jit
def _per_example(grads, c):
    return optax.per_example_global_norm_clip(grads, c)


def test_per_example_global_norm_clip_at_threshold(check):
    """The docstring's examples have norms 0, 5, 5, 5 (exact in float32): a clip norm one ulp under 5
    clips three examples, one ulp over clips none; the sums match float64."""
    for side, c in (("under", _below(5.0)), ("over", _above(5.0))):
        total, count = _per_example([DOC_GRADS], c)
        factors = np.array([1.0] + [min(1.0, c / 5.0)] * 3)
        check.reference(f"{side}: sum of min(1, C / norm_i) g_i", total[0], factors @ DOC_GRADS.astype(np.float64))
        check.exact(f"{side}: clipped count", int(count), 3 if side == "under" else 0)
        check.golden(f"per_example/threshold/{side}/sum", total[0])


@jax.jit
def _layer_clip(grads, c):
    return optax.per_example_layer_norm_clip(grads, c, uniform=True), \
        optax.per_example_layer_norm_clip(grads, c, uniform=False), optax.per_example_layer_norm_clip(grads, c)


def _layer_ref(leaves, clips):
    sums, counts = [], []
    for g, clip in zip(leaves, clips):
        g = np.asarray(g, np.float64).reshape(len(g), -1)
        norms = np.sqrt(np.sum(g * g, axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            factors = np.where(norms > 0, np.minimum(clip / norms, 1.0), 1.0)
        sums.append(factors @ g)
        counts.append(int(np.sum(factors < 1.0)))
    return sums, counts


def test_per_example_layer_norm_clip(check):
    """Two layers of 1 and 3 parameters per example (batch 4). uniform=True (the default: a call without
    it must match): each layer clipped to C / sqrt(2); uniform=False: to C * sqrt(D_i / D), i.e. 2 and
    2 sqrt(3) for C = 4. The first layer's
    examples sit just under, at and over its non-uniform clip of 2 (exact in float32); the sums match
    float64, the per-layer counts are golden (and match float64 away from the threshold)."""
    layer0 = np.array([[_below(2.0)], [2.0], [_above(2.0)], [0.0]], F32)
    layer1 = np.array([[3.0, 4.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.0, 0.0], [6.0, 0.0, 8.0]], F32)
    grads = [layer0, layer1]
    (u_sum, u_count), (n_sum, n_count), default = jax.device_get(_layer_clip(grads, 4.0))
    for i in range(2):  # uniform's default is True: a call without it is the uniform one
        check.identical(f"default uniform: layer {i} sum", default[0][i], u_sum[i])
        check.exact(f"default uniform: layer {i} count", int(default[1][i]), int(u_count[i]))
    for name, sums, counts, clips in (("uniform", u_sum, u_count, [4.0 / np.sqrt(2)] * 2),
                                      ("non_uniform", n_sum, n_count, [2.0, 4.0 * np.sqrt(0.75)])):
        ref_sums, ref_counts = _layer_ref(grads, clips)
        for i in range(2):
            check.reference(f"{name} layer {i} sum", sums[i], ref_sums[i].reshape(np.shape(sums[i])))
        check.golden(f"per_layer/{name}/sums", np.concatenate([np.ravel(s) for s in sums]))
        check.golden_exact(f"per_layer/{name}/counts", np.array([int(c) for c in counts]))
        check.exact(f"{name} layer 1 count", int(counts[1]), ref_counts[1])
    check.exact("uniform layer 0 count (clip 2.83, every example below)", int(u_count[0]), 0)


# -- normalisers -------------------------------------------------------------------------------------------------
_nbun = _update("normalize_by_update_norm", lambda s, e: optax.normalize_by_update_norm(scale_factor=s, eps=e))
_centralize = _update("centralize", lambda: optax.centralize())
_normalize = _update("contrib.normalize", lambda: optax.contrib.normalize())


def _norm(tree):
    return float(np.sqrt(sum(np.sum(np.asarray(x, np.float64) ** 2) for x in tree.values())))


@pytest.mark.parametrize("scale_factor,eps", [(1.0, 1e-6), (2.5, 0.5)], ids=["defaults", "scale=2.5,eps=0.5"])
def test_normalize_by_update_norm(check, scale_factor, eps):
    """g * scale_factor / (global norm + eps) on an asymmetric tree; zero gradients give zeros."""
    g = _tree(13, ASYM, 3.0)
    out = _nbun(g, g, scale_factor, eps)
    _leafwise(check, "g * s / (norm + eps)", out, {k: v * scale_factor / (_norm(g) + eps) for k, v in _f64(g).items()})
    check.golden_tree(f"normalize_by_update_norm/s={scale_factor:g}/eps={eps:g}", out)
    zero = _nbun(_zeros(ASYM), _zeros(ASYM), scale_factor, eps)
    for key, leaf in zero.items():
        check.exact(f"zeros stay zeros: {key}", leaf, np.zeros(np.shape(leaf)))


def test_contrib_normalize(check):
    """contrib.normalize (SAM's): g / global norm; zero gradients (0 / 0) golden."""
    g = _tree(14, ASYM, 3.0)
    out = _normalize(g, g)
    _leafwise(check, "g / norm", out, {k: v / _norm(g) for k, v in _f64(g).items()})
    check.golden_tree("contrib_normalize/random", out)
    check.golden_tree("contrib_normalize/zeros", _normalize(_zeros(ASYM), _zeros(ASYM)))


def test_centralize(check):
    """Leaves of rank >= 2 lose their mean over every axis but the first; vectors and scalars pass through.
    Asymmetric 2x3 and 2x3x2 leaves: a mean over the wrong axes differs."""
    layout = {"b": (3,), "s": (), "t": (2, 3, 2), "w": (2, 3)}
    g = _tree(15, layout, 2.0)
    out = _centralize(g, g)
    ref = {k: (v - v.mean(axis=tuple(range(1, v.ndim)), keepdims=True) if v.ndim > 1 else v)
           for k, v in _f64(g).items()}
    scale = {k: np.abs(v) + np.abs(v).mean(axis=tuple(range(1, v.ndim)), keepdims=True) if v.ndim > 1
             else np.abs(v) for k, v in _f64(g).items()}
    _leafwise(check, "g - mean over axes 1..", out, ref, scale, "g minus its mean: terms of either sign cancel")
    for key in ("b", "s"):
        check.identical(f"{key} (rank < 2) passes through", out[key], g[key])
    check.golden_tree("centralize/random", out)
    zero = _centralize(_zeros(layout), _zeros(layout))
    for key, leaf in zero.items():
        check.exact(f"zeros stay zeros: {key}", leaf, np.zeros(np.shape(leaf)))


_trust = _update("scale_by_trust_ratio",
                 lambda m, c, e: optax.scale_by_trust_ratio(min_norm=m, trust_coefficient=c, eps=e))


def _trust_ref(u, p, min_norm, coeff, eps):
    out = {}
    for k in u:
        un, pn = max(_norm({k: u[k]}), min_norm), max(_norm({k: p[k]}), min_norm)  # safe_norm's floor
        out[k] = np.asarray(u[k], np.float64) * (1.0 if pn == 0.0 or un == 0.0 else coeff * pn / (un + eps))
    return out


@pytest.mark.parametrize("min_norm,coeff,eps", [(0.0, 1.0, 0.0), (0.5, 0.02, 0.1)], ids=["defaults", "custom"])
def test_scale_by_trust_ratio(check, min_norm, coeff, eps):
    """Each leaf times trust_coefficient * max(|p|, min_norm) / (max(|u|, min_norm) + eps); ratio 1 where
    either norm is zero (a zero param leaf here), and zero updates give zeros."""
    u, p = _tree(16, ASYM, 0.1), _tree(17, ASYM, 2.0)
    p["b"] = np.zeros(3, F32)
    out = _trust(u, p, min_norm, coeff, eps)
    _leafwise(check, "trust ratio", out, _trust_ref(u, p, min_norm, coeff, eps))
    check.golden_tree(f"trust_ratio/{min_norm:g}/{coeff:g}/{eps:g}", out)
    zero = _trust(_zeros(ASYM), p, min_norm, coeff, eps)
    for key, leaf in zero.items():
        check.exact(f"zero updates stay zero: {key}", leaf, np.zeros(np.shape(leaf)))


def test_scale_by_trust_ratio_min_norm_threshold(check):
    """A param leaf of norm exactly 0.5 against min_norm just under, at and over 0.5 (safe_norm floors a
    norm <= min_norm to min_norm): golden, and against float64 where the side is clear."""
    u, p = {"w": np.array([[0.3, 0.0, 0.0], [0.0, 0.4, 0.0]], F32)}, {"w": np.array([[0.0, 0.5, 0.0]] * 2, F32)}
    p["w"][1] = 0.0
    for side, m in (("under", _below(0.5)), ("at", 0.5), ("over", _above(0.5))):
        out = _trust(u, p, m, 1.0, 0.0)
        check.golden_tree(f"trust_ratio/min_norm/{side}", out)
        check.reference(f"min_norm {side} |p|", out["w"], _trust_ref(u, p, m, 1.0, 0.0)["w"])


# -- tree_norm(ord, squared) -------------------------------------------------------------------------------------
# math.inf is a float object of its own, not np.inf: an ord told apart by identity would refuse it
_TREE_NORM_ORDS = {"None": None, "1": 1, "2": 2, "inf": np.inf, "'inf'": "inf", "math.inf": math.inf, "3": 3}


@jax.jit
def _tree_norms(tree):
    """Every (ord, squared) of optax.tree_utils.tree_norm in one program (ord 3 is checked apart: an error)."""
    return {f"{name}/{squared}": optax.tree_utils.tree_norm(tree, ord=o, squared=squared)
            for name, o in _TREE_NORM_ORDS.items() if name != "3" for squared in (False, True)}


def test_tree_norm_ord_and_squared(check):
    """tree_norm(ord, squared) of an asymmetric tree: ord None/2 is sqrt(sum of squares), 1 the sum of |g|,
    inf (np.inf, math.inf or 'inf') the largest |g|; squared=True returns its square. ord=3 raises (the type is golden);
    zero gradients give 0 for every ord."""
    g = _tree(18, ASYM, 2.0)
    flat = np.concatenate([np.ravel(v) for v in _f64(g).values()])
    norms = {"None": np.sqrt(np.sum(flat ** 2)), "2": np.sqrt(np.sum(flat ** 2)), "1": np.sum(np.abs(flat)),
             "inf": np.max(np.abs(flat)), "'inf'": np.max(np.abs(flat)), "math.inf": np.max(np.abs(flat))}
    out, zero = jax.device_get((_tree_norms(g), _tree_norms(_zeros(ASYM))))
    for key in sorted(out):
        name, squared = key.split("/")
        check.reference(f"ord={name} squared={squared}", out[key], norms[name] ** (2 if squared == "True" else 1))
        check.exact(f"ord={name} squared={squared} of zeros", float(zero[key]), 0.0)
    # math.inf: against the reference only (the golden array was recorded before it)
    check.golden("tree_norm/ords", np.array([out[k] for k in sorted(out) if not k.startswith("math.inf")]))
    check.error_contract("tree_norm/ord=3", optax.tree_utils.tree_norm, g, ord=3)
