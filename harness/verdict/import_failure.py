"""A candidate whose stack cannot import a library: one finding (which package, with which versions,
the exception and the library's own file and line), instead of a "check missing" row per check.
"""

from __future__ import annotations

from harness.model.enums import CheckKind, Mark
from harness.model.report import LIBRARY_ORIGINS, Report
from harness.model.verdict import Change, ImportFailure

_COLLECTED = "could not be collected: "


def _package(frame: str) -> str:
    """'optax' for 'optax/contrib/x.py:39'; 'six' for a single-file module's 'six.py:10'."""
    return frame.split("/", 1)[0].split(".py:", 1)[0]


def find(base: Report, other: Report, changes: list[Change]) -> ImportFailure | None:
    """The first module that failed to import inside an installed library, with the checks it kept from running."""
    # A module whose traceback never enters the stack's libraries (a syntax error surfaces in pytest's own
    # frame) is the contract's problem, not the stack's import failure.
    failures = [c for c in other.checks if c.kind == CheckKind.COLLECTION
                and any(_package(f) in LIBRARY_ORIGINS for f in c.library_frames)]
    if not failures:
        return None
    first = failures[0]
    frames = first.library_frames
    package = _package(frames[0])
    own = [f for f in frames if _package(f) == package]
    versions = other.environment.versions
    alongside = {p: versions.get(p) for p in dict.fromkeys(_package(f) for f in frames) if p != package}
    modules = tuple(f"{c.nodeid}::" for c in failures)
    not_run = [c.check_id for c in changes if c.mark == Mark.MISSING
               and (b := base.check(c.check_id)) is not None and b.nodeid.startswith(modules)]
    exception = first.message.split(_COLLECTED, 1)[-1]
    return ImportFailure(package=package, version=versions.get(package), alongside=alongside, exception=exception,
                         raised_at=own[-1], frames=frames, checks_not_run=not_run,
                         modules=[c.nodeid for c in failures])
