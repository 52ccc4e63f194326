"""Where a reused report came from: a run reuses an entry's report when nothing that determines it
changed since the run that computed it (harness.stack.run.report_key)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class ReusedFrom:
    """A report taken from an earlier run because nothing that determines it changed (its content key)."""

    run_id: str | None  # the run that computed it
    finished_at: str | None  # when that run's entry finished
    key: str  # the content key (harness.stack.run.report_key)
    entry: str  # the entry that computed it (a candidate bumping only jax and a jax-only entry share one)
