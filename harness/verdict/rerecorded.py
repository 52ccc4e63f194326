"""The golden values a branch re-recorded, applied to the verdict: each one named with the check that reads it (from
the run's reports), counted in the headline, and under the team's `re-recorded = "fail"` a failed check while any
of them was written without a reason (the contracts hold on the branch's own new values, so nothing else would say
the behaviour moved)."""

from __future__ import annotations

import dataclasses

from harness.errors import EXIT_CHANGED
from harness.model.golden_changes import GoldenChanges
from harness.model.report import Report
from harness.model.verdict import Verdict

GOLDEN_LABEL = "golden:"  # a comparison's label: "golden:<key>"


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
        f"RE-RECORDED: {unexplained} golden value{'s' * (unexplained != 1)} changed against {named.base}'s without a "
        f"reason; {verdict.headline}"))
