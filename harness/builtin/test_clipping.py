"""Gradient clipping contracts: optax.clip_by_global_norm, the global norm, per-example clipping.

References are NumPy float64 formulas written from the documentation: the global norm is
sqrt(sum of squares over every leaf); clip_by_global_norm(M) multiplies every leaf by the one factor
min(1, M / norm); per_example_global_norm_clip(g, C) sums min(1, C / norm_i) * g_i over the batch
axis and counts the examples whose factor is below 1. They are computed from the arrays the
library actually received (after any cast to bfloat16/float16), never from the library.

The global norm has a successor in newer Optax (optax.tree.norm): both are feature-detected at
call time and their presence is a golden fact, so a removed API shows up as a changed fact.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import platforms
from harness.contract import strategies
from harness.contract.tolerances import UNIT_ROUNDOFF
from harness.contract.checks import Check, ContractFailure

pytestmark = pytest.mark.family("clipping")

NORM_APIS = ("optax.global_norm", "optax.tree.norm")


def _norm_functions():
    """The global-norm functions this Optax has, looked up now (so a patched optax is seen)."""
    found = {"optax.global_norm": getattr(optax, "global_norm", None),
             "optax.tree.norm": getattr(getattr(optax, "tree", None), "norm", None)}
    return {name: fn for name, fn in found.items() if fn is not None}


def _guide():
    return {"w": jnp.array([3.0, 4.0]), "b": jnp.array(12.0)}


def _clip(grads, max_norm):
    tx = optax.clip_by_global_norm(max_norm)
    clipped, _ = tx.update(grads, tx.init(grads))
    return clipped


def _norm64(tree) -> float:
    return float(np.sqrt(sum(np.sum(np.asarray(x, np.float64) ** 2) for x in jax.tree.leaves(tree))))


def _lowest(tree) -> str:
    """The lowest-precision floating dtype among the leaves (the precision of their shared norm)."""
    return max((str(x.dtype) for x in jax.tree.leaves(tree)), key=lambda d: UNIT_ROUNDOFF.get(d, 0.0))


def _tiny(tree) -> float:
    """The smallest normal number of the lowest-precision leaf dtype."""
    return float(jnp.finfo(_lowest(tree)).tiny)


# Below these norms the library's sum of squares is not accurate to the dtype: float32/bfloat16
# squares under 2**-126 are flushed to zero on CPU (elements under ~1e-19), float16 squares under
# 2**-24 vanish and those under 2**-14 keep few bits. Above the floor the lost part is negligible
# (under 1e-12 relative for float32/bfloat16, under 1% for float16 over 55 elements).
_NORM_FLOOR = {"float32": 1e-12, "bfloat16": 1e-12, "float16": 1e-2}


def _max_norm(norm, factor, tree):
    """factor x the float64 norm when the library's norm is accurate; below the floor, a threshold
    above the floor (test_near_underflow records what happens to tiny trees)."""
    floor = max(_NORM_FLOOR[str(x.dtype)] for x in jax.tree.leaves(tree))
    return factor * norm if norm >= floor else floor * (1.0 + factor)


def _typed(value, dtype):
    return np.asarray(value, dtype=jnp.dtype(dtype))


def assert_one_scale(check, grads, clipped, max_norm, label="one scale for every leaf"):
    """The clip_by_global_norm contract: every leaf is the same factor min(1, max_norm / norm) times
    its gradient (float64 reference), so the update keeps its direction. Returns (norm, factor)."""
    norm = _norm64(grads)
    factor = 1.0 if norm < max_norm else max_norm / norm
    for g, c in zip(jax.tree.leaves(grads), jax.tree.leaves(clipped)):
        # The library divides each leaf by the norm, then multiplies by M: the quotient of a small leaf
        # may be a subnormal of the leaf dtype (float16 elements near 2**-14 over a norm of 81: spacing
        # 2**-24), so the result is exact only to M times that spacing.
        check.reference(label, c, np.asarray(g, np.float64) * factor, scale=max_norm * float(jnp.finfo(c.dtype).tiny),
                        why="leaf / norm * M: the quotient may be a subnormal of the leaf dtype, then scaled by M")
    return norm, factor


def assert_within_max_norm(check, clipped, max_norm, label="clipped norm / max_norm <= 1"):
    """The norm of the clipped update (float64) is at most max_norm. Compared as the ratio, in the
    lowest-precision leaf dtype: that is the precision of the factor every leaf was multiplied by,
    and a ratio near 1 fits that dtype's range whatever the magnitudes."""
    check.bound(label, _typed(_norm64(clipped) / max_norm, _lowest(clipped)), 1.0)


