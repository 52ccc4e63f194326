"""The progress file: what a running entry is doing (its phase, checks done of collected).

The entry writes it (its nox session while installing, then its pytest run) and `nox -s upgrade`
reads it every fraction of a second to show the entries' progress, so neither side may ever fail
because of it: writes are atomic and best effort, and a reader given anything unreadable gets None.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path

from harness.atomic import atomic_write_text


class Phase(enum.StrEnum):
    """Where an entry is, in the order it gets there."""

    STARTING = "starting"  # nothing written yet: nox is making or reusing the entry's environment
    RESOLVING = "resolving"  # compiling a lock for an ad-hoc (unlocked) entry
    INSTALLING = "installing"  # syncing the environment to the lock
    COLLECTING = "collecting"  # pytest starts and imports the contract suite (and JAX)
    RUNNING = "running"  # checks running: done of total
    REPORTING = "reporting"  # every check ran; the report is being written


@dataclass(frozen=True)
class Progress:
    phase: Phase
    done: int = 0  # checks finished
    total: int | None = None  # checks collected; None until collection is over
    # The check running now (its id), written as it starts: a process that dies inside one (an accelerator's
    # compiler aborting, say) leaves the check named for its report's reason (harness.stack.entry_side.ending).
    current: str | None = None


def write(path: Path | str, progress: Progress) -> None:
    """Best effort: a progress file that cannot be written must not fail the entry. Nothing is written
    once the directory is gone (the upgrade that reads it has ended)."""
    path = Path(path)
    if not path.parent.is_dir():
        return
    doc = {"phase": progress.phase.value, "done": progress.done, "total": progress.total}
    if progress.current is not None:
        doc["current"] = progress.current
    try:
        atomic_write_text(path, json.dumps(doc) + "\n")
    except OSError:
        pass


def read(path: Path | str) -> Progress | None:
    """The progress in the file, or None when it is missing, half-written or not a progress file."""
    try:
        doc = json.loads(Path(path).read_text())
        phase, done, total, current = Phase(doc["phase"]), doc["done"], doc.get("total"), doc.get("current")
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if not _count(done) or not (total is None or _count(total)) or not (current is None or isinstance(current, str)):
        return None
    return Progress(phase, done, total, current)


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
