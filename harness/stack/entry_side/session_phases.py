"""An entry's nox session, when its upgrade profiles the run (`--harness-phases`): when its process started,
when the session's own work began, and its whole process tree's CPU at the end (the installer's and the
pytest runs' included), written as data beside its suite's phases (harness.model.phase_times)."""

from __future__ import annotations

import contextlib
import resource
import time
from pathlib import Path

from harness import process_age
from harness.model import phase_times
from harness.model.phase_times import ProcessPhases, Source


def cpu_seconds(who: int) -> float:
    """User plus system CPU seconds of `who` (resource.RUSAGE_SELF or RUSAGE_CHILDREN: the finished
    children this process waited for, and theirs)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def tree_cpu_seconds() -> float:
    return cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)


def process_started_at() -> float | None:
    """When this process started, epoch seconds (Linux's /proc); None elsewhere."""
    age = process_age.seconds()
    return None if age is None else time.time() - age


@contextlib.contextmanager
def recorded(directory: Path | None):
    """Around the session's function: nothing unless its job names a phases directory (`directory`)."""
    if not directory:
        yield
        return
    began, began_cpu = time.time(), tree_cpu_seconds()
    try:
        yield
    finally:
        phase_times.write(directory, ProcessPhases(Source.SESSION, process_started_at(), time.time(),
                                                   tree_cpu_seconds(), work_started_at=began, work_cpu_s=began_cpu))