# -- the guide ----------------------------------------------------------------------------------------
def test_guide_case(check):
    """The guide: {"w": [3, 4], "b": 12} has global norm 13; clip_by_global_norm(5) scales every leaf
    by 5/13 to norm 5."""
    grads = _guide()
    clipped = _clip(grads, 5.0)
    check.golden("guide/clipped_w", clipped["w"])
    check.golden("guide/clipped_b", clipped["b"])
    check.reference("guide/clipped_w", clipped["w"], np.array([3.0, 4.0]) * 5.0 / 13.0)
    check.reference("guide/clipped_b", clipped["b"], np.array(12.0) * 5.0 / 13.0)
    for name, fn in _norm_functions().items():
        norm = fn(grads)
        check.golden(f"guide/norm/{name}", norm)
        check.reference(f"guide/{name}", norm, np.array(13.0))
    assert_one_scale(check, grads, clipped, 5.0)
    assert_within_max_norm(check, clipped, 5.0)


def test_guide_case_jitted(check):
    """The guide's clip as a jitted train step runs it: recorded as golden values of their own, and
    held to the eager clip by the equivalence tolerance (two library paths)."""
    grads = _guide()
    clipped, norms = _clip_and_norms(grads, 5.0)
    eager = _clip(grads, 5.0)
    for leaf in ("w", "b"):
        check.golden(f"guide/jit/clipped_{leaf}", clipped[leaf])
        check.agree(f"guide {leaf}: jit vs eager", clipped[leaf], eager[leaf])
    for name, norm in norms.items():
        check.golden(f"guide/jit/norm/{name}", norm)
        check.agree(f"guide {name}: jit vs eager", norm, _norm_functions()[name](grads))


def test_norm_api_presence(check):
    """Which global-norm functions exist: a removed function is a changed fact, not a crash."""
    present = _norm_functions()
    check.golden_fact("api/norm_functions", {name: name in present for name in NORM_APIS})
    check.exact("at least one global-norm function", bool(present), True)


# -- the one-scale property and its self-check ----------------------------------------------------------
def _per_leaf_clip(grads, max_norm):
    """A plausible regression: each leaf clipped by its own norm to max_norm / sqrt(#leaves). The
    total norm still stays below max_norm, but the direction of the update is not preserved."""
    per_leaf = max_norm / np.sqrt(len(jax.tree.leaves(grads)))

    def clip(t):
        n = jnp.sqrt(jnp.sum(t * t))
        return jnp.where(n < per_leaf, t, t / n * per_leaf)

    return jax.tree.map(clip, grads)


def test_one_scale_property_flags_a_per_leaf_clip(check):
    """Self-check: assert_one_scale, used by the properties below, fails for a per-leaf clip that
    the norm bound alone would accept, and passes for the library on the same input."""
    grads = _guide()
    wrong = _per_leaf_clip(grads, 5.0)
    check.exact("the norm bound alone accepts the per-leaf clip",
                _flagged(assert_within_max_norm, wrong, 5.0), False)
    check.exact("the one-scale property flags the per-leaf clip",
                _flagged(assert_one_scale, grads, wrong, 5.0), True)
    assert_one_scale(check, grads, _clip(grads, 5.0), 5.0)


def _flagged(assertion, *args) -> bool:
    """Whether the assertion raises ContractFailure, run on a scratch recorder (not the check's own,
    whose report must not carry the deliberate failure)."""
    try:
        assertion(Check("clipping/self-check", "clipping", store=None), *args)
    except ContractFailure:
        return True
    return False


