"""Host drift: golden values that differ from their recording on this machine within the host noise measured when
they were recorded (harness.host_emulation), and how the other entries are judged there instead.

A value the baseline computes differently here only because this host differs from the recording's says nothing
of the bump; judged against the recording, the candidate (on the same host) would differ the same way, and a
change of the candidate could hide inside the host's allowance. So wherever the baseline drifted (or the other
entry did), that entry's values are judged against this machine's baseline values instead, at the golden ulps
(and, for a value of your own on another stack, the numerical noise it may move by there, as against its
recording): a differential comparison on one host, as strict as a golden one. Two limits, each said where it
applies: reports of two different hosts (a CI fan-out's runners) are never set against each other, so each stays
judged within its host's allowance of the recording; and a key compared more than once in a check (a property's
examples) keeps no values to set against each other, so it stays judged as its run judged it.

Pure Python: the host judges reports without NumPy (harness.verdict.bits counts ulps the same way).
"""

from __future__ import annotations

import dataclasses
import math

from harness.model.enums import CheckKind, Outcome
from harness.model.float_formats import SIGNIFICAND_BITS, json_float, number, smallest_normal, spacing
from harness.model.host import Dimension, difference_text
from harness.model.report import CheckRecord, Comparison, Report, Tolerance, WorstElement


def drifted(check: CheckRecord) -> list[Comparison]:
    """The check's golden comparisons judged as host drift (outside their ulps, within the host's noise)."""
    return [c for c in check.comparisons if c.host is not None and c.host.drifted]


def same_host(base: Report, other: Report) -> bool:
    """Whether both reports ran on the same host, its cores included (a differential comparison holds only there)."""
    cores = [r.environment.machine.get("cpu_count") for r in (base, other)]
    return base.environment.host is not None and base.environment.host == other.environment.host \
        and cores[0] == cores[1]


def _allowed(x: float, s: float, tolerance: Tolerance, ulp_dtype: str, noise: float) -> float:
    """What element `x` of the baseline allows the other entry's: the golden ulps at max(|x|, its scale), the
    smallest normal below it (XLA on CPU flushes subnormals to zero), the numerical noise where it applies."""
    if not math.isfinite(x):
        return 0.0
    allowed = tolerance.ulps * spacing(max(abs(x), abs(s)), ulp_dtype)
    if 0 < abs(x) < smallest_normal(ulp_dtype):
        allowed = max(allowed, smallest_normal(ulp_dtype))
    return max(allowed, noise)


def differential(base: Comparison, other: Comparison) -> Comparison | None:
    """`other` judged against `base`'s values (this machine's baseline), its fields measured against them; None
    where the two cannot be set value for value (a shape or dtype changed: the change is said as it was)."""
    b, o = base.values, other.values
    if (b is None or o is None or b.values is None or o.values is None or b.dtype != o.dtype or b.shape != o.shape
            or not isinstance(other.tolerance, Tolerance) or other.dtype not in SIGNIFICAND_BITS):
        return None
    ulp_dtype = other.tolerance.ulp_dtype or other.dtype
    judged = base.host or other.host  # its operand scale, when it had one (no host judgement: none was given)
    scale = (judged.scale if judged else None) or [0.0] * len(b.values)
    noise = (other.host.noise_allowed if other.host is not None else None) or 0.0
    bad, worst, largest_abs, largest_rel, largest_used = 0, None, 0.0, 0.0, 0.0
    for i, (x, y, s) in enumerate(zip(map(number, b.values), map(number, o.values), scale)):
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        error = abs(y - x) if math.isfinite(x) and math.isfinite(y) else math.inf
        allowed = _allowed(x, s, other.tolerance, ulp_dtype, noise)
        used = error / allowed if allowed else math.inf
        largest_abs, largest_used = max(largest_abs, error), max(largest_used, used)
        largest_rel = max(largest_rel, error / abs(x) if x and math.isfinite(x) else math.inf)
        if error > allowed:
            bad += 1
            if worst is None or used > worst[0]:
                worst = (used, i, x, y)
    measured = dict(max_abs_err=largest_abs, max_rel_err=largest_rel, mismatched=bad,
                    tolerance_used=min(largest_used, 1e9), allowed_ulps=None, allowed_rel=None, allclose=None)
    if worst is None:
        return dataclasses.replace(other, passed=True, message="", worst=None, **measured)
    _, i, x, y = worst
    ulps = abs(y - x) / spacing(x, ulp_dtype) if math.isfinite(x) and math.isfinite(y) else None
    message = (f"{other.label} [{other.dtype}, shape {b.shape}]: {bad} of {len(b.values)} elements outside "
               f"{other.tolerance.ulps:g} ulp of this machine's baseline values (host drift: the recording is "
               f"another host's); max abs err {largest_abs:.3g}; worst at element {i}: baseline {x!r}, "
               f"observed {y!r}" + (f" ({ulps:.3g} ulp)" if ulps is not None else ""))
    return dataclasses.replace(other, passed=False, message=message, expected=b.values,
                               worst=WorstElement(_index(i, b.shape), json_float(x), json_float(y), ulps), **measured)


def _index(flat: int, shape: list[int]) -> list[int]:
    index = []
    for size in reversed(shape):
        flat, at = divmod(flat, size) if size else (flat, 0)
        index.append(at)
    return index[::-1]


