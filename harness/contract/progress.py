"""The contract run's side of the progress file (harness.model.progress): checks collected and done,
so `nox -s upgrade` can show "running 120/340 checks" instead of minutes of silence.

Plain Python on purpose: it runs inside the entry's environment, whose stack is the one under test.
"""

from __future__ import annotations

import time
from pathlib import Path

from harness.contract import job
from harness.model import progress
from harness.model.progress import Phase, Progress

WRITE_INTERVAL_S = 0.5  # checks finishing faster than this are written together


class ProgressWriter:
    """Counts the run's checks into the progress file its job names; does nothing without one."""

    def __init__(self, path: Path | None, clock=time.monotonic):
        self.path = path
        self.clock = clock
        self.state = Progress(Phase.COLLECTING)
        self.last_write: float | None = None

    @classmethod
    def of(cls, config) -> ProgressWriter:
        """The run's writer: to its job's progress file (an upgrade's entry), else none (a run by hand)."""
        told = job.of_entry(config)
        return cls(told.progress if told else None)

    def collecting(self) -> None:
        self._set(Progress(Phase.COLLECTING), force=True)

    def running(self, total: int) -> None:
        self._set(Progress(Phase.RUNNING, 0, total), force=True)

    def check_started(self, check_id: str) -> None:
        """Written at once, each check: a process that dies inside it leaves its name (not throttled: a
        write is ~0.1 ms, a check takes milliseconds at least)."""
        state = self.state
        self._set(Progress(Phase.RUNNING, state.done, state.total, check_id), force=True)

    def check_finished(self) -> None:
        state = self.state
        done = state.done + 1
        total = state.total if state.total is None else max(state.total, done)
        self._set(Progress(Phase.RUNNING, done, total), force=done == total)

    def reporting(self) -> None:
        self._set(Progress(Phase.REPORTING, self.state.done, self.state.total), force=True)

    def _set(self, state: Progress, force: bool) -> None:
        self.state = state
        if self.path is None:
            return
        now = self.clock()
        if force or self.last_write is None or now - self.last_write >= WRITE_INTERVAL_S:
            progress.write(self.path, state)
            self.last_write = now