# -- Hypothesis properties over pytrees ------------------------------------------------------------------
# Leaf dtypes of a tree: one dtype, or float32 alternating with a 16-bit dtype leaf by leaf.
MIXES = {
    "float32": ("float32",),
    "bfloat16": ("bfloat16",),
    "float16": ("float16",),
    "float32+bfloat16": ("float32", "bfloat16"),
    "float32+float16": ("float32", "float16"),
}
# Layouts per mix: float32 trees take every template; trees with 16-bit leaves take the dense one
# (a matrix and a vector, so a mix puts float32 beside a 16-bit leaf; scalar 16-bit leaves are in the
# fixed checks below). Each (layout, mix) is a compile and drawing the nested template's 55 elements
# is the slowest part of an example; this keeps the module within its time budget.
_LAYOUTS = {mix: sorted(strategies.TEMPLATES) if mix == "float32" else ["dense"] for mix in MIXES}
# float16 squares overflow above 255 and a leaf's sum of squares above 65504 (that overflow is
# test_near_overflow's subject), so float16 leaves stay below 16: 55 elements * 16**2 < 65504.
# Beside float16 leaves, float32 leaves stay below 1e3 so that the global norm (under 55**0.5 * 1e3)
# fits float16: the library casts the norm to each leaf's dtype (test_float16_leaf_beside_a_large_norm).
_MAGNITUDE = {"float32": 1e6, "bfloat16": 1e4, "float16": 16.0}
_MAGNITUDE_BESIDE_FLOAT16 = {"float32": 1e3, "float16": 16.0}


@functools.cache  # one strategy per (layout, mix): built anew in every example, it cost a third of the draw
def _grads(template, mix):
    """A pytree laid out like the template, leaf i in dtype mix[i % len(mix)], as NumPy arrays."""
    layout = strategies.TEMPLATES[template]
    shapes = strategies.leaf_shapes(layout)
    dtypes = [mix[i % len(mix)] for i in range(len(shapes))]
    magnitude = _MAGNITUDE_BESIDE_FLOAT16 if "float16" in mix else _MAGNITUDE
    leaves = st.tuples(*[strategies.array(s, d, magnitude[d]) for s, d in zip(shapes, dtypes)])

    def assemble(values):  # cast on the host (ml_dtypes): cheaper than a device conversion per leaf
        it = iter(zip(values, dtypes))
        return strategies.build(layout, lambda _shape: _typed(*next(it)))

    return leaves.map(assemble)


@jax.jit
def _clip_and_norms(grads, max_norm):
    """Compiled once per (layout, leaf dtypes); max_norm is a traced weak-typed scalar, like a
    python float closed over (so it promotes with bfloat16/float16 leaves the same way)."""
    return _clip(grads, max_norm), {name: fn(grads) for name, fn in _norm_functions().items()}


_FACTORS = st.floats(1e-3, 1e3).filter(lambda f: abs(f - 1.0) > 1e-3)


@pytest.mark.parametrize("mix", sorted(MIXES))
@given(factor=_FACTORS, data=st.data())
def test_property_clip(check, mix, factor, data):
    """Any tree: the global norms match float64; the clip is one factor min(1, M/norm) for every leaf,
    leaves keep their dtype, and the clipped norm is at most M. M is drawn relative to the norm
    (0.001x to 1000x), so both sides of the threshold are exercised, except for trees too small for
    the library's sum of squares (see _NORM_FLOOR), which are drawn below M."""
    template = data.draw(st.sampled_from(_LAYOUTS[mix]), label="template")
    grads = data.draw(_grads(template, MIXES[mix]), label="grads")
    norm = _norm64(grads)
    max_norm = _max_norm(norm, factor, grads)
    clipped, norms = _clip_and_norms(grads, max_norm)
    if norm >= max(_NORM_FLOOR[str(x.dtype)] for x in jax.tree.leaves(grads)):
        # Below the floor the library's sum of squares has lost what underflowed (test_near_underflow
        # records what it gives there); above it the norm is held to its own value's ulps.
        for name, value in norms.items():
            check.reference(f"{name} vs float64", value, np.array(norm))
    check.exact("leaf dtypes kept", [str(x.dtype) for x in jax.tree.leaves(clipped)],
                [str(x.dtype) for x in jax.tree.leaves(grads)])
    if abs(norm - max_norm) > _norm_uncertainty(grads, norm):  # which side of M the library sees is clear
        assert_one_scale(check, grads, clipped, max_norm)
        assert_within_max_norm(check, clipped, max_norm)


