"""A rollback's results as its writer's: a check "the baseline restores what this entry wrote" is judged
on the entry (the candidate, an attribution entry), but only a run of the baseline can answer it
(harness.stack.entry_side.rollback). The entry's own run of those checks read its own checkpoints; the
baseline's run on them replaces it, so a rollback that casts, drops or fails a leaf is that entry's change
(and an attribution entry's is what blames the candidate's on one bump)."""

from __future__ import annotations

import dataclasses

from harness.model.report import Report, Summary


def merged(candidate: Report, rollback: Report) -> Report:
    """The writer's report (`candidate`) with the checks the rollback ran taken from the rollback's report."""
    theirs = {c.id: c for c in rollback.checks}
    checks = [theirs.get(c.id, c) for c in candidate.checks]
    return dataclasses.replace(candidate, checks=checks, summary=Summary.of(checks))
