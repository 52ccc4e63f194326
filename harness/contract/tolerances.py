"""The tolerance policy: one table, keyed by comparison kind and dtype, with the reason for each number.

Two kinds of comparison use a tolerance:

* ``golden``: a value recomputed by the stack under test against the value recorded from the
  baseline stack. Same formula, same inputs, same dtype: only a different compiler or kernel
  can move it, by a few units in the last place (ulp). The bound is a handful of ulps of the
  dtype, so a real behaviour change (a different formula, an extra step) is far outside it.
* ``equivalence``: two ways of computing the same thing in the stack under test (k microbatches
  against one step on their mean): they differ only in rounding order.
* ``reference``: a value computed in the leaf dtype against an independent NumPy float64
  closed form. The low-precision side rounds each of a few operations, so the bound is a few
  tens of ulps of the dtype, plus an absolute floor of the same order for values near zero.

Exact contracts (counters, the zeros MultiSteps emits between steps, error types, dtypes,
shapes, tree structure) are not in this table: they are compared with ``==``.

Per-check overrides live in ``OVERRIDES``, each with its reason. Reports copy the tolerance
actually used for every comparison.
"""

from __future__ import annotations

import dataclasses

from harness.model.enums import ComparisonKind
from harness.model.report import Tolerance, ToleranceRule

GOLDEN, EQUIVALENCE, REFERENCE = ComparisonKind.GOLDEN, ComparisonKind.EQUIVALENCE, ComparisonKind.REFERENCE

# Unit roundoff u (half an ulp at 1.0) of each floating dtype; bounds below are multiples of u.
# The one table of floating dtypes: measure, golden and the contract tests read it from here.
UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11}
FLOAT_DTYPES = tuple(UNIT_ROUNDOFF)


def is_float_dtype(dtype) -> bool:
    """A floating dtype, bfloat16 (which NumPy does not call floating) included."""
    name = str(dtype)
    return name in UNIT_ROUNDOFF or (name != "bfloat16" and getattr(dtype, "kind", "") == "f")


def policy_dtype(dtype) -> str:
    """The dtype whose row of the policy applies: a float dtype itself, float64 for anything else."""
    return str(dtype) if str(dtype) in UNIT_ROUNDOFF else "float64"


@dataclasses.dataclass(frozen=True)
class Rule:
    """A tolerance and the reason for it."""

    tolerance: Tolerance
    why: str


_GOLDEN_ULPS = 8
# A few dozen rounded operations in float32/float64. A 16-bit format has so few bits that the same
# count would allow a 25% error (64 * 2**-8) and hide real faults, so 16-bit references get 8.
_REFERENCE_ULPS_BY_DTYPE = {"float64": 64, "float32": 64, "bfloat16": 8, "float16": 8}

POLICY: dict[tuple[ComparisonKind, str], Rule] = {}
for _dtype, _eps in UNIT_ROUNDOFF.items():
    _REFERENCE_ULPS = _REFERENCE_ULPS_BY_DTYPE[_dtype]
    POLICY[(GOLDEN, _dtype)] = Rule(
        Tolerance(rtol=_GOLDEN_ULPS * _eps, atol=_GOLDEN_ULPS * _eps),
        why=f"{_GOLDEN_ULPS} u (unit roundoff) of {_dtype}: a recompiled kernel may reorder a reduction; "
        "a changed formula moves values far more",
    )
    POLICY[(EQUIVALENCE, _dtype)] = Rule(
        Tolerance(rtol=_REFERENCE_ULPS * _eps, atol=_REFERENCE_ULPS * _eps),
        why=f"{_REFERENCE_ULPS} u (unit roundoff) of {_dtype}: two library paths that are equal in exact arithmetic "
        "(k microbatches vs their mean) round in a different order",
    )
    POLICY[(REFERENCE, _dtype)] = Rule(
        Tolerance(rtol=_REFERENCE_ULPS * _eps, atol=_REFERENCE_ULPS * _eps),
        why=f"{_REFERENCE_ULPS} u (unit roundoff) of {_dtype}: a few rounded operations against an exact "
        "float64 formula, with the same floor for values near zero",
    )

# (kind, check id) -> Tolerance, for checks whose arithmetic needs a documented exception.
OVERRIDES: dict[tuple[ComparisonKind, str], Rule] = {}

# Global-norm clipping of trees that mix float32 with 16-bit leaves. The norm is
# sqrt(sum over leaves of jnp.sum(leaf**2)), and each leaf's sum of squares is computed and rounded
# in that leaf's dtype: a bfloat16 leaf contributes with a relative error of about 2 ulps of
# bfloat16 (the squares, then the sum rounded to bfloat16), a float16 leaf of float16. The norm
# (returned in float32) and the one factor min(1, M / norm) that multiplies every leaf, float32
# leaves included, therefore carry that 16-bit error: measured up to 1.7e-3 relative on the
# baseline for float32+bfloat16, 64 ulp of float32 being 3.8e-6. Every leaf of such a tree is held
# to the reference tolerance of its lowest-precision dtype, the precision of the norm they share.
for _check, _dtype in (
    ("clipping/test_property_clip[float32+bfloat16]", "bfloat16"),
    ("clipping/test_property_clip[float32+float16]", "float16"),
    ("clipping/test_mixed_leaf_dtypes", "bfloat16"),  # float32, bfloat16 and float16 leaves
):
    OVERRIDES[(REFERENCE, _check)] = Rule(
        POLICY[(REFERENCE, _dtype)].tolerance,
        why=f"float32 leaves share a global norm whose {_dtype} leaves' sums of squares are rounded in "
        f"{_dtype}: the norm and the one clip factor are only {_dtype}-accurate, so every leaf gets "
        f"the {_dtype} reference tolerance ({_REFERENCE_ULPS_BY_DTYPE[_dtype]} u of {_dtype})",
    )


class UnknownTolerance(KeyError):
    pass


def lookup(kind: ComparisonKind, dtype: str, check_id: str | None = None) -> Tolerance:
    """The tolerance for one comparison; an override for the check wins over the dtype default."""
    if check_id is not None and (kind, check_id) in OVERRIDES:
        return OVERRIDES[(kind, check_id)].tolerance
    try:
        return POLICY[(kind, str(dtype))].tolerance
    except KeyError:
        raise UnknownTolerance(
            f"no tolerance for a {kind} comparison in dtype {dtype}; add one to harness/contract/tolerances.py"
        ) from None


def table() -> list[ToleranceRule]:
    """The whole policy, for the report and the README."""
    rows = [ToleranceRule(k, r.tolerance.rtol, r.tolerance.atol, r.why, dtype=d) for (k, d), r in sorted(POLICY.items())]
    rows += [ToleranceRule(k, r.tolerance.rtol, r.tolerance.atol, r.why, check=c)
             for (k, c), r in sorted(OVERRIDES.items())]
    return rows