def _norm_uncertainty(grads, norm) -> float:
    """How far the library's norm may be from the float64 norm: the squares below a leaf dtype's
    smallest normal, which its sum of squares cannot hold (float16 squares of elements under 2**-7),
    plus 8 ulps of the lowest-precision dtype for the roundings. Within it of M, whether the library
    clips is not decided by the contract (measured: a float16 tree 2% from M, clipped by the library)."""
    lost = sum(float(np.sum(sq[sq < float(jnp.finfo(x.dtype).tiny)]))
               for x in jax.tree.leaves(grads) for sq in [np.asarray(x, np.float64) ** 2])
    return (norm - np.sqrt(max(norm ** 2 - lost, 0.0))) + 8 * norm * 2.0 * UNIT_ROUNDOFF[_lowest(grads)]


@given(mix=st.sampled_from(sorted(MIXES)), factor=st.floats(1.1, 1e3), data=st.data())
def test_property_identity_below_threshold(check, mix, factor, data):
    """Below the threshold the update passes through bit for bit. max_norm is at least 1.1 x the
    float64 norm: the norm the library compares is accurate to a few ulps of the lowest leaf dtype
    (under 2% in bfloat16), so these trees are unambiguously below it."""
    template = data.draw(st.sampled_from(_LAYOUTS[mix]), label="template")
    grads = data.draw(_grads(template, MIXES[mix]), label="grads")
    norm = _norm64(grads)
    clipped, _ = _clip_and_norms(grads, _max_norm(norm, factor, grads))
    for g, c in zip(jax.tree.leaves(grads), jax.tree.leaves(clipped)):
        check.identical("identity below the threshold", np.asarray(c), np.asarray(g))


# -- edge cases -------------------------------------------------------------------------------------------
@jax.jit
@jax.grad
def _backward_through_clip(grads):
    """d/dgrads of the sum of the clipped update (meta-gradients differentiate through the clip)."""
    return sum(jnp.sum(x.astype(jnp.float32)) for x in jax.tree.leaves(_clip(grads, 1.0)))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_all_zero_gradients(check, dtype):
    """All-zero gradients: exact zeros out and a zero norm, no NaN, for the layouts of the dtype; whether
    the backward pass through the clip at zero has NaN is recorded (sqrt'(0) is infinite and the
    select's other branch is 0/0: meta-gradients through the clip meet it)."""
    for template in _LAYOUTS[dtype]:
        zeros = strategies.build(strategies.TEMPLATES[template], lambda s: jnp.zeros(s, dtype))
        for max_norm in (1.0, 1e-3):
            clipped, norms = _clip_and_norms(zeros, max_norm)
            for leaf in jax.tree.leaves(clipped):
                check.exact("zeros stay zeros (no NaN)", np.asarray(leaf, np.float64), np.zeros(leaf.shape))
            for name, value in norms.items():  # sqrt(sum(0 ** 2)): a formula's value, in ulps at 0
                check.reference(f"{name} of zeros", value, np.array(0.0))
    if dtype == "float32":  # the backward NaN comes from sqrt'(0), whatever the dtype
        grads = _backward_through_clip({"w": jnp.zeros((2,), dtype), "b": jnp.zeros((), dtype)})
        check.golden_fact("zeros/backward_has_nan",
                          bool(any(np.isnan(np.asarray(x, np.float64)).any() for x in jax.tree.leaves(grads))))


DEGENERATE_MAX_NORM = {
    "max_norm=0/nonzero_grads": (0.0, False),
    "max_norm=0/zero_grads": (0.0, True),
    "max_norm=-1/nonzero_grads": (-1.0, False),
}


