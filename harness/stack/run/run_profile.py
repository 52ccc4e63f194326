"""Where a whole upgrade's time goes (`nox -s upgrade -- --harness-phases`): its phases as the host lived
them (preflight, resolution, each wave of entries, the follow-ups, the API diff, the verdict), each with
its wall time and CPU time, and each entry with the phases its own processes wrote (harness.model.phase_times).

CPU of a host phase: this process's CPU plus that of the children it reaped during the phase (the entries'
nox sessions and everything they waited for: uv, pytest), from resource.getrusage; entries running side
by side are split by their own sessions' figures. Measuring costs a few system calls a phase, so the
upgrade always measures; the entries write their phases only when asked, and the profile is printed only
then. One run measures at a time (the run's lock): the profiler is this module's, so the code that runs
entries needs no new parameter.

The profile as the table `--harness-phases` prints (table()).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import resource
import shutil
import tempfile
import time
from pathlib import Path

from harness.model import phase_times
from harness.model.enums import ReportPart
from harness.model.phase_times import ProcessPhases, Source, Timing
from harness.stack.entry_side.session_phases import cpu_seconds


def _now() -> tuple[float, float, float]:
    """Wall seconds, this process's CPU, its reaped children's CPU."""
    return time.perf_counter(), cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)


@dataclasses.dataclass
class EntryTime:
    """One entry run within a phase: its report's name, its wall time as the host saw it (start to exit),
    whether its report was reused (then it did not run), and what its processes wrote."""

    report: str
    wall_s: float
    reused: bool
    processes: list[ProcessPhases] = dataclasses.field(default_factory=list)  # the session's first, then by start

    def of(self, source: Source) -> list[ProcessPhases]:
        """Its processes of one kind (a suite a part of its report: a team's own contracts, the built-in ones)."""
        return [p for p in self.processes if p.source == source]

    @property
    def session(self) -> ProcessPhases | None:
        """Its nox session's phases (None: it wrote none, e.g. reused, or not profiled)."""
        return next(iter(self.of(Source.SESSION)), None)

    @property
    def cpu_s(self) -> float | None:
        """The session's whole process tree (None: it wrote nothing, e.g. reused, or not profiled)."""
        return self.session.cpu_s if self.session is not None else None


@dataclasses.dataclass
class PhaseTime:
    """One phase of the host: wall seconds, CPU seconds of this process and of its reaped children, the
    phases within it and the entries it ran."""

    name: str
    wall_s: float = 0.0
    own_cpu_s: float = 0.0
    children_cpu_s: float = 0.0
    parts: list[PhaseTime] = dataclasses.field(default_factory=list)
    entries: list[EntryTime] = dataclasses.field(default_factory=list)

    @property
    def cpu_s(self) -> float:
        return self.own_cpu_s + self.children_cpu_s


class Profiler:
    """The run's phases as they happen; `detailed`: the entries write their own phases too."""

    def __init__(self) -> None:
        self.root = PhaseTime("total")
        self._open: list[PhaseTime] = [self.root]
        self._started = _now()
        self.directory: Path | None = None  # where the entries write theirs, when detailed
        self._numbers = itertools.count()

    def detail(self) -> None:
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="harness-phases-"))

    @contextlib.contextmanager
    def phase(self, name: str):
        record = PhaseTime(name)
        self._open[-1].parts.append(record)
        self._open.append(record)
        wall0, own0, kids0 = _now()
        try:
            yield record
        finally:
            wall1, own1, kids1 = _now()
            record.wall_s, record.own_cpu_s, record.children_cpu_s = wall1 - wall0, own1 - own0, kids1 - kids0
            self._open.remove(record)

    def entry_directory(self, report: str) -> Path | None:
        """A fresh directory for one entry run's phase files (None: not detailed)."""
        if self.directory is None:
            return None
        path = self.directory / f"{next(self._numbers):03d}-{report}"
        path.mkdir()
        return path

    def entry_done(self, report: str, wall_s: float, reused: bool, directory: Path | None) -> None:
        processes = phase_times.read(directory) if directory is not None else []
        self._open[-1].entries.append(EntryTime(report, wall_s, reused, processes))

    def finish(self) -> PhaseTime:
        """The whole run so far as the root phase (its parts: the top-level phases); the entries' files removed."""
        wall1, own1, kids1 = _now()
        wall0, own0, kids0 = self._started
        self.root.wall_s, self.root.own_cpu_s, self.root.children_cpu_s = wall1 - wall0, own1 - own0, kids1 - kids0
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
        return self.root


_ACTIVE: list[Profiler] = []


def start() -> Profiler:
    """The run's profiler, measuring from now until `stop`."""
    _ACTIVE[:] = [Profiler()]
    return _ACTIVE[0]


def stop() -> PhaseTime | None:
    """The finished profile (None when none was started), and no profiler active any more."""
    if not _ACTIVE:
        return None
    return _ACTIVE.pop().finish()


def detail() -> None:
    """The entries started from now on write their own phases (`--harness-phases` was given)."""
    if _ACTIVE:
        _ACTIVE[0].detail()


