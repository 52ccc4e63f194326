"""The rollback's results as the candidate's: a check "the baseline restores what this entry wrote" is
judged on the candidate, but only a run of the baseline can answer it (harness.stack.run.rollback). The
candidate's own run of those checks read its own checkpoints; the baseline's run on the candidate's
checkpoints replaces them, so a rollback that casts, drops or fails a leaf is the candidate's change."""

from __future__ import annotations

import dataclasses

from harness.model.report import Report, Summary


def merged(candidate: Report, rollback: Report) -> Report:
    """The candidate's report with the checks the rollback ran taken from the rollback's report."""
    theirs = {c.id: c for c in rollback.checks}
    checks = [theirs.get(c.id, c) for c in candidate.checks]
    return dataclasses.replace(candidate, checks=checks, summary=Summary.of(checks))