@pytest.mark.parametrize("case", sorted(DEGENERATE_MAX_NORM))
def test_degenerate_max_norm(check, case):
    """max_norm <= 0: whether it raises is the contract; if not, the values produced (zeros, NaN from
    0/0, a sign flip from a negative max_norm) are golden. They are the clip formula's values, t / norm *
    max_norm, even here: held to the golden ulps (NaN and inf only to themselves), not bit for bit."""
    max_norm, zero = DEGENERATE_MAX_NORM[case]
    grads = jax.tree.map(jnp.zeros_like, _guide()) if zero else _guide()

    def run():
        clipped = _clip(grads, max_norm)
        return np.concatenate([np.ravel(np.asarray(clipped["b"])), np.asarray(clipped["w"])])

    result = check.error_contract(f"degenerate/{case}", run)
    if not isinstance(result, Exception):
        check.golden(f"degenerate/{case}/b_then_w", result)
        check.golden_fact(f"degenerate/{case}/has_nan", bool(np.isnan(result).any()))


def _mixed_tree():
    # The guide's leaf shapes, (2,) and (), so the eager kernels compiled for the other checks are reused.
    return {"bf16": jnp.array([2.0, 7.5], jnp.bfloat16), "f16": jnp.array(-4.3, jnp.float16),
            "f32": jnp.array([3.0, -1.5], jnp.float32), "f32_scalar": jnp.array(0.25, jnp.float32)}


def test_mixed_leaf_dtypes(check):
    """float32, bfloat16 and float16 leaves in one tree: the dtypes of the norms and of the clipped
    leaves are golden facts; the values are golden and match float64 (see the override's reason)."""
    grads = _mixed_tree()
    clipped, norms = _clip_and_norms(grads, 2.0)
    check.golden_fact("mixed/clipped_dtypes", {k: str(v.dtype) for k, v in sorted(clipped.items())})
    check.golden_fact("mixed/norm_dtypes", {name: str(v.dtype) for name, v in norms.items()})
    for name, value in norms.items():
        check.golden(f"mixed/norm/{name}", value)
        check.reference(f"{name} vs float64", value, np.array(_norm64(grads)))
    for key, leaf in sorted(clipped.items()):
        check.golden(f"mixed/clipped/{key}", leaf)
    assert_one_scale(check, grads, clipped, 2.0)
    assert_within_max_norm(check, clipped, 2.0)


def test_float16_leaf_beside_a_large_norm(check):
    """A float16 leaf in a tree whose global norm (or max_norm) exceeds the float16 range: the library
    divides each leaf by the norm cast to the leaf's dtype, i.e. by inf, so the float16 leaf is
    clipped to 0 instead of about 1e-5 (and to NaN, 0 * inf, when max_norm is beyond float16 too).
    Golden, so a fix or a new failure mode is visible; the float32 leaf is clipped correctly."""
    grads = {"f16": jnp.array([1.0, -2.0], jnp.float16), "f32": jnp.array([1e5, 0.0], jnp.float32)}
    for max_norm in (1.0, 7e4):
        clipped = _clip(grads, max_norm)
        factor = max_norm / _norm64(grads)
        check.reference("float32 leaf", clipped["f32"], np.array([1e5, 0.0]) * factor)
        f16 = np.asarray(clipped["f16"])
        check.golden(f"float16_beside_large_norm/max_norm={max_norm:g}", f16)
        check.golden_fact(f"float16_beside_large_norm/max_norm={max_norm:g}/outcome",
                          "nan" if np.isnan(f16).any() else "zeros" if not f16.any() else "clipped")


OVERFLOW = {
    "float32": [1e18, 1e19, 2e19, 1e20, 1e30, 1e38],
    "bfloat16": [1e18, 1e19, 1e20, 1e38],
    "float16": [100.0, 140.0, 150.0, 300.0, 6e4],
}


