"""What the activations family's contracts share: the elementwise activations' table (function, float64
reference of its documented formula, of its derivative, and the operands' scale where the formula cancels),
the grid they are judged on, the functions looked up at call time (so a patched or mutated jax is seen),
and which of jax.nn's functions flax.nnx re-exports (derived from the installed flax, never listed)."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Callable

import numpy as np

from harness.builtin.reference import activations as ref

DTYPES = ["float32", "bfloat16", "float16"]

# The kinks (0 for relu, leaky_relu, elu, celu, selu; ±1 hard_tanh, sparse_plus, sparse_sigmoid; ±3 hard_sigmoid,
# hard_silu; 6 relu6), -0.0, points one step either side of them, and magnitudes where e^x overflows or a sigmoid saturates (±20, ±100, ±1e4:
# finite in float16 too).
GRID = np.array([-1e4, -100.0, -20.0, -6.0, -3.5, -3.0, -2.75, -1.25, -1.0, -0.75, -0.5, -0.015625, -0.0, 0.0,
                 0.015625, 0.5, 0.75, 1.0, 1.25, 2.75, 3.0, 3.5, 5.5, 6.0, 6.5, 20.0, 100.0, 1e4])

@dataclasses.dataclass(frozen=True)
class Scale:
    """The operands' magnitude (float64, elementwise) where the computation cancels, and why."""

    of: Callable
    why: str


@dataclasses.dataclass(frozen=True)
class Activation:
    """One row: jax.nn.<name>(x, **kwargs) against `value` and its derivative against `grad` (float64)."""

    case: str  # the check's parameter id
    name: str  # the jax.nn function
    value: Callable
    grad: Callable
    kwargs: tuple[tuple[str, object], ...] = ()  # keyword arguments, one non-default value each
    value_scale: Scale | None = None
    grad_scale: Scale | None = None
    grad_overflows: Callable | None = None  # (x64, dtype) -> where the stated derivative's intermediate overflows
    value_overflows: Callable | None = None  # (x64, dtype) -> where the formula's intermediate overflows
    # (kink, lo, hi): a point where the function has no derivative; the library's is golden there and must be a
    # subgradient, between the one-sided derivatives lo and hi
    kinks: tuple[tuple[float, float, float], ...] = ()

    def call(self, nn, x):
        return getattr(nn, self.name)(x, **dict(self.kwargs))


def _row(case, name, value, grad, kwargs=(), value_scale=None, grad_scale=None, grad_overflows=None,
         value_overflows=None, kinks=()):
    kw = tuple(kwargs)
    bound = {k: v for k, v in kw if k != "approximate"}
    return Activation(case, name, lambda x: value(x, **bound), lambda x: grad(x, **bound), kw, value_scale,
                      grad_scale, grad_overflows, value_overflows, tuple(kinks))


def _expm1_scale(factor):
    # Measured: elu's derivative at x = -20 is 0 in float32 for alpha e^-20 = 2e-9: it is formed from the value as
    # alpha (expm1(x) + 1) (JAX's rule for expm1), and expm1(-20) rounds to -1.
    return Scale(lambda x: np.full_like(x, factor), "the derivative alpha e^x is formed as alpha (expm1(x) + 1): terms "
                 "of size alpha that cancel for negative x")


_ONE_MINUS_S = Scale(ref.sigmoid, "s (1 - s): 1 - s cancels at 1's scale for positive x (measured: 0 in float32 at "
                     "x = 20 for 2e-9), times s")
_ONE_MINUS_T2 = Scale(lambda x: 1.0 + np.tanh(x) ** 2, "1 - tanh^2 cancels at 1's scale for large |x|")
_QUOTIENT = Scale(lambda x: 1.0 / (np.abs(x) + 1.0) + np.abs(x) / (np.abs(x) + 1.0) ** 2,
                  "the quotient rule's 1 / (|x| + 1) - |x| / (|x| + 1)^2 cancels for large |x| (measured: 940 float32 "
                  "ulps at -1e4, under 1 at the terms' size)")
