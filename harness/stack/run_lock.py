"""One upgrade per reports directory at a time: a second run refuses at once, naming the running one,
instead of writing into the same files and producing a verdict mixed from two runs."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.model.report import now

LOCK_NAME = ".upgrade.lock"


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text() or "{}")
        return f"pid {info['pid']}, started {info['started']}: {info['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "details unreadable"


@contextlib.contextmanager
def hold(reports: Path, command: list[str]):
    """Hold the reports directory's lock for the run; HarnessError when another run holds it.

    An OS lock (flock), so a run that crashed or was killed never leaves a stale lock behind."""
    reports.mkdir(parents=True, exist_ok=True)
    path = reports / LOCK_NAME
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise HarnessError(
            f"another upgrade is writing to {reports} ({_holder(path)}); wait for it to finish, or give this "
            "run its own directory with `nox -s upgrade -- --reports DIR`."
        ) from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "started": now(), "command": " ".join(command or sys.argv)}))
        handle.flush()
        yield
    finally:
        handle.close()  # releases the lock