@pytest.mark.parametrize("dtype", sorted(OVERFLOW))
def test_near_overflow(check, dtype):
    """Leaves near the top of the dtype's range: the sum of squares overflows long before the norm
    would. Which magnitudes give an infinite norm, the norms and the clipped values (an infinite
    norm clips every leaf to 0 * sign) are golden; where the squares fit, the norm matches float64."""
    inf_at, norms_seen, clipped_seen = {}, [], []
    for magnitude in OVERFLOW[dtype]:
        grads = {"w": jnp.array([magnitude, -magnitude], dtype), "b": jnp.array(magnitude, dtype)}
        clipped, norms = _clip_and_norms(grads, 1.0)
        inf_at[f"{magnitude:g}"] = {name: bool(np.isinf(np.asarray(v, np.float64))) for name, v in norms.items()}
        norms_seen.append([np.asarray(v, np.float64) for v in norms.values()])
        clipped_seen.append(np.concatenate([np.ravel(np.asarray(clipped["b"], np.float64)),
                                            np.asarray(clipped["w"], np.float64)]))
        fits = 3 * np.float64(magnitude) ** 2 < float(jnp.finfo(dtype).max)
        if fits:
            for name, value in norms.items():
                check.reference(f"{name} vs float64 where the squares fit", value, np.array(_norm64(grads)))
    check.golden_fact(f"overflow/{dtype}/norm_is_inf", inf_at)
    check.golden(f"overflow/{dtype}/norms", np.array(norms_seen).astype(jnp.dtype(dtype)))
    check.golden(f"overflow/{dtype}/clipped_b_then_w", np.array(clipped_seen).astype(jnp.dtype(dtype)))


UNDERFLOW = {"float32": [1e-15, 1e-18, 1e-19, 1e-20, 1e-30], "bfloat16": [1e-15, 1e-18, 1e-19, 1e-20, 1e-30],
             "float16": [1e-2, 4e-3, 1e-3, 1e-4]}


@pytest.mark.parametrize("dtype", sorted(UNDERFLOW))
def test_near_underflow(check, dtype):
    """Tiny leaves, clipped to a tenth of their norm: once the sum of squares leaves the dtype's range
    (subnormal squares are flushed on CPU) the library's norm is 0 and nothing is clipped. The
    magnitudes where the norm is zero and the clipped values are golden; where the squares are
    normal numbers the norm and the clip match float64."""
    zero_at, clipped_seen = {}, []
    for magnitude in UNDERFLOW[dtype]:
        grads = {"w": jnp.array([magnitude, -magnitude], dtype), "b": jnp.array(magnitude, dtype)}
        max_norm = 0.1 * _norm64(grads)
        clipped, norms = _clip_and_norms(grads, max_norm)
        zero_at[f"{magnitude:g}"] = {name: float(v) == 0.0 for name, v in norms.items()}
        clipped_seen.append(np.concatenate([np.ravel(np.asarray(clipped["b"], np.float64)),
                                            np.asarray(clipped["w"], np.float64)]))
        # Every element's square must be a normal number: a subnormal square is flushed to zero
        # before the sum (the total can be normal while each square is not).
        if min(float(np.min(np.abs(np.asarray(x, np.float64)))) for x in jax.tree.leaves(grads)) ** 2 >= _tiny(grads):
            for name, value in norms.items():
                check.reference(f"{name} vs float64 where the squares are normal", value, np.array(_norm64(grads)),
                                )  # ulps at the value: as strict for tiny norms as for large ones
            assert_one_scale(check, grads, clipped, max_norm)
    check.golden_fact(f"underflow/{dtype}/norm_is_zero", zero_at)
    seen = np.array(clipped_seen)
    check.golden(f"underflow/{dtype}/clipped_b_then_w", seen.astype(jnp.dtype(dtype)))


LEAF_KINDS = {
    "python_float": lambda: {"w": jnp.array([3.0, 4.0]), "b": 12.0},
    "numpy_float32": lambda: {"w": np.array([3.0, 4.0], np.float32), "b": np.array(12.0, np.float32)},
    "int32": lambda: {"w": jnp.array([3, 4], jnp.int32), "b": jnp.array(12, jnp.int32)},
}
LEAF_KIND_WORDS = {"python_float": "{'w': a float32 jax array, 'b': the python float 12.0}",
                   "numpy_float32": "{'w', 'b': NumPy float32 arrays}", "int32": "{'w', 'b': int32 jax arrays}"}
