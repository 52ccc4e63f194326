"""The tolerance policy: one table, keyed by comparison kind and dtype, with the reason for each number.

Every float comparison allows k ulps (units in the last place) of each element's own dtype, taken at
that element's expected value: a relative bound that means the same at 1e-6 as at 1e6, in float32
as in bfloat16. Below the dtype's smallest normal the ulp is that of the smallest normal (the
subnormals' fixed spacing). There is no absolute floor, except where the caller names a
cancellation: then the ulps are taken at the operands' magnitude (`scale`, elementwise), and the
comparison records why.

* ``golden``: a value recomputed by the stack under test against the value recorded from the
  baseline stack. Same formula, same inputs, same dtype: only a different compiler or kernel can
  move it, by a few ulps. A real behaviour change (a different formula, an extra step) moves it far
  more.
* ``equivalence``: two library paths equal in exact arithmetic (k microbatches against one step on
  their mean, jit against eager): they differ only in rounding order.
* ``reference``: a value computed in the leaf dtype against an independent NumPy float64 closed
  form: the leaf-dtype side rounds each of a few operations.
* ``bound``: an inequality, value <= limit, with the ulps taken at the limit.

Exact contracts (counters and flags, the zeros MultiSteps emits between steps, a value passed
through or copied without arithmetic, error types, dtypes, shapes, tree structure) are not in this
table: they are compared with ``==``. A float a formula computes is judged in ulps even where the
formula degenerates (a norm of zeros, max_norm <= 0), and golden_exact refuses one.

Every comparison also records the (rtol, atol) with which numpy.testing.assert_allclose reproduces it
(harness.contract.allclose).

Every comparison records its allowance at the loosest element, in ulps and relative to the value;
more than 64 ulps or 1% is allowed only with a named reason (a 16-bit row below, a per-check
override, or a cancellation scale), and tests/integration/test_allowances.py holds the baseline to that.
"""

from __future__ import annotations

import dataclasses
import functools

import ml_dtypes
import numpy as np

from harness.model.enums import ComparisonKind
from harness.model.float_formats import SIGNIFICAND_BITS
from harness.model.report import Tolerance, ToleranceRule

GOLDEN, EQUIVALENCE, REFERENCE, BOUND = (ComparisonKind.GOLDEN, ComparisonKind.EQUIVALENCE, ComparisonKind.REFERENCE,
                                         ComparisonKind.BOUND)

# Unit roundoff u (half an ulp at 1.0) of each floating dtype. The one table of floating dtypes:
# measure, golden and the contract tests read it from here.
UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11}


def is_float_dtype(dtype) -> bool:
    """A floating dtype, bfloat16 (which NumPy does not call floating) included."""
    try:
        return _is_float_dtype(dtype)
    except TypeError:  # unhashable: not a dtype a comparison sees, answered without the cache
        return _is_float_dtype.__wrapped__(dtype)


@functools.cache  # str() of a NumPy dtype costs microseconds, and every comparison asks several times
def _is_float_dtype(dtype) -> bool:
    name = str(dtype)
    return name in UNIT_ROUNDOFF or (name != "bfloat16" and getattr(dtype, "kind", "") == "f")


def policy_dtype(dtype) -> str:
    """The dtype whose row of the policy applies: a float dtype itself, float64 for anything else."""
    return str(dtype) if str(dtype) in UNIT_ROUNDOFF else "float64"


@dataclasses.dataclass(frozen=True)
class Rule:
    """A tolerance and the reason for it; `named` marks an allowance that may exceed 64 ulps or 1%."""

    tolerance: Tolerance
    why: str
    named: bool = False


# Ulps per comparison kind and dtype. 16-bit formats have 8 (bfloat16) or 11 (float16) significant
# bits: one ulp is already 0.4-0.8% (bfloat16) or 0.05-0.1% (float16) of the value.
_GOLDEN_ULPS = {"float64": 8, "float32": 8, "bfloat16": 1, "float16": 2}  # 16-bit: at most 0.8% / 0.2%
_REFERENCE_ULPS = {"float64": 64, "float32": 64, "bfloat16": 8, "float16": 8}
_WHY = {
    GOLDEN: "the baseline's own formula and dtype: only a recompiled kernel (a reordered reduction, a "
            "fused multiply-add) moves it, by a few ulps; a changed formula moves it far more",
    EQUIVALENCE: "two library paths equal in exact arithmetic (k microbatches vs their mean, jit vs eager) "
                 "round in a different order: a few dozen roundings",
    REFERENCE: "a few dozen rounded operations in the leaf dtype against an exact float64 formula",
    BOUND: "an inequality: the few rounded operations of the bounded value, at the limit",
}


