"""The whole upgrade's profile (harness.stack.run.run_profile) as the table `--harness-phases` prints."""

from __future__ import annotations

from harness.model.phase_times import ProcessPhases, Source, Timing
from harness.stack.run.run_profile import EntryTime, PhaseTime

HEADER = "upgrade-harness: where this upgrade's time went (--harness-phases; seconds)"
WIDTH = 72


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


def entry_rows(entry: EntryTime, depth: int) -> list[str]:
    """One entry run: its wall time as the host saw it, its session's CPU, then its processes' phases."""
    if entry.reused:
        return [_line(depth, entry.report, entry.wall_s, None, "reused: not run (an earlier run's report, or its same-stack twin's)")]
    lines = [_line(depth, entry.report, entry.wall_s, entry.cpu_s,
                   "ran" + ("" if entry.processes else "; its processes wrote no phases"))]
    session = entry.processes.get(Source.SESSION)
    suite = entry.processes.get(Source.SUITE)
    family = entry.processes.get(Source.MULTI_DEVICE)
    pytest_cpu = sum((t.cpu_s or 0.0) for run in (suite, family) if run for t in [_total(run)] if t)
    if session is not None:
        lines.append(_line(depth + 1, "nox start-up (interpreter, nox, the environment found)",
                           _gap(session.work_started_at, session.started_at), session.work_cpu_s))
        if suite is not None:
            rest = session.cpu_s - (session.work_cpu_s or 0.0) - pytest_cpu
            lines.append(_line(depth + 1, "install (uv pip sync to the lock) and the suite's launch",
                               _gap(suite.started_at, session.work_started_at), max(0.0, rest),
                               "cpu: the session's less its pytest runs' phases (install, exits, merge)"))
    if suite is not None:
        lines += _pytest_rows(depth + 1, "suite", suite)
    if family is not None:
        total = _total(family)
        lines.append(_line(depth + 1, "data-parallel family (its own pytest run)", total.wall_s if total else None,
                           total.cpu_s if total else None))
    ran = [r for r in (suite, family) if r is not None and r.ended_at is not None]
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
