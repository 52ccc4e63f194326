"""Host drift: golden values that differ from their recording on this machine within the host noise measured when
they were recorded (harness.host_emulation), and how the other entries are judged there instead.

A value the baseline computes differently here only because this host differs from the recording's says nothing
of the bump; judged against the recording, the candidate (on the same host) would differ the same way, and a
change of the candidate could hide inside the host's allowance. So wherever the baseline drifted (or the other
entry did), that entry's values are judged against this machine's baseline values instead, at the same golden
ulps: a differential comparison on one host, exactly as strict as a golden one. When the two reports come from
different hosts (a CI fan-out's runners), no differential holds: each stays judged as its run judged it, and the
line says so.

Pure Python: the host judges reports without NumPy (harness.verdict.bits counts ulps the same way).
"""

from __future__ import annotations

import dataclasses
import math

from harness.model.enums import Outcome
from harness.model.host import Dimension, difference_text
from harness.model.report import CheckRecord, Comparison, Report, Tolerance, WorstElement
from harness.verdict.bits import ulps_between

# dtype -> (mantissa bits, smallest normal exponent): the spacing of its values (harness.contract.tolerances.ulp)
_SPACING = {"float64": (52, -1022), "float32": (23, -126), "bfloat16": (7, -126), "float16": (10, -14)}
_FAILED_BY_CONTRACT = (None, "ContractFailure")  # a check ended by its comparisons, not by raising


def _spacing(magnitude: float, dtype: str) -> float:
    bits, minexp = _SPACING[dtype]
    exponent = math.frexp(magnitude)[1] - 1 if magnitude > 0 else minexp
    return math.ldexp(1.0, max(exponent, minexp) - bits)


def _number(value) -> float:
    return float(value)  # "nan", "inf" and "-inf" are spelled as strings in JSON


def drifted(check: CheckRecord) -> list[Comparison]:
    """The check's golden comparisons judged as host drift (outside their ulps, within the host's noise)."""
    return [c for c in check.comparisons if c.host is not None and c.host.within]


def same_host(base: Report, other: Report) -> bool:
    """Whether both reports ran on the same host (a differential comparison holds only there)."""
    return base.environment.host is not None and base.environment.host == other.environment.host


def _differential(base: Comparison, other: Comparison) -> Comparison | None:
    """`other` judged against `base`'s values at its golden ulps (at the scale either host judgement kept); None
    where the two cannot be set value for value (a shape or dtype changed: the change is said as it was)."""
    b, o = base.values, other.values
    if (b is None or o is None or b.values is None or o.values is None or b.dtype != o.dtype or b.shape != o.shape
            or not isinstance(other.tolerance, Tolerance) or other.dtype not in _SPACING):
        return None
    ulp_dtype = other.tolerance.ulp_dtype or other.dtype
    scale = (base.host or other.host).scale or [0.0] * len(b.values)
    tiny = math.ldexp(1.0, _SPACING[ulp_dtype][1])
    bad, worst, largest_abs, largest_rel = 0, None, 0.0, 0.0
    for i, (x, y, s) in enumerate(zip(map(_number, b.values), map(_number, o.values), scale)):
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        error = abs(y - x)
        allowed = other.tolerance.ulps * _spacing(max(abs(x), abs(s)), ulp_dtype) if math.isfinite(x) else 0.0
        if 0 < abs(x) < tiny:  # XLA on CPU flushes subnormals to zero
            allowed = max(allowed, tiny)
        largest_abs = max(largest_abs, error)
        largest_rel = max(largest_rel, error / abs(x) if x else math.inf)
        if not error <= allowed:
            bad += 1
            used = error / allowed if allowed else math.inf
            if worst is None or used > worst[0]:
                worst = (used, i, x, y)
    if worst is None:
        return dataclasses.replace(other, passed=True, message="", worst=None)
    _, i, x, y = worst
    ulps = ulps_between(x, y, b.dtype) if math.isfinite(x) and math.isfinite(y) else None
    message = (f"{other.label} [{other.dtype}, shape {b.shape}]: {bad} of {len(b.values)} elements outside "
               f"{other.tolerance.ulps:g} ulp of this machine's baseline values (host drift: the recording is "
               f"another host's); max abs err {largest_abs:.3g}; worst at element {i}: baseline {x!r}, "
               f"observed {y!r}" + (f" ({ulps} ulp)" if ulps is not None else ""))
    return dataclasses.replace(other, passed=False, message=message, expected=b.values, mismatched=bad,
                               max_abs_err=largest_abs, max_rel_err=largest_rel,
                               worst=WorstElement(_index(i, b.shape), x, y, ulps))


def _index(flat: int, shape: list[int]) -> list[int]:
    index = []
    for size in reversed(shape):
        flat, at = divmod(flat, size) if size else (flat, 0)
        index.append(at)
    return index[::-1]


def rejudged(base: CheckRecord | None, other: CheckRecord | None, same: bool = True) -> CheckRecord | None:
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
        judged = _differential(before[c.label], c) if c.label in labels and c.label in before else None
        comparisons.append(judged or c)
    failing = [c for c in comparisons if not c.passed]
    outcome, message, exception = other.outcome, other.message, other.exception
    if other.outcome in (Outcome.PASSED, Outcome.FAILED) and other.exception in _FAILED_BY_CONTRACT:
        outcome = Outcome.FAILED if failing else Outcome.PASSED
        message = "\n".join(c.message for c in failing)
        exception = "ContractFailure" if failing else None
    return dataclasses.replace(other, comparisons=comparisons, outcome=outcome, message=message, exception=exception)


def line(base: Report, others: list[Report]) -> str | None:
    """The one line that says the baseline drifted on this host, and how the others were judged; None without
    drift."""
    checks = [c for c in base.checks if drifted(c)]
    if not checks:
        return None
    values = sum(len(drifted(c)) for c in checks)
    dimensions = sorted({d for c in checks for comparison in drifted(c) for d in comparison.host.dimensions})
    said = " and ".join(Dimension(d).said for d in dimensions)
    here = base.environment.host.text() if base.environment.host else "this machine"
    text = (f"host drift: {values} golden value{'s' * (values != 1)} in {len(checks)} check{'s' * (len(checks) != 1)} "
            f"{'differ' if values != 1 else 'differs'} from {'their' if values != 1 else 'its'} recording on {here} "
            f"within the host noise measured when recorded ({said} {'differ' if len(dimensions) > 1 else 'differs'} "
            "from the recording host's)")
    apart = [o.entry.name for o in others if not same_host(base, o)]
    if apart:
        return text + f"; {', '.join(apart)} ran on another host: judged against the recording, within that noise"
    return text + "; the other entries are judged against this machine's baseline values there"


def host_row(base: Report) -> str | None:
    """'this host: AMD EPYC (...; OpenBLAS Haswell); golden values recorded on AMD EPYC (...; OpenBLAS SkylakeX):
    it differs in BLAS kernel', or that it is the recording's host; None where the report names no host."""
    here = base.environment.host
    if here is None:
        return None
    recorded = {h.text(): h for h in (base.golden_hosts or {}).values()}
    text = f"this host: {here.text()}"
    if not recorded:
        return text
    if list(recorded.values()) == [here]:
        return text + ", where the golden values were recorded"
    parts = [name if host == here else f"{name}: {difference_text(host, here)}" for name, host in recorded.items()]
    return text + "; golden values recorded on " + "; ".join(parts)
