"""The reports of one run as its steps read them: each file read, validated and decoded once, each pair
compared once. An upgrade's follow-ups, its bisection, its API diff and its verdict all read the baseline's and
the candidate's reports; held here (one object per run, handed down with the run's directory,
harness.stack.run.run_directory) they are read once, where a process-wide memo would outlive the run.

A file rewritten after it was read (a partial report given its reason) is read again: each read is keyed by the
file's size, modification time and inode, one stat per call.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from harness.model import report_io
from harness.model.report import Report
from harness.model.verdict import EntryVerdict
from harness.verdict import compare, rollback

_Stamp = tuple[int, int, int]  # (size, mtime in ns, inode): the file as it was read


def _stamp(path: Path) -> _Stamp | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns, found.st_ino


@dataclasses.dataclass(eq=False)
class RunReports:
    """The reports one run has read, by path, and the comparisons made between them."""

    _read: dict[Path, tuple[_Stamp, Report]] = dataclasses.field(default_factory=dict)
    # (baseline, other, replay) by identity -> the comparison; the reports are kept so their ids stay theirs.
    _compared: dict[tuple[int, int, int], tuple[tuple[Report, Report, Report | None], EntryVerdict]] = \
        dataclasses.field(default_factory=dict)
    # id of a merged report -> (it, the writer's report it was merged from, the check ids taken from the rollback)
    _merged: dict[int, tuple[Report, Report, frozenset[str]]] = dataclasses.field(default_factory=dict)

    def load(self, path: str | Path) -> Report:
        """The typed report at `path` (report_io.load, ReportProblem when unusable); read once while the file
        is unchanged."""
        path = Path(path)
        stamp = _stamp(path)
        held = self._read.get(path)
        if stamp is not None and held is not None and held[0] == stamp:
            return held[1]
        report = report_io.load(path)
        if stamp is not None:
            self._read[path] = (stamp, report)
        return report

    def wrote(self, path: str | Path, report: Report) -> None:
        """`report` was just written to `path` by this process (report_io.write): served from here as read."""
        stamp = _stamp(Path(path))
        if stamp is not None:
            self._read[Path(path)] = (stamp, report)

    def merged(self, writer: Report, rolled_back: Report) -> Report:
        """harness.verdict.rollback.merged, remembered: the merged report is compared from the writer's
        comparison, its rollback checks only judged again."""
        found = rollback.merged(writer, rolled_back)
        self._merged[id(found)] = (found, writer, frozenset(c.id for c in rolled_back.checks))
        return found

    def compared(self, base: Report, other: Report, replay: Report | None = None) -> EntryVerdict:
        """compare.compare_entry, once per (baseline, other, replay). With a replay, derived from the comparison
        without it (compare.replayed), which the follow-ups made first; for a merged report (merged), from
        its writer's (compare.rejudged)."""
        key = (id(base), id(other), id(replay))
        held = self._compared.get(key)
        if held is not None:
            return held[1]
        merged = self._merged.get(id(other))
        if replay is not None:
            found = compare.replayed(self.compared(base, other), base, other, replay)
        elif merged is not None:
            found = compare.rejudged(self.compared(base, merged[1]), base, other, merged[2])
        else:
            found = compare.compare_entry(base, other)
        self._compared[key] = ((base, other, replay), found)
        return found