_GELU = Scale(ref.gelu_approx_scale, "x / 2 (1 + tanh(...)): 1 + tanh cancels for negative x")
_GELU_GRAD = Scale(ref.gelu_approx_grad_scale, "(1 + t) / 2 and the tanh' term cancel for negative x")
_GELU_EXACT_GRAD = Scale(ref.gelu_exact_grad_scale, "Phi(x) + x phi(x) cancels for negative x")
_SILU_GRAD = Scale(ref.silu_grad_scale, "s(x) + x s'(x) cancels for negative x")
_MISH_GRAD = Scale(ref.mish_grad_scale, "tanh(softplus(x)) + x s(x) (1 - tanh^2): the terms cancel near the "
                   "derivative's zero (x = -1.19), and 1 - tanh^2 at 1's scale for positive x")


def _squareplus_scales(b):
    why = "x + sqrt(x^2 + b) cancels for negative x (measured: 0 in float32 at x = -1e4 for b / 4|x| = 1e-4)"
    return {"value_scale": Scale(lambda x: ref.squareplus_scale(x, b), why),
            "grad_scale": Scale(lambda x: ref.squareplus_grad_scale(x, b), "1 + x / sqrt(x^2 + b) cancels for "
                                "negative x")}


def _ones(x):
    return np.ones_like(x)


def _square_overflows(x, dtype):
    """Where x^2 exceeds float16's largest finite value (|x| >= 256): measured, gelu's derivative is NaN there
    (3 x^2 overflows to inf, times tanh' = 0), squareplus is inf and its derivative 1/2 (x + sqrt(inf), x / inf)."""
    return x * x > float(np.finfo(np.float16).max) if dtype == "float16" else np.zeros(x.shape, bool)


def _denominator_overflows(x, dtype):
    """Where (|x| + 1)^2 exceeds float16's largest finite value: measured, soft_sign's derivative is then
    1 / (|x| + 1), its quotient rule's second term 0 (|x| / inf)."""
    return _square_overflows(np.abs(x) + 1.0, dtype)


ROWS: tuple[Activation, ...] = (
    _row("identity", "identity", lambda x: x, lambda x: _ones(x)),
    _row("relu", "relu", lambda x: np.maximum(x, 0.0), ref.relu_grad),
    _row("relu6", "relu6", ref.relu6, ref.relu6_grad),
    _row("hard_sigmoid", "hard_sigmoid", ref.hard_sigmoid, ref.hard_sigmoid_grad),
    _row("hard_silu", "hard_silu", ref.hard_silu, ref.hard_silu_grad),
    _row("hard_swish", "hard_swish", ref.hard_silu, ref.hard_silu_grad),
    _row("hard_tanh", "hard_tanh", ref.hard_tanh, ref.hard_tanh_grad),
    _row("leaky_relu", "leaky_relu", ref.leaky_relu, ref.leaky_relu_grad),
    _row("leaky_relu/0.25", "leaky_relu", ref.leaky_relu, ref.leaky_relu_grad, [("negative_slope", 0.25)]),
    _row("elu", "elu", ref.elu, ref.elu_grad, grad_scale=_expm1_scale(1.0)),
    _row("elu/0.5", "elu", ref.elu, ref.elu_grad, [("alpha", 0.5)], grad_scale=_expm1_scale(0.5)),
    _row("celu", "celu", ref.celu, ref.celu_grad, grad_scale=_expm1_scale(1.0)),
    _row("celu/2", "celu", ref.celu, ref.celu_grad, [("alpha", 2.0)], grad_scale=_expm1_scale(1.0)),
    _row("selu", "selu", ref.selu, ref.selu_grad, grad_scale=_expm1_scale(ref.SELU_SCALE * ref.SELU_ALPHA)),
    _row("gelu", "gelu", ref.gelu_approx, ref.gelu_approx_grad, value_scale=_GELU, grad_scale=_GELU_GRAD,
         grad_overflows=_square_overflows),
    _row("gelu/exact", "gelu", ref.gelu_exact, ref.gelu_exact_grad, [("approximate", False)],
         grad_scale=_GELU_EXACT_GRAD),
    _row("sigmoid", "sigmoid", ref.sigmoid, ref.sigmoid_grad, grad_scale=_ONE_MINUS_S),
    _row("log_sigmoid", "log_sigmoid", ref.log_sigmoid, lambda x: ref.sigmoid(-x)),
    _row("silu", "silu", ref.silu, ref.silu_grad, grad_scale=_SILU_GRAD),
    _row("swish", "swish", ref.silu, ref.silu_grad, grad_scale=_SILU_GRAD),
    _row("softplus", "softplus", ref.softplus, ref.sigmoid),
    _row("soft_sign", "soft_sign", ref.soft_sign, ref.soft_sign_grad, grad_scale=_QUOTIENT,
         grad_overflows=_denominator_overflows),
    _row("tanh", "tanh", np.tanh, ref.tanh_grad, grad_scale=_ONE_MINUS_T2),
    # jax.nn's elementwise functions flax.nnx does not re-export
    _row("mish", "mish", ref.mish, ref.mish_grad, grad_scale=_MISH_GRAD),
    _row("squareplus", "squareplus", ref.squareplus, ref.squareplus_grad, value_overflows=_square_overflows,
         grad_overflows=_square_overflows, **_squareplus_scales(4.0)),
    _row("squareplus/0.25", "squareplus", ref.squareplus, ref.squareplus_grad, [("b", 0.25)],
         value_overflows=_square_overflows, grad_overflows=_square_overflows, **_squareplus_scales(0.25)),
    _row("sparse_plus", "sparse_plus", ref.sparse_plus, ref.sparse_plus_grad),
    _row("sparse_sigmoid", "sparse_sigmoid", ref.sparse_sigmoid, ref.sparse_sigmoid_grad,
         kinks=((-1.0, 0.0, 0.5), (1.0, 0.0, 0.5))),
)
BY_CASE = {row.case: row for row in ROWS}

