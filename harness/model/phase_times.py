"""Where time went, as data: the phases an entry's processes write when `nox -s upgrade -- --harness-phases`
asks them to (harness.contract.phases in the suite's pytest run, harness.stack.sessions in the entry's nox
session), which the upgrade reads back into its whole-run profile (harness.stack.run.run_profile).

One small JSON file per process, `<source>.json` in the directory the entry's job names (its phases_dir: one
directory per entry run, the upgrade gives each its own); `<source>-<part>.json` for a suite that runs one part
of the entry's report (its own contracts, the built-in ones: harness.stack.entry_side.parts), one process each.
Written and read best effort, like the progress file: a profile that cannot be written or read must never
fail an entry or change its report; the profile then says the figures are missing.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.model.codec import from_json, to_json
from harness.model.enums import ReportPart


class Source(enum.StrEnum):
    """Which process of an entry wrote the file."""

    SESSION = "session"  # the entry's nox session: its start, the install, its whole process tree's CPU
    SUITE = "suite"  # the contract suite's pytest run
    MULTI_DEVICE = "multi-device"  # the data-parallel family's own pytest run (harness.devices)


@dataclasses.dataclass(frozen=True)
class Timing:
    """One phase: wall and CPU seconds (None: not measured, e.g. CPU within the checks, which are split by
    wall time only), a note (counts), and the phases within it."""

    name: str
    wall_s: float | None
    cpu_s: float | None = None
    note: str = ""
    parts: list[Timing] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class ProcessPhases:
    """What one process of an entry measured. `started_at`/`ended_at`: epoch seconds (time.time), so the
    host can place the processes of one entry on one time line; `cpu_s`: the process's CPU (a session's
    includes its finished children: the installer and the pytest runs)."""

    source: Source
    started_at: float | None
    ended_at: float
    cpu_s: float
    timings: list[Timing] = dataclasses.field(default_factory=list)
    work_started_at: float | None = None  # a session: when its function started (nox's own start-up before)
    work_cpu_s: float | None = None  # a session: its CPU when its function started
    part: ReportPart = ReportPart.ALL  # a suite: the part of the entry's report it ran (ALL: all of it)


def file_name(source: Source, part: ReportPart = ReportPart.ALL) -> str:
    return f"{source.value}.json" if part == ReportPart.ALL else f"{source.value}-{part.value}.json"


def write(directory: Path | str, phases: ProcessPhases) -> None:
    """Best effort: a profile that cannot be written must not fail the entry."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    try:
        atomic_write_text(directory / file_name(phases.source, phases.part), json.dumps(to_json(phases)) + "\n")
    except OSError:
        pass


def read(directory: Path) -> list[ProcessPhases]:
    """The files the processes of one entry run wrote, in the order they started (the session first); what is
    missing or unreadable left out."""
    found = []
    for source in Source:
        for part in ReportPart:
            try:
                doc = json.loads((directory / file_name(source, part)).read_text())
                found.append(from_json(ProcessPhases, doc))
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return sorted(found, key=lambda p: (p.source != Source.SESSION, p.started_at or 0.0, p.ended_at))
