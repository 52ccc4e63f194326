"""One upgrade per reports directory at a time: a second run refuses at once, naming the running one,
instead of writing into the same files and producing a verdict mixed from two runs."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.model.report import now

LOCK_NAME = ".upgrade.lock"
_HELD: list[int] = []  # the file descriptors of the locks this process holds


def held_fds() -> tuple[int, ...]:
    """The held locks' file descriptors, for the run's entries to inherit: a flock belongs to the open
    file description, so the lock stays held until the run and every entry it started have exited."""
    return tuple(_HELD)


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text() or "{}")
        text = f"pid {info['pid']}, started {info['started']}: {info['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "details unreadable"
    if not _alive(info["pid"]):
        text += "; that process has ended but entries it started still hold the lock while they stop"
    return text


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def hold(reports: Path, command: list[str]):
    """Hold the reports directory's lock for the run; HarnessError when another run holds it.

    An OS lock (flock), so a run that crashed or was killed never leaves a stale lock behind."""
    check_writable(reports)
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
        _HELD.append(handle.fileno())
        yield
    finally:
        if handle.fileno() in _HELD:
            _HELD.remove(handle.fileno())
        handle.close()  # releases the lock once no entry of the run holds it either


def check_writable(directory: Path) -> None:
    """The reports directory takes files (a probe written and removed): said before anything runs."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise HarnessError(f"reports directory {directory} is not writable: {_unwritable(directory, exc)}") from None


def _unwritable(directory: Path, exc: OSError) -> str:
    """What is wrong, on the path at fault, and the fix that fits it."""
    where = exc.filename or directory
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{where}: {exc.strerror}; fix its permissions or give --reports a directory you can write."
    if directory.is_file():
        return f"{directory} is a file, not a directory; move it away or give --reports another directory."
    return (f"{where} cannot be created ({exc.strerror or exc}); give --reports a directory that can be created "
            "(its parents must be directories).")
