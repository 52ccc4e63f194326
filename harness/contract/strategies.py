"""Hypothesis strategies for gradient pytrees, built on hypothesis.extra.numpy.

Tree layouts come from a fixed set of templates (nested dict/list/tuple, asymmetric shapes such as
(3, 5) beside (5, 3) and (2, 3, 4), scalars, size-1 axes) and only the values vary. A jitted
function is compiled once per layout and dtype, so examples reuse compiled code instead of
paying for a compile each: that is what keeps a thousand examples inside the suite's budget.

The strategies are built once per (layout, dtype, bound, batch) and then reused: a property that calls
pytree() in every example would otherwise build and validate a new strategy tree each time, which cost
about a third of the time spent drawing. A strategy's draws depend only on its definition, so the
examples are the same either way; the all-zero leaf a cached strategy returns is read-only, since every
example now gets that one array.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# Each template maps a path to a leaf shape; build() turns it into the nested container.
TEMPLATES = {
    "dense": {"w": (3, 5), "b": (5,)},
    "asymmetric": {"a": [(3, 5), (5, 3)], "b": {"c": (2, 3, 4), "s": ()}},
    "size1": ((1,), {"k": (1, 4), "v": (4, 1)}, ()),
    "scalar": {"x": ()},
}

# Magnitudes spanning tiny to huge, never subnormal (XLA on CPU flushes those to zero).
_LIMITS = {"float32": 1e6, "bfloat16": 1e4, "float16": 1e3, "float64": 1e6}
_TINY = {"float32": 2.0**-100, "bfloat16": 2.0**-100, "float16": 2.0**-14, "float64": 2.0**-300}
_STORAGE = {"float64": np.float64, "float32": np.float32, "float16": np.float16, "bfloat16": np.float32}


def build(template, leaf):
    """The container shape of `template` with leaf(shape) at every leaf."""
    if isinstance(template, dict):
        return {k: build(v, leaf) for k, v in template.items()}
    if isinstance(template, list):
        return [build(v, leaf) for v in template]
    if isinstance(template, tuple) and all(isinstance(d, int) for d in template):
        return leaf(template)
    return tuple(build(v, leaf) for v in template)


def leaf_shapes(template) -> list[tuple[int, ...]]:
    shapes: list = []
    build(template, lambda s: shapes.append(s) or s)
    return shapes


@functools.cache
def floats(dtype: str = "float32", max_magnitude: float | None = None) -> st.SearchStrategy:
    storage = _STORAGE[dtype]
    limit = float(storage(max_magnitude if max_magnitude is not None else _LIMITS[dtype]))
    width = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 32}[dtype]
    tiny = _TINY[dtype]
    # Zero (either sign) half the time, else a normal value of either sign at least `tiny` in magnitude: one
    # choice per element where a sign times a magnitude took three, in arrays that draw every element.
    nonzero = st.floats(-limit, limit, width=width, allow_subnormal=False).filter(lambda x: abs(x) >= tiny)
    return st.one_of(st.sampled_from([0.0, -0.0]), nonzero)


def array(shape, dtype: str = "float32", max_magnitude: float | None = None) -> st.SearchStrategy:
    return _array(tuple(shape), dtype, max_magnitude)


@functools.cache
def _array(shape: tuple[int, ...], dtype: str, max_magnitude: float | None) -> st.SearchStrategy:
    np_dtype = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    values = hnp.arrays(np_dtype, shape, elements=floats(dtype, max_magnitude))
    zero = np.zeros(shape, np_dtype)
    zero.flags.writeable = False  # one array for every example that draws it
    zeros = st.just(zero)
    return st.one_of(values, zeros)  # an all-zero leaf is a case of its own


def pytree(template, dtype: str = "float32", max_magnitude: float | None = None,
           batch: int | None = None) -> st.SearchStrategy:
    """A pytree of NumPy arrays laid out like `template`; with `batch`, every leaf gets a leading
    axis of that size (n gradients in one draw: cheaper than n draws)."""
    key = (_frozen(template), dtype, max_magnitude, batch)
    if key not in _PYTREES:
        _PYTREES[key] = _pytree(template, dtype, max_magnitude, batch)
    return _PYTREES[key]


_PYTREES: dict[tuple, st.SearchStrategy] = {}


def _frozen(template):
    """A hashable form of a template that tells every container kind apart."""
    if isinstance(template, dict):
        return ("dict", tuple((k, _frozen(v)) for k, v in template.items()))
    if isinstance(template, list):
        return ("list", tuple(_frozen(v) for v in template))
    if all(isinstance(d, int) for d in template):
        return ("shape", tuple(template))
    return ("tuple", tuple(_frozen(v) for v in template))


def _pytree(template, dtype: str, max_magnitude: float | None, batch: int | None) -> st.SearchStrategy:
    shapes = leaf_shapes(template)
    if batch is not None:
        shapes = [(batch, *s) for s in shapes]
    leaves = st.tuples(*[array(s, dtype, max_magnitude) for s in shapes])

    def assemble(values):
        it = iter(values)
        return build(template, lambda _shape: next(it))

    return leaves.map(assemble)


def template_names() -> st.SearchStrategy:
    return st.sampled_from(sorted(TEMPLATES))