# jax.nn's functions flax.nnx re-exports that take more than an elementwise x (test_activations_axes.py).
ALONG_AXES = ("glu", "log_softmax", "logsumexp", "one_hot", "softmax", "standardize")
# jax.nn's functions flax.nnx does not re-export, judged on their own domains (test_activations_logs.py).
OWN_DOMAIN = ("log1mexp", "logmeanexp")


def nn():
    """jax.nn, imported now."""
    import jax.nn

    return jax.nn


def f64(x) -> np.ndarray:
    """The library's input (bfloat16 included: ml_dtypes casts it exactly) as float64."""
    return np.asarray(x, np.float64)


def flax_reexports() -> list[str] | None:
    """The names flax.nnx exports that are jax.nn's own functions (the same objects), sorted; None without flax.
    Imported by name, not by an import statement: the family pins jax.nn, which a team may call without flax, so
    the contract selection must not take it for a flax family (harness/stack/selection/builtin_modules.py)."""
    import jax.nn

    try:
        nnx = importlib.import_module("flax.nnx")
    except ImportError:
        return None
    return sorted(name for name in dir(nnx) if not name.startswith("_") and callable(getattr(nnx, name))
                  and getattr(jax.nn, name, None) is getattr(nnx, name))


def covered() -> list[str]:
    """The jax.nn functions the family's contracts call: the table's and those along axes."""
    return sorted({row.name for row in ROWS} | set(ALONG_AXES) | set(OWN_DOMAIN))


def judge(check, key: str, value, expected, scale: Scale | None = None, x=None) -> None:
    """The value against its float64 reference (in the value's dtype; at the operands' scale, evaluated at the
    inputs x, where it cancels) and golden."""
    __tracebackhide__ = True
    value = np.asarray(value)
    at = None if scale is None else scale.of(x)
    why = None if scale is None else scale.why
    check.reference(key, value, np.asarray(expected, np.float64), scale=at, why=why)
    check.golden(key, value, scale=at, why=why)  # a compiler's few ulps of the operands: loss_checks.judge says why
