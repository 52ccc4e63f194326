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

    @property
    def when(self) -> str:
        """When that run's entry finished, as the run and the verdict say it: `2026-12-02 00:36 UTC`."""
        stamp = self.finished_at or ""
        return f"{stamp[:10]} {stamp[11:16]} UTC" if len(stamp) >= 16 else "an earlier run"
