"""The golden values a branch re-recorded, applied to the verdict: each one named with the check that reads it (from
the run's reports), counted in the headline, and under the team's `re-recorded = "fail"` a failed check while any
of them was written without a reason (the contracts hold on the branch's own new values, so nothing else would say
the behaviour moved)."""

from __future__ import annotations

import dataclasses

from harness.errors import EXIT_CHANGED
from harness.model.golden_changes import GoldenChanges, ValueChangeKind
from harness.model.report import Report
from harness.model.verdict import Verdict

GOLDEN_LABEL = "golden:"  # a comparison's label: "golden:<key>"
FAILED_PREFIX = "RE-RECORDED:"  # the headline of a check failed for values re-recorded without a reason
REASON_SHOWN = 120  # characters of a reason the headline quotes


def checks_by_key(reports: list[Report]) -> dict[tuple[str, str], str]:
    """(family, golden key) -> the id of the check whose comparison reads it, over the reports given."""
    found: dict[tuple[str, str], str] = {}
    for report in reports:
        for check in report.checks:
            for comparison in check.comparisons:
                if comparison.label.startswith(GOLDEN_LABEL):
                    found.setdefault((check.family, comparison.label[len(GOLDEN_LABEL):]), check.id)
    return found


def applied(verdict: Verdict, changes: GoldenChanges | None, reports: list[Report]) -> Verdict:
    """The verdict with the changes, each named with its check; under `re-recorded = "fail"` and a value without a
    reason, a verdict that would pass fails (exit 1) and its headline says why first."""
    if changes is None or not changes.values:
        return verdict
    checks = checks_by_key(reports)
    named = dataclasses.replace(changes, values=tuple(
        dataclasses.replace(v, check=checks.get((v.family, v.key))) for v in changes.values))
    verdict = dataclasses.replace(verdict, golden_changes=named)
    if not named.fails or verdict.exit_status != 0:
        return verdict
    unexplained = len(named.unexplained)
    return dataclasses.replace(verdict, exit_status=EXIT_CHANGED, headline=(
        f"{FAILED_PREFIX} {unexplained} golden value{'s' * (unexplained != 1)} changed against {named.base}'s without a "
        f"reason; {verdict.headline}"))


def headline_count(verdict: Verdict) -> str | None:
    """The PR comment's headline count of the values the branch re-recorded, with the reasons given: "golden values
    against origin/main's: 23 changed (reason: weight decay doubled)". Said even when the check is green (its whole
    behaviour change may be those values); None without any, or where the headline counts them already."""
    changes = verdict.golden_changes
    if changes is None or not changes.values or verdict.headline.startswith(FAILED_PREFIX):
        return None
    counts = [f"{len(found)} {kind}" for kind in ValueChangeKind if (found := changes.of_kind(kind))]
    writers = list(dict.fromkeys(v.writer for v in changes.values))
    reasons = list(dict.fromkeys(_reason(w.reason) for w in writers if w.reason))
    said = [f"reason{'s' * (len(reasons) > 1)}: " + "; ".join(reasons)] if reasons else []
    unexplained = len(changes.unexplained)
    said += [f"{unexplained} without a reason"] if unexplained else []
    said += ["edited by hand"] if any(w.by_hand for w in writers) else []
    return f"golden values against {changes.base}'s: {', '.join(counts)}" + (f" ({'; '.join(said)})" if said else "")


def _reason(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_SHOWN else text[:REASON_SHOWN - 1] + "…"
