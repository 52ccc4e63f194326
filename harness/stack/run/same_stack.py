"""One stack, one run: entries started together that install the same stack (equal report keys,
harness.stack.run.report_key, which leave the entry's name out) run once. After a bump is accepted the
baseline and the candidate pin one stack; running both side by side would only double the wait.

The second waits for the first instead of starting; when the first has finished (and its report was kept,
harness.stack.run.report_cache.keep), the second is served from it as a reused report whose origin is this
run (Report.reused.run_id), which the verdict says in one line.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from harness.model.report import Report
from harness.stack.run.report_key import ReportKey


class Named(Protocol):
    """An entry, or a run of one (harness.stack.run.entry_runs.Run): what a twin waits as."""

    @property
    def name(self) -> str: ...


@dataclasses.dataclass
class Twins:
    """The entries of one start of entries by report key: which one runs a stack, which wait for it."""

    running: dict[str, str] = dataclasses.field(default_factory=dict)  # key digest -> the entry running it
    waiting: dict[str, list[Named]] = dataclasses.field(default_factory=dict)  # running entry -> its twins
    served_by: dict[str, str] = dataclasses.field(default_factory=dict)  # a twin -> the entry it waited for

    def wait_for(self, entry: Named, key: ReportKey | None) -> str | None:
        """The running entry that installs the same stack as `entry` (which then waits for it), or None."""
        twin = self.running.get(key.digest) if key is not None else None
        if twin is not None:
            self.waiting.setdefault(twin, []).append(entry)
            self.served_by[entry.name] = twin
        return twin

    def started(self, name: str, key: ReportKey | None) -> None:
        if key is not None:
            self.running[key.digest] = name

    def finished(self, name: str) -> list[Named]:
        """The entries that waited for `name`: to be served from its report now (or run, if none was kept)."""
        self.running = {digest: n for digest, n in self.running.items() if n != name}
        return self.waiting.pop(name, [])


def of_this_run(report: Report) -> bool:
    """Whether a reused report was computed by an entry of the same run (one stack, one run)."""
    return report.reused is not None and report.run_id is not None and report.reused.run_id == report.run_id


def served_line(name: str, report: Report) -> str:
    """What the run prints for an entry served from another entry's report of the same run."""
    return f"{name} installs the same stack as {report.reused.entry}: ran once"