def outcome_of(other: CheckRecord, comparisons: list[Comparison]) -> tuple[Outcome, str, str | None]:
    """The check's outcome after its comparisons were judged again: a check its comparisons alone ended (a plain
    test's golden mismatches, nothing raised after them) passes or fails with them; any other keeps its own."""
    failing = [c for c in comparisons if not c.passed]
    ended_by_comparisons = (other.outcome == Outcome.PASSED and other.exception is None) or (
        other.outcome == Outcome.FAILED and other.exception == "ContractFailure" and other.kind != CheckKind.PROPERTY)
    if not ended_by_comparisons:
        return other.outcome, other.message, other.exception
    if not failing:
        return Outcome.PASSED, "", None
    return Outcome.FAILED, "\n".join(c.message for c in failing), "ContractFailure"


def rejudged(base: CheckRecord | None, other: CheckRecord | None, same: bool) -> CheckRecord | None:
    """`other` with every golden comparison that drifted on either side judged against the baseline's values
    (the check's outcome following them, where its comparisons alone ended it), when both ran on the same host
    (`same`); `other` as it is otherwise."""
    if base is None or other is None or not same:
        return other
    labels = {c.label for c in drifted(base)} | {c.label for c in drifted(other)}
    if not labels:
        return other
    before = {c.label: c for c in base.comparisons}
    comparisons = []
    for c in other.comparisons:
        judged = differential(before[c.label], c) if c.label in labels and c.label in before else None
        comparisons.append(judged or c)
    outcome, message, exception = outcome_of(other, comparisons)
    return dataclasses.replace(other, comparisons=comparisons, outcome=outcome, message=message, exception=exception)


NAMED_CHECKS = 3  # the drifted checks the line names, when there are no more


def _counted(report: Report) -> tuple[int, list[str], list[str]]:
    """The drifted values, the checks they are in, and the dimensions they drifted in."""
    checks = [c for c in report.checks if drifted(c)]
    dimensions = sorted({d for c in checks for comparison in drifted(c) for d in comparison.host.dimensions})
    return sum(len(drifted(c)) for c in checks), [c.id for c in checks], dimensions


def line(base: Report, others: list[Report]) -> str | None:
    """The one line that says which entries drifted on their host and how they were judged; None without drift."""
    drifting = [(name, r) for name, r in [("the baseline", base), *((o.entry.name, o) for o in others)]
                if any(drifted(c) for c in r.checks)]
    if not drifting:
        return None
    name, report = drifting[0]
    values, ids, dimensions = _counted(report)
    checks = len(ids)
    said = " and ".join(Dimension(d).said for d in dimensions)
    here = report.environment.host.text() if report.environment.host else "this machine"
    named = f" ({', '.join(ids)})" if checks <= NAMED_CHECKS else ""
    text = (f"host drift: {values} golden value{'s' * (values != 1)} in {checks} check{'s' * (checks != 1)}{named} "
            f"{'differ' if values != 1 else 'differs'} here, on {here}{'' if report is base else f' ({name})'}, "
            f"from {'their' if values != 1 else 'its'} recording within the host noise measured when recorded "
            f"({said} {'differ' if len(dimensions) > 1 else 'differs'} from the recording host's)")
    apart = [o.entry.name for o in others if not same_host(base, o)]
    if apart:
        text += f"; {', '.join(apart)} ran on another host than the baseline: judged against the recording, within that noise"
    if len(apart) < len(others):
        text += "; the other entries on this host are judged against its baseline values there"
    return text


def host_row(base: Report) -> str | None:
    """'this host: AMD EPYC (...; OpenBLAS Haswell); golden values recorded on AMD EPYC (...; OpenBLAS SkylakeX):
    BLAS kernel Haswell here, SkylakeX where recorded', or that it is the recording's host; where a team's values and
    the built-in contracts' were recorded on different hosts, each host labelled with whose ('golden values recorded:
    the built-in contracts' on AMD EPYC (...): ...; yours on this host'); None where the report names no host."""
    here = base.environment.host
    if here is None:
        return None
    recorded = {h.text(): h for h in (base.golden_hosts or {}).values()}
    text = f"this host: {here.text()}"
    if not recorded:
        return text
    whose = _whose(base)
    if len(set(whose.values())) > 1:  # a team's values and the built-in contracts': each host says whose
        return text + "; golden values recorded: " + "; ".join(
            f"{label} on {'this host' if recorded[name] == here else f'{name}: {difference_text(recorded[name], here)}'}"
            for name, label in whose.items())
    if list(recorded.values()) == [here]:
        return text + ", where the golden values were recorded"
    parts = [name if host == here else f"{name}: {difference_text(host, here)}" for name, host in recorded.items()]
    return text + "; golden values recorded on " + "; ".join(parts)


YOURS, BUILTIN = "yours", "the built-in contracts'"  # a team's copy of them included


def _whose(base: Report) -> dict[str, str]:
    """Each recording host (by its text): whose golden values it recorded, the project's own families' (yours) or the
    built-in families' the tool ships (a host that recorded both says both)."""
    own = set(base.own_families or ())
    kinds: dict[str, set[str]] = {}
    for family, host in (base.golden_hosts or {}).items():
        kinds.setdefault(host.text(), set()).add(YOURS if family in own else BUILTIN)
    return {name: " and ".join(k for k in (YOURS, BUILTIN) if k in found) for name, found in kinds.items()}
