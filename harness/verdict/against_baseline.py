"""Built-in checks the baseline fails against their golden values, judged against the baseline's own values instead.

The built-in contracts' golden values are the tool's (or a team's copy), recorded on one stack. Once a team's
baseline is another stack (it accepted a bump: `upgrade-harness accept`), the baseline fails every built-in check
the bump changed, and a verdict that judges the candidate against those golden values can say nothing of them
("not judged"). Where the built-in contracts are reported only, such a check is judged as the differential
comparisons of host drift are (harness.verdict.host_drift): the candidate against the values the baseline
computed in the same run on the same host, at the golden ulps; an error contract or a golden fact by its
observed exception type or fact. The bump is all that differs between the two, so a change still shows, and a
check that moves nothing is unchanged, not a row of the baseline's failures.

Only comparisons against a recording (golden values and error contracts) are judged again; a check the baseline
fails for anything else (a statement, an exception of its own, a property) stays failing on the baseline, and
so does one whose values the reports did not keep.

Pure Python: the host judges reports without NumPy.
"""

from __future__ import annotations

import dataclasses

from harness.model.enums import CheckKind, ComparisonKind, Outcome
from harness.model.float_formats import SIGNIFICAND_BITS
from harness.model.report import CheckRecord, Comparison, Tolerance
from harness.verdict import host_drift

RECORDED = (ComparisonKind.GOLDEN, ComparisonKind.ERROR_CONTRACT)  # judged against a recording


def _said(value) -> str:
    return "no error" if value is None else repr(value) if not isinstance(value, str) else value


def _in_ulps(c: Comparison) -> bool:
    return isinstance(c.tolerance, Tolerance) and c.dtype in SIGNIFICAND_BITS


def _against(base: Comparison, other: Comparison) -> Comparison | None:
    """`other` judged against `base`'s observed values; None when the reports keep nothing to set against them."""
    if base.values is not None and other.values is not None:
        if _in_ulps(other) and base.dtype == other.dtype and base.shape == other.shape:
            if base.host is None and other.host is None and (base.override or other.override):
                return None  # an allowance of its own (a cancellation's scale) the reports do not keep
            return host_drift.differential(base, other)
        # The digest of the exact values: a large array keeps no values, only it (equal digests, equal bits).
        same = (base.dtype, base.shape, base.values.digest) == (other.dtype, other.shape, other.values.digest)
        where = f"dtype {base.dtype}, shape {base.shape}" if (base.dtype, base.shape) != (other.dtype, other.shape) \
            else "values"
        return dataclasses.replace(other, passed=same, expected=base.observed, message="" if same else (
            f"{other.label}: {where} differ from this machine's baseline ({other.dtype}, shape {other.shape} now)"))
    if base.values is not None or other.values is not None:
        return None
    if base.kind == ComparisonKind.GOLDEN and (base.observed is None or base.dtype in SIGNIFICAND_BITS):
        return None  # a numeric value whose elements were not kept (one compared several times keeps an example)
    same = base.observed == other.observed
    at = "at this machine's baseline"
    return dataclasses.replace(other, passed=same, expected=base.observed, message="" if same else (
        f"{other.label}: {_said(base.observed)} {at}, {_said(other.observed)} now"))


def failing_recordings(check: CheckRecord) -> list[Comparison] | None:
    """The comparisons against a recording a built-in check fails on the baseline, when they alone failed it; None
    for a check that failed otherwise (or passed)."""
    if check.own or check.outcome != Outcome.FAILED or check.kind == CheckKind.PROPERTY \
            or check.exception != "ContractFailure":
        return None
    failing = [c for c in check.comparisons if not c.passed]
    if not failing or any(c.kind not in RECORDED or c.departure is not None for c in failing):
        return None
    return failing


def rebased(base: CheckRecord, other: CheckRecord) -> tuple[CheckRecord, CheckRecord] | None:
    """Both records judged against the baseline's values: the baseline's recording comparisons hold (they are
    the reference now), the other's are set against them; None when the check cannot be (failing_recordings)."""
    failing = failing_recordings(base)
    if failing is None:
        return None
    labels = {c.label: c for c in failing}
    comparisons = []
    for c in other.comparisons:
        judged = _against(labels[c.label], c) if c.label in labels else c
        if judged is None:
            return None
        comparisons.append(judged)
    held = [dataclasses.replace(c, passed=True, message="") if c.label in labels else c for c in base.comparisons]
    outcome, message, exception = host_drift.outcome_of(base, held)
    base_now = dataclasses.replace(base, comparisons=held, outcome=outcome, message=message, exception=exception)
    outcome, message, exception = host_drift.outcome_of(other, comparisons)
    other_now = dataclasses.replace(other, comparisons=comparisons, outcome=outcome, message=message,
                                    exception=exception)
    return base_now, other_now