def _rule(kind: ComparisonKind, dtype: str) -> Rule:
    ulps = (_GOLDEN_ULPS if kind == GOLDEN else _REFERENCE_ULPS)[dtype]
    largest_relative = ulps * 2.0 ** -SIGNIFICAND_BITS[dtype]  # at the bottom of a binade
    why = f"{ulps} ulp of {dtype} at the value: {_WHY[kind]}"
    named = ulps > 64 or largest_relative > 0.01
    if named:
        why += (f"; in {dtype} each of those roundings is worth an ulp, so {ulps} ulp (up to "
                f"{largest_relative:.2%} of the value)")
    return Rule(Tolerance(ulps=ulps), why=why, named=named)


POLICY: dict[tuple[ComparisonKind, str], Rule] = {
    (kind, dtype): _rule(kind, dtype) for kind in (GOLDEN, EQUIVALENCE, REFERENCE, BOUND) for dtype in UNIT_ROUNDOFF
}

# (kind, check id) -> Rule, for checks whose arithmetic needs a documented exception.
OVERRIDES: dict[tuple[ComparisonKind, str], Rule] = {}

# Global-norm clipping of trees that mix float32 with 16-bit leaves. The norm is
# sqrt(sum over leaves of jnp.sum(leaf**2)), and each leaf's sum of squares is computed and rounded
# in that leaf's dtype: a bfloat16 leaf contributes with a relative error of about 2 ulps of
# bfloat16 (the squares, then the sum rounded to bfloat16), a float16 leaf of float16. The norm
# (returned in float32) and the one factor min(1, M / norm) that multiplies every leaf, float32
# leaves included, therefore carry that 16-bit error: measured up to 1.7e-3 relative on the
# baseline for float32+bfloat16. Every leaf of such a tree is held to the reference ulps of the
# lowest-precision dtype, counted in that dtype's ulps at the leaf's own value.
for _check, _dtype in (
    ("clipping/test_property_clip[float32+bfloat16]", "bfloat16"),
    ("clipping/test_property_clip[float32+float16]", "float16"),
    ("clipping/test_mixed_leaf_dtypes", "bfloat16"),  # float32, bfloat16 and float16 leaves
):
    OVERRIDES[(REFERENCE, _check)] = Rule(
        Tolerance(ulps=_REFERENCE_ULPS[_dtype], ulp_dtype=_dtype),
        why=f"float32 leaves share a global norm whose {_dtype} leaves' sums of squares are rounded in "
        f"{_dtype}: the norm and the one clip factor are only {_dtype}-accurate, so every leaf is held "
        f"to {_REFERENCE_ULPS[_dtype]} ulp of {_dtype} at its value",
        named=True,
    )


# trace and ema with a bfloat16 accumulator: decay * accumulator is a bfloat16 product (a weakly typed
# Python float beside a bfloat16 array), which XLA on CPU keeps in float32 under jit and eager rounds to
# bfloat16; the float32 update g + decay * accumulator therefore carries up to half a bfloat16 ulp of
# the product. Held to the reference ulps of bfloat16 at the operands' scale (the checks pass scale=).
for _check in ("accumulation/test_trace[plain-acc=bfloat16]", "accumulation/test_trace[nesterov-acc=bfloat16]",
               "accumulation/test_ema[debias-acc=bfloat16]", "accumulation/test_ema[biased-acc=bfloat16]"):
    OVERRIDES[(REFERENCE, _check)] = Rule(
        Tolerance(ulps=_REFERENCE_ULPS["bfloat16"], ulp_dtype="bfloat16"),
        why="decay * a bfloat16 accumulator is a bfloat16 product (rounded eagerly, kept in float32 by XLA "
        "under jit): the float32 update is only bfloat16-accurate in that term, so it is held to "
        f"{_REFERENCE_ULPS['bfloat16']} ulp of bfloat16 at the operands' scale",
        named=True,
    )


# Several optimizer steps in bfloat16 params and gradients (the state's layout contracts): every operation
# of an update (g * g, a sum, eps, sqrt, a quotient, momentum * trace, lr * ...) is a bfloat16 op, and XLA on
# CPU either rounds each intermediate to bfloat16 or keeps float32 between the ops of one fusion, depending
# on the host (measured on the pinned baseline: a host with avx512_bf16 rounds every op; the host that
# recorded the golden values kept float32 inside the fusion; `--xla_cpu_max_isa` does not change it). Each
# skipped rounding moves a result by up to half an ulp; measured between the two hosts: 2 ulp for adagrad's
# updates, and 4 ulp at the value for sgd's momentum trace, a cancellation held at its operands' scale
# instead (under 1 ulp there). Held to 4 ulp: twice the measured 2. rmsprop and lars (more ops, lars's norms
# sum a leaf) are held the same by analogy: within 1 ulp on both hosts measured.
for _case in ("sgd/momentum", "rmsprop/momentum-bc", "adagrad", "lars"):
    OVERRIDES[(GOLDEN, f"optimizers/test_bfloat16_states[{_case}/params=bfloat16]")] = Rule(
        Tolerance(ulps=4, ulp_dtype="bfloat16"),
        why="an update's bfloat16 intermediates are rounded or kept in float32 by XLA depending on the host "
        "(avx512_bf16 hosts round every op): measured 2 ulp of bfloat16 apart between hosts, held to twice "
        "that, 4 ulp (up to 3.1% of the value)",
        named=True,
    )


