"""Global-norm clipping of complex-valued gradients: complex64 leaves, alone or beside float32 leaves.

Documented: the global norm is sqrt of the sum over every element of |g|**2 = g * conj(g) = re**2 + im**2
(a real number, not g * g); clip_by_global_norm(M) multiplies every leaf by the one real factor
min(1, M / norm), so a complex leaf keeps its dtype and its phase. References are NumPy float64 formulas
computed from the arrays the library received. The harness compares real arrays, so a complex leaf is
compared as its real and imaginary parts (float32 each: the precision of complex64).

The global-norm functions are feature-detected at call time (optax.global_norm, optax.tree.norm).
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
from harness.contract import strategies, trees

pytestmark = pytest.mark.family("clipping")


def _norm_functions():
    """The global-norm functions this Optax has, looked up now (so a patched optax is seen)."""
    found = {"optax.global_norm": getattr(optax, "global_norm", None),
             "optax.tree.norm": getattr(getattr(optax, "tree", None), "norm", None)}
    return {name: fn for name, fn in found.items() if fn is not None}


def _clip(grads, max_norm):
    tx = optax.clip_by_global_norm(max_norm)
    clipped, _ = tx.update(grads, tx.init(grads))
    return clipped


@jax.jit
def _clip_and_norms(grads, max_norm):
    """Compiled once per (layout, leaf dtypes); max_norm is a traced weak-typed scalar."""
    return _clip(grads, max_norm), {name: fn(grads) for name, fn in _norm_functions().items()}


def _parts(x) -> list[np.ndarray]:
    """A leaf as real arrays: [real, imag] for a complex leaf, [x] for a real one."""
    x = np.asarray(x)
    return [x.real, x.imag] if np.iscomplexobj(x) else [x]


def _norm64(tree) -> float:
    return float(np.sqrt(sum(np.sum(np.abs(np.asarray(x, np.complex128)) ** 2) for x in jax.tree.leaves(tree))))


def _check_clip(check, grads, clipped, norms, max_norm):
    """The norms match float64; every leaf keeps its dtype and is the one factor min(1, M / norm) times
    its gradient, real and imaginary parts alike; the clipped norm is at most M. Returns the factor."""
    norm = _norm64(grads)
    for name, value in norms.items():
        check.exact(f"{name} is real float32", str(np.asarray(value).dtype), "float32")
        if norm >= _NORM_FLOOR:  # below it the float32 squares underflow: the library's norm loses them
            check.reference(f"{name} = sqrt(sum |g|^2)", np.asarray(value), np.array(norm))
    check.exact("leaf dtypes kept", [str(np.asarray(x).dtype) for x in jax.tree.leaves(clipped)],
                [str(np.asarray(x).dtype) for x in jax.tree.leaves(grads)])
    factor = 1.0 if norm < max_norm else max_norm / norm
    for g, c in zip(jax.tree.leaves(grads), jax.tree.leaves(clipped)):
        g64 = np.asarray(g, np.complex128 if np.iscomplexobj(g) else np.float64)
        for part_c, part_g in zip(_parts(c), _parts(g64)):
            check.reference("one real factor for every leaf, real and imaginary parts", part_c, part_g * factor)
    # The ratio, in float32 (the precision of the factor): near 1 whatever the magnitudes.
    check.bound("clipped norm / max_norm <= 1", np.float32(_norm64(clipped) / max_norm), 1.0)
    return factor


# -- fixed cases ------------------------------------------------------------------------------------------------
CASES = {
    # |3+4j|^2 + |1-2j|^2 = 30: g * g would sum to -7 + 24j - 3 - 4j
    "complex64": lambda: {"a": jnp.array([3 + 4j, 1 - 2j], jnp.complex64)},
    # 30 + 1 + 4 = 35
    "complex64+float32": lambda: {"a": jnp.array([3 + 4j, 1 - 2j], jnp.complex64), "b": jnp.array([1.0, 2.0])},
    # purely imaginary: |g|^2 sums to 5 where g * g sums to -5 (a NaN norm)
    "imaginary": lambda: {"a": jnp.array([2j, -1j], jnp.complex64), "b": jnp.array(0.0)},
}


@pytest.mark.parametrize("max_norm", [1.0, 100.0], ids=["clipped", "below"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_complex_fixed_cases(check, case, max_norm):
    """Hand-checkable complex trees: the norms are sqrt(sum |g|^2) (sqrt(30), sqrt(35), sqrt(5)), real and
    float32; clipping to 1 scales every leaf by 1/norm, to 100 leaves it bit for bit; the norms, the
    clipped leaves (real and imaginary parts) and their dtypes are golden."""
    grads = CASES[case]()
    clipped, norms = jax.device_get(_clip_and_norms(grads, max_norm))
    factor = _check_clip(check, grads, clipped, norms, max_norm)
    if factor == 1.0:
        for g, c in zip(jax.tree.leaves(grads), jax.tree.leaves(clipped)):
            for part_c, part_g in zip(_parts(c), _parts(g)):
                check.identical("identity below the threshold", part_c, part_g)
    key = f"complex/{case}/{'clipped' if factor < 1 else 'below'}"
    check.golden_fact(f"{key}/dtypes", {"clipped": [str(np.asarray(x).dtype) for x in jax.tree.leaves(clipped)],
                                        "norms": {name: str(np.asarray(v).dtype) for name, v in norms.items()}})
    for name, value in norms.items():
        check.golden(f"{key}/norm/{name}", value)
    for path, leaf in sorted(trees.leaves(clipped).items()):
        for part, array in zip(("re", "im") if np.iscomplexobj(leaf) else ("re",), _parts(leaf)):
            check.golden(f"{key}/leaves/{path}/{part}", array)


# -- Hypothesis property ---------------------------------------------------------------------------------------
# Leaf dtypes by position: every leaf complex64, or complex64 alternating with float32; one layout per
# mix, so one compile each: complex64 in nested containers with a vector, a row, a column and a 0-d
# leaf; the mix as a complex matrix beside a float32 vector.
MIXES = {"complex64": ("complex64",), "complex64+float32": ("complex64", "float32")}
_LAYOUT = {"complex64": "size1", "complex64+float32": "dense"}
# Below this norm the library's sum of squares is not accurate to float32: squares of elements under
# ~1e-19 are subnormal and flushed to zero on CPU. Above it the lost part is under 1e-12 relative.
# Trees smaller than that get a threshold above the floor (identity), as in test_clipping.py.
_NORM_FLOOR = 1e-12


@functools.cache  # one strategy per (layout, mix): built anew in every example, it cost a third of the draw
def _tree(template, mix):
    """A tree laid out like the template, leaf i in dtype mix[i % len(mix)]; a complex leaf's real and
    imaginary parts are float32 arrays (any magnitude up to 1e6, zeros, never subnormal)."""
    layout = strategies.TEMPLATES[template]
    shapes = strategies.leaf_shapes(layout)
    dtypes = [mix[i % len(mix)] for i in range(len(shapes))]
    # A complex leaf's parts are one float32 draw with a leading axis of 2 (cheaper than two draws).
    parts = [strategies.array((2, *s) if d == "complex64" else s) for s, d in zip(shapes, dtypes)]

    def assemble(values):
        it = iter(zip(values, dtypes))

        def leaf(_shape):
            value, dtype = next(it)
            return (value[0] + 1j * value[1]).astype(np.complex64) if dtype == "complex64" else value

        return strategies.build(layout, leaf)

    return st.tuples(*parts).map(assemble)


@pytest.mark.parametrize("mix", sorted(MIXES))
@given(factor=st.floats(1e-3, 1e3).filter(lambda f: abs(f - 1.0) > 1e-3), data=st.data())
def test_property_complex_clip(check, mix, factor, data):
    """Any complex64 (or complex64 + float32) tree: the norms match the float64 sqrt(sum |g|^2); every leaf
    keeps its dtype and is min(1, M/norm) times its gradient, real and imaginary parts; the clipped norm is
    at most M. M is drawn relative to the norm (0.001x to 1000x), so both sides of the threshold are
    exercised; at 1.1x the norm or more the update passes through bit for bit."""
    grads = data.draw(_tree(_LAYOUT[mix], MIXES[mix]), label="grads")
    norm = _norm64(grads)
    max_norm = factor * norm if norm >= _NORM_FLOOR else _NORM_FLOOR * (1.0 + factor)
    clipped, norms = jax.device_get(_clip_and_norms(grads, max_norm))
    _check_clip(check, grads, clipped, norms, max_norm)
    if max_norm >= 1.1 * norm:  # unambiguously below the threshold, whatever the float32 rounding of the norm
        for g, c in zip(jax.tree.leaves(grads), jax.tree.leaves(clipped)):
            for part_c, part_g in zip(_parts(c), _parts(g)):
                check.identical("identity below the threshold", part_c, part_g)


@pytest.mark.needs(platforms.FLOAT64, platforms.COMPLEX128)
def test_complex128_with_x64(check):
    """With x64 enabled, a complex128 leaf beside a float64 one: the norm is float64 and equals
    sqrt(sum |g|^2) within the float64 reference tolerance; clipping keeps complex128; dtypes golden."""
    with jax.enable_x64(True):
        grads = {"a": jnp.array([3 + 4j, 1 - 2j], jnp.complex128), "b": jnp.array([1.0, 2.0], jnp.float64)}
        clipped, norms = jax.device_get(_clip_and_norms(grads, 1.0))  # its own compile: x64 is part of the key
    check.golden_fact("complex/x64/dtypes", {"clipped": {k: str(v.dtype) for k, v in sorted(clipped.items())},
                                             "norms": {n: str(np.asarray(v).dtype) for n, v in norms.items()}})
    for name, value in norms.items():
        check.reference(f"{name} = sqrt(35)", np.asarray(value), np.array(np.sqrt(35.0)))
    a = np.array([3 + 4j, 1 - 2j]) / np.sqrt(35.0)
    check.reference("clipped complex128 real part", clipped["a"].real, a.real)
    check.reference("clipped complex128 imaginary part", clipped["a"].imag, a.imag)
    check.reference("clipped float64 leaf", clipped["b"], np.array([1.0, 2.0]) / np.sqrt(35.0))
