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


@dataclasses.dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    why: str

    def as_dict(self) -> dict:
        return {"rtol": self.rtol, "atol": self.atol}


# Unit roundoff (half an ulp at 1.0) of each floating dtype.
_EPS = {"float64": 2.0**-53, "float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11}

_GOLDEN_ULPS = 8
_REFERENCE_ULPS = 64

POLICY: dict[tuple[str, str], Tolerance] = {}
for _dtype, _eps in _EPS.items():
    POLICY[("golden", _dtype)] = Tolerance(
        rtol=_GOLDEN_ULPS * _eps,
        atol=_GOLDEN_ULPS * _eps,
        why=f"{_GOLDEN_ULPS} ulp of {_dtype}: a recompiled kernel may reorder a reduction; "
        "a changed formula moves values far more",
    )
    POLICY[("equivalence", _dtype)] = Tolerance(
        rtol=_REFERENCE_ULPS * _eps,
        atol=_REFERENCE_ULPS * _eps,
        why=f"{_REFERENCE_ULPS} ulp of {_dtype}: two library paths that are equal in exact arithmetic "
        "(k microbatches vs their mean) round in a different order",
    )
    POLICY[("reference", _dtype)] = Tolerance(
        rtol=_REFERENCE_ULPS * _eps,
        atol=_REFERENCE_ULPS * _eps,
        why=f"{_REFERENCE_ULPS} ulp of {_dtype}: a few rounded operations against an exact "
        "float64 formula, with the same floor for values near zero",
    )

# (kind, check id) -> Tolerance, for checks whose arithmetic needs a documented exception.
OVERRIDES: dict[tuple[str, str], Tolerance] = {}


class UnknownTolerance(KeyError):
    pass


def lookup(kind: str, dtype: str, check_id: str | None = None) -> Tolerance:
    """The tolerance for one comparison; an override for the check wins over the dtype default."""
    if check_id is not None and (kind, check_id) in OVERRIDES:
        return OVERRIDES[(kind, check_id)]
    try:
        return POLICY[(kind, str(dtype))]
    except KeyError:
        raise UnknownTolerance(
            f"no tolerance for a {kind} comparison in dtype {dtype}; add one to harness/tolerances.py"
        ) from None


def table() -> list[dict]:
    """The whole policy, for the report and the README."""
    rows = [
        {"kind": k, "dtype": d, "rtol": t.rtol, "atol": t.atol, "why": t.why}
        for (k, d), t in sorted(POLICY.items())
    ]
    rows += [
        {"kind": k, "check": c, "rtol": t.rtol, "atol": t.atol, "why": t.why}
        for (k, c), t in sorted(OVERRIDES.items())
    ]
    return rows