@contextlib.contextmanager
def phase(name: str):
    """A phase of the running upgrade; nothing when no profiler is active (CI's steps one by one)."""
    if not _ACTIVE:
        yield None
        return
    with _ACTIVE[0].phase(name) as record:
        yield record


def entry_directory(report: str) -> Path | None:
    return _ACTIVE[0].entry_directory(report) if _ACTIVE else None


def entry_done(report: str, wall_s: float, reused: bool, directory: Path | None) -> None:
    if _ACTIVE:
        _ACTIVE[0].entry_done(report, wall_s, reused, directory)


HEADER = "upgrade-harness: where this upgrade's time went (--harness-phases; seconds)"
WIDTH = 84  # the longest row: a follow-up's part's report writing, three levels down


def _cell(seconds: float | None) -> str:
    return " " * 8 if seconds is None else f" {seconds:7.2f}"


def _line(depth: int, label: str, wall: float | None, cpu: float | None, note: str = "") -> str:
    text = f"{'  ' * depth}{label}"
    return f"{text:{WIDTH}s}{_cell(wall)}{_cell(cpu)}  {note}".rstrip()


def _gap(later: float | None, earlier: float | None) -> float | None:
    return later - earlier if later is not None and earlier is not None else None


def _pytest_rows(depth: int, label: str, run: ProcessPhases) -> list[str]:
    """A pytest run's phases as its --harness-phases table has them, under `label`."""
    lines = []
    for timing in run.timings:
        lines.append(_line(depth, f"{label}: {timing.name}", timing.wall_s, timing.cpu_s, timing.note))
        lines += [_line(depth + 1, part.name, part.wall_s, part.cpu_s, part.note) for part in timing.parts]
    return lines


def _total(run: ProcessPhases) -> Timing | None:
    return next((t for t in run.timings if t.name == "total"), None)


def _suite_label(run: ProcessPhases) -> str:
    return "suite" if run.part == ReportPart.ALL else f"suite ({run.part.value} part)"


def entry_rows(entry: EntryTime, depth: int) -> list[str]:
    """One entry run: its wall time as the host saw it, its session's CPU, then its processes' phases (a suite
    a part of its report, each part's process in turn)."""
    if entry.reused:
        return [_line(depth, entry.report, entry.wall_s, None, "reused: not run (an earlier run's report, or its same-stack twin's)")]
    lines = [_line(depth, entry.report, entry.wall_s, entry.cpu_s,
                   "ran" + ("" if entry.processes else "; its processes wrote no phases"))]
    session = entry.session
    suites, families = entry.of(Source.SUITE), entry.of(Source.MULTI_DEVICE)
    pytest_cpu = sum((t.cpu_s or 0.0) for run in suites + families for t in [_total(run)] if t)
    if session is not None:
        lines.append(_line(depth + 1, "nox start-up (interpreter, nox, the environment found)",
                           _gap(session.work_started_at, session.started_at), session.work_cpu_s))
        if suites:
            rest = session.cpu_s - (session.work_cpu_s or 0.0) - pytest_cpu
            lines.append(_line(depth + 1, "install (uv pip sync to the lock) and the suite's launch",
                               _gap(suites[0].started_at, session.work_started_at), max(0.0, rest),
                               "cpu: the session's less its pytest runs' phases (install, exits, merge)"))
    for suite in suites:
        lines += _pytest_rows(depth + 1, _suite_label(suite), suite)
    for family in families:
        total = _total(family)
        lines.append(_line(depth + 1, "data-parallel family (its own pytest run)", total.wall_s if total else None,
                           total.cpu_s if total else None))
    ran = [r for r in suites + families if r.ended_at is not None]
    if session is not None and ran:  # the data-parallel process runs beside the suite: after the later one
        lines.append(_line(depth + 1, "session end (pytest's exit, the reports merged)",
                           _gap(session.ended_at, max(r.ended_at for r in ran)), None))
    return lines


def phase_rows(phase: PhaseTime, depth: int) -> list[str]:
    lines = [_line(depth, phase.name, phase.wall_s, phase.cpu_s)]
    for entry in phase.entries:
        lines += entry_rows(entry, depth + 1)
    for part in phase.parts:
        lines += phase_rows(part, depth + 1)
    return lines


def table(profile: PhaseTime) -> list[str]:
    """The top-level phases in the order they ran, each with what ran within it, then the whole run."""
    lines = [HEADER, "cpu: this process and the children it waited for (entries: each one's nox session and "
                     "its children)", f"{'phase':{WIDTH}s} {'wall':>7s} {'cpu':>7s}"]
    for part in profile.parts:
        lines += phase_rows(part, 0)
    measured = sum(p.wall_s for p in profile.parts)
    lines.append(_line(0, "between the phases (reports moved, messages, the rest)",
                       max(0.0, profile.wall_s - measured), max(0.0, profile.cpu_s - sum(p.cpu_s for p in profile.parts))))
    lines.append(_line(0, "total", profile.wall_s, profile.cpu_s))
    return lines
