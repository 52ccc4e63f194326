"""A statement of a contract that a release broke, kept as that release's behaviour.

A check states what a value must be: a float64 formula (`reference`), a literal (`exact`, `identical`), the
agreement of two library paths (`agree`), an inequality (`bound`). When a new baseline breaks one and the
recording accepts changes (`nox -s golden -- --accept-changes`, which `nox -s accept` runs), the values the
release computed are recorded in the family's golden file as a departure from the statement, beside its label,
how far they were from it and the stack they were recorded on. Later runs judge the statement against those
values instead of the formula, and say that the check departs from it; a release on which the statement holds
again is a change (an improvement), never silent. harness.contract.departures records and judges them; the
verdict and accept show them. Plain data: both sides of the harness read it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.model.codec import from_json, to_json
from harness.model.enums import ComparisonKind
from harness.model.fields import optional

KEY = "departure/"  # a departure's golden key: departure/<check id>/<statement label>, "#n" for its n-th repeat
FIELD = "departure"  # the golden entry's field holding the Departure, beside the values the release computed
# What each kind of statement holds the value against, in a reviewer's words.
STATED = {ComparisonKind.REFERENCE: "float64 formula", ComparisonKind.EXACT: "value",
          ComparisonKind.EQUIVALENCE: "agreement of two library paths", ComparisonKind.BOUND: "bound",
          ComparisonKind.ERROR_CONTRACT: "run to its end without an exception"}  # (harness.contract.raised)
IDENTITY = "identical:"  # the label of a bit-for-bit identity of two library paths (check.identical): exact kind
IDENTITY_STATED = "bit-for-bit identity of two library paths"


def stated(departure: Departure) -> str:
    """What the statement holds the value to, in words: an identity of two paths (jit vs eager) is no formula and no
    recorded value: on a platform that breaks it, the two paths compute differently."""
    if departure.statement.startswith(IDENTITY):
        return IDENTITY_STATED
    return STATED.get(departure.kind, "statement")


def breaks_an_identity(departure: Departure) -> bool:
    """Whether the departure is of two library paths that must agree (an identity or an agreement), not of a
    formula, a value or a bound: the platform computes one path otherwise than the other."""
    return departure.statement.startswith(IDENTITY) or departure.kind == ComparisonKind.EQUIVALENCE


@dataclasses.dataclass(frozen=True)
class DepartureSize:
    """How far the release's values were from the statement when its departure was recorded."""

    outside: int  # elements outside the statement's allowance (0 for a fact: a whole value)
    elements: int  # elements compared (0 for a fact)
    allowed: str  # the statement's allowance: "64 ulp", "64 ulp at the operands scale", "exact"
    max_abs_err: float | None = optional()  # the largest distance from the statement (absent for facts)
    max_ulps: float | None = optional()  # the worst element's distance in ulps of its dtype, where finite


@dataclasses.dataclass(frozen=True)
class Departure:
    """One statement a release departs from: recorded in a golden file, and carried by the comparison a run judged
    against it (a report's Comparison.departure)."""

    check: str  # the check's id, e.g. optimizers/test_scale_by_muon
    statement: str  # the statement's label, e.g. reference:step 0 update wide
    kind: ComparisonKind  # what the statement holds the value against (reference, exact, equivalence, bound)
    recorded_on: dict[str, str | None]  # the baseline's versions it was recorded on (report.STACK_VERSION_KEYS)
    size: DepartureSize
    # In a report: true where the statement holds again on this run (the departure is no longer observed: an
    # improvement), false where the run departs as recorded; absent in a golden file.
    holds_again: bool | None = optional()


def key(check: str, label: str, occurrence: int = 1) -> str:
    """The golden key of the `occurrence`-th statement labelled `label` in check `check` (a plain test may
    state one label several times, each with its own values)."""
    return f"{KEY}{check}/{label}" + (f"#{occurrence}" if occurrence > 1 else "")


def entry(departure: Departure, observed: dict[str, Any]) -> dict[str, Any]:
    """The golden entry: the release's values (an array's exact form, or {"fact": ...}) and the departure."""
    return {**observed, FIELD: to_json(departure)}


def of_entry(found: Any) -> Departure | None:
    """The departure a golden entry records, or None for any other entry."""
    if not isinstance(found, dict) or not isinstance(found.get(FIELD), dict):
        return None
    return from_json(Departure, found[FIELD])


def in_values(values: dict[str, Any]) -> dict[str, Departure]:
    """Every departure among a golden file's values, by key."""
    return {k: d for k, v in values.items() if k.startswith(KEY) for d in [of_entry(v)] if d is not None}


def stack_text(versions: dict[str, str | None]) -> str:
    """'python 3.12.1, jax 0.12.0.1, jaxlib 0.12.0.1, optax 0.2.8, ...', in the order recorded."""
    return ", ".join(f"{name} {version}" for name, version in versions.items() if version)


def size_text(size: DepartureSize) -> str:
    """'8 of 8 elements outside 64 ulp; max abs err 0.817 (3.43e+06 ulp)', or for a fact 'not the stated value'."""
    if not size.elements:
        if size.allowed.startswith("raises "):  # a check that raised (harness.contract.raised): what it raised
            return size.allowed
        return "not the stated value" if size.allowed == "exact" else f"outside {size.allowed}"
    said = f"{size.outside} of {size.elements} elements outside {size.allowed}"
    if size.max_abs_err is not None:
        said += f"; max abs err {size.max_abs_err:.3g}"
    return said + (f" ({size.max_ulps:.3g} ulp)" if size.max_ulps is not None else "")


def note(departure: Departure) -> str:
    """One line for a reviewer: which statement, since which stack, by how much."""
    return (f"{departure.statement} departs from its stated {stated(departure)} since "
            f"{stack_text(departure.recorded_on)} "
            f"({size_text(departure.size)}): judged against the values recorded then")