# (platform, kind, check id) -> Rule: a platform's own numerics, each measured on that platform, applied only
# there (the CPU's rules above stay as they are). Measured on a TPU v5e, jax 0.10.2, optax 0.2.6 (docs/accelerators.md):
PLATFORM_OVERRIDES: dict[tuple[str, ComparisonKind, str], Rule] = {}
# Muon's Newton-Schulz iteration is five rounds of matrix products; a TPU multiplies float32 operands at JAX's
# default precision in one bfloat16 pass, so the orthogonalised update is only bfloat16-accurate: measured 3.3,
# 8.3 and 1.9 ulp of bfloat16 at the operands' scale (2.13e5, 5.44e5 and 1.24e5 float32 ulp) in the three
# checks' first comparisons. Held to 17 ulp of bfloat16 at that scale: twice the largest measured.
for _check in ("optimizers/test_scale_by_muon", "optimizers/test_muon[muon/derived]",
               "optimizers/test_muon[muon/given]"):
    PLATFORM_OVERRIDES[("tpu", REFERENCE, _check)] = Rule(
        Tolerance(ulps=17, ulp_dtype="bfloat16"),
        why="on a TPU, float32 matrix products at JAX's default precision take one bfloat16 pass: Muon's "
        "Newton-Schulz products are bfloat16-accurate, measured up to 8.3 ulp of bfloat16 at the operands' "
        "scale on a v5e; held to twice that, 17 ulp of bfloat16",
        named=True,
    )
# warmup_cosine near the end of its decay is peak * (1 + cos(pi t)) / 2 with cos(pi t) near -1: the sum cancels,
# and the chip's cos differs between the fused jit program and eager op-by-op evaluation by an ulp or so of cos,
# which the cancellation makes 256 ulp of float32 at the value (measured: 2.98e-8 at 0.00125). Held to 512.
PLATFORM_OVERRIDES[("tpu", EQUIVALENCE, "schedules/test_jit_matches_eager[warmup_cosine]")] = Rule(
    Tolerance(ulps=512),
    why="on a TPU, cos differs between jit and eager by about an ulp of cos; 1 + cos(pi t) cancels near the end "
    "of the decay: measured 256 ulp of float32 at the value on a v5e, held to twice that, 512",
    named=True,
)


class UnknownTolerance(KeyError):
    pass


def lookup(kind: ComparisonKind, dtype: str, check_id: str | None = None, platform: str | None = None) -> Rule:
    """The rule for one comparison; an override for the check on its platform, then one for the check, win over
    the dtype default."""
    if check_id is not None and (platform, kind, check_id) in PLATFORM_OVERRIDES:
        return PLATFORM_OVERRIDES[(platform, kind, check_id)]
    if check_id is not None and (kind, check_id) in OVERRIDES:
        return OVERRIDES[(kind, check_id)]
    try:
        return POLICY[(kind, str(dtype))]
    except KeyError:
        raise UnknownTolerance(
            f"no tolerance for a {kind} comparison in dtype {dtype}; add one to harness/contract/tolerances.py"
        ) from None


def table() -> list[ToleranceRule]:
    """The whole policy, for the report and the README."""
    rows = [ToleranceRule(k, r.tolerance.ulps, r.why, dtype=d) for (k, d), r in sorted(POLICY.items())]
    rows += [ToleranceRule(k, r.tolerance.ulps, r.why, check=c) for (k, c), r in sorted(OVERRIDES.items())]
    rows += [ToleranceRule(k, r.tolerance.ulps, f"on {p} only: {r.why}", check=c)
             for (p, k, c), r in sorted(PLATFORM_OVERRIDES.items())]
    return rows


def _finfo(dtype: str):
    return ml_dtypes.finfo(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.finfo(dtype)


@functools.cache  # read once per dtype: a comparison asks for them several times
def _spacing(dtype: str) -> tuple[int, int, float]:
    """The dtype's smallest normal exponent, mantissa bits and smallest normal number."""
    info = _finfo(dtype)
    return int(info.minexp), int(info.nmant), float(info.smallest_normal)


def tiny_normal(dtype: str) -> float:
    """The dtype's smallest normal number."""
    return _spacing(dtype)[2]


def ulp(magnitude, dtype: str):
    """The spacing of `dtype` at |magnitude| (elementwise, float64): 2**(exponent - mantissa bits), the
    smallest normal's spacing below it (subnormals, and zero)."""
    minexp, nmant, _ = _spacing(dtype)
    magnitude = np.abs(np.asarray(magnitude, np.float64))
    _, exponent = np.frexp(magnitude)  # magnitude = f * 2**exponent, 0.5 <= f < 1
    exponent = np.where(magnitude > 0, exponent - 1, minexp)
    return np.ldexp(1.0, np.maximum(exponent, minexp) - nmant)