CALLS = {
    "optax.global_norm": lambda g: optax.global_norm(g),
    "optax.tree.norm": lambda g: optax.tree.norm(g),
    "clip_by_global_norm": lambda g: _clip(g, 5.0),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("kind", sorted(LEAF_KINDS))
def test_leaf_kinds(check, kind, call):
    """Leaves that are not float jax arrays (a python float, a NumPy array, integers): the exception
    type is the contract (AttributeError if the function is gone); values and dtypes are golden."""
    check.describe_input(f"{call} of {LEAF_KIND_WORDS[kind]}")
    result = check.error_contract(f"leaf_kind/{kind}/{call}", lambda: CALLS[call](LEAF_KINDS[kind]()))
    if not isinstance(result, Exception):
        leaves = jax.tree.leaves(result)
        check.golden_fact(f"leaf_kind/{kind}/{call}/dtypes", [str(np.asarray(x).dtype) for x in leaves])
        check.golden(f"leaf_kind/{kind}/{call}/values", np.concatenate([np.ravel(np.asarray(x)) for x in leaves]))


# -- per-example clipping -------------------------------------------------------------------------------
def _per_example_ref(grads, l2_norm_clip):
    """Documented: the sum over the batch axis of min(1, C / norm_i) * g_i, and how many examples had
    a factor below 1 (an all-zero example needs no clipping: factor 1, as the docstring's C=0 example
    shows). Returns (sum leaves, count, per-example norms, factors, operand magnitudes)."""
    leaves = [np.asarray(x, np.float64) for x in jax.tree.leaves(grads)]
    batch = leaves[0].shape[0]
    norms = np.sqrt(sum(np.sum(x.reshape(batch, -1) ** 2, axis=1) for x in leaves))
    with np.errstate(divide="ignore", invalid="ignore"):
        factors = np.where(norms > 0, np.minimum(l2_norm_clip / norms, 1.0), 1.0)
    sums = [np.tensordot(factors, x, axes=1) for x in leaves]
    magnitudes = [np.tensordot(factors, np.abs(x), axes=1) for x in leaves]
    return sums, int(np.sum(factors < 1.0)), norms, factors, magnitudes


@jax.jit
def _per_example(grads, l2_norm_clip):
    """Compiled once per batched layout and dtype; the clip norm is a traced weak-typed scalar."""
    return optax.per_example_global_norm_clip(grads, l2_norm_clip)


DOC_GRADS = [[0.0, 0.0, 0.0], [0.0, 3.0, 4.0], [4.0, 0.0, 3.0], [3.0, 4.0, 0.0]]


@pytest.mark.parametrize("l2_norm_clip", [np.inf, 0.0, 1.25, 5.0], ids=lambda c: f"C={c:g}")
def test_per_example_documented_case(check, l2_norm_clip):
    """The docstring's example: four examples of norm 0, 5, 5, 5; sum and clipped count."""
    grads = [jnp.array(DOC_GRADS, jnp.float32)]
    total, count = _per_example(grads, l2_norm_clip)
    sums, expected_count, *_ = _per_example_ref(grads, l2_norm_clip)
    check.golden(f"per_example/doc/C={l2_norm_clip:g}/sum", total[0])
    check.golden_exact(f"per_example/doc/C={l2_norm_clip:g}/count", count)
    check.reference("sum of clipped examples", total[0], sums[0])
    check.exact("count of clipped examples", int(count), expected_count)


def test_per_example_dtypes(check):
    """Dtypes of the sum and the count for integer (the docstring's), float32 and bfloat16 grads."""
    facts = {}
    for dtype in ("int32", "float32", "bfloat16"):
        total, count = _per_example([jnp.array(DOC_GRADS, dtype)], 1.25)
        facts[dtype] = [str(total[0].dtype), str(count.dtype)]
    check.golden_fact("per_example/dtypes", facts)
    check.exact("count is an integer", all(np.dtype(c).kind == "i" for _, c in facts.values()), True)


NO_BATCH_AXIS = {
    "scalar_first_leaf": lambda: {"a": jnp.array(1.0), "b": jnp.ones((4, 3))},
    "scalar_later_leaf": lambda: {"a": jnp.ones((4, 3)), "b": jnp.array(1.0)},
    "batch_sizes_differ": lambda: {"a": jnp.ones((4, 3)), "b": jnp.ones((3, 3))},
    "vector_only": lambda: {"a": jnp.array([3.0, 4.0])},
}


@pytest.mark.parametrize("case", sorted(NO_BATCH_AXIS))
def test_per_example_without_batch_axis(check, case):
    """Grads without a common leading batch axis: the exception type is the contract; a tree that is
    silently read as a batch (a lone vector) has its result recorded as golden."""
    result = check.error_contract(f"per_example/no_batch/{case}", optax.per_example_global_norm_clip,
                                  NO_BATCH_AXIS[case](), 1.0)
    if not isinstance(result, Exception):
        total, count = result
        check.golden(f"per_example/no_batch/{case}/sum",
                     np.concatenate([np.ravel(x) for x in jax.tree.leaves(total)]))
        check.golden_exact(f"per_example/no_batch/{case}/count", count)


BATCH = 4
# Batched layouts: a batch axis of 4 in front of every leaf of the dense template (per-example
# matrices and vectors) and of the scalar one (per-example scalars); one compile each. (The nested
# template's 220 batched elements would make drawing the examples the slowest part of the suite.)
_BATCHED = {name: strategies.build(strategies.TEMPLATES[name], lambda s: (BATCH, *s))
            for name in ("dense", "scalar")}


@given(template=st.sampled_from(sorted(_BATCHED)), factor=st.floats(0.1, 10.0), data=st.data())
def test_property_per_example(check, template, factor, data):
    """Every example is clipped by its own norm: the sum matches the float64 formula, the norm of the
    sum is at most sum_i min(norm_i, C), and the count matches (counted within a 1e-4 band of C,
    where float32 rounding of a norm, a few 1e-7, cannot decide it, as a range)."""
    grads = data.draw(strategies.pytree(_BATCHED[template], max_magnitude=1e4))
    _, _, norms, _, _ = _per_example_ref(grads, 1.0)
    # C is a multiple of the median example norm; examples too small for an accurate norm stay below C.
    l2_norm_clip = _max_norm(float(np.median(norms)), factor, grads)
    total, count = _per_example(grads, l2_norm_clip)
    sums, _, norms, _, magnitudes = _per_example_ref(grads, l2_norm_clip)
    for observed, expected, magnitude in zip(jax.tree.leaves(total), sums, magnitudes):
        # A sum over the batch of terms of either sign: rounding is relative to the terms' size.
        check.reference("sum of clipped examples", observed, expected, scale=magnitude,
                        why="a sum over the batch of terms of either sign: it may cancel")
    check.bound("every example clipped: norm of the sum <= sum_i min(norm_i, C)",
                np.float32(_norm64(total)), float(np.sum(np.minimum(norms, l2_norm_clip))))
    surely, maybe = np.sum(norms > l2_norm_clip * (1 + 1e-4)), np.sum(norms > l2_norm_clip * (1 - 1e-4))
    check.bound("count >= examples surely above C", -int(count), -int(surely))
    check.bound("count <= examples maybe above C", int(count), int(maybe))


@pytest.mark.needs(platforms.FLOAT64)
def test_float64_with_x64(check):
    """With x64 enabled, the guide's case in float64: norm 13, every leaf scaled by 5/13, in float64."""
    with jax.enable_x64(True):
        grads = {"w": jnp.array([3.0, 4.0], jnp.float64), "b": jnp.array(12.0, jnp.float64)}
        tx = optax.clip_by_global_norm(5.0)
        clipped, _ = tx.update(grads, tx.init(grads))
        norm = optax.tree.norm(grads) if hasattr(optax, "tree") and hasattr(optax.tree, "norm") else optax.global_norm(grads)
        clipped = jax.device_get(clipped)
        norm = np.asarray(norm)
    check.golden_fact("x64/dtypes", {"w": str(clipped["w"].dtype), "b": str(clipped["b"].dtype), "norm": str(norm.dtype)})
    check.golden("x64/clipped_w", clipped["w"])
    check.reference("x64 norm", norm, np.array(13.0))
    check.reference("x64 clipped w", clipped["w"], np.array([3.0, 4.0]) * 5.0 / 13.0)
    check.reference("x64 clipped b", clipped["b"], np.array(12.0) * 5.0 / 13.0)
