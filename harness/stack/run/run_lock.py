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


def check_writable(directory: Path, elsewhere: str = "") -> None:
    """The reports directory takes files (a probe written and removed): said before anything runs.
    `elsewhere`: how this command is given another directory (upgrade's `--reports`), when it can be."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise HarnessError(f"reports directory {directory} is not writable: "
                           f"{_unwritable(directory, exc, elsewhere)}.") from None


def _unwritable(directory: Path, exc: OSError, elsewhere: str) -> str:
    """What is wrong, on the path at fault (never the probe, a file the user never sees), and the fix."""
    where = directory if exc.filename is None or Path(exc.filename).parent == directory else exc.filename
    other = f", or {elsewhere}" if elsewhere else ""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{where}: {exc.strerror}; fix the permissions of it or of the directory that holds it{other}"
    if directory.is_file():
        return f"{directory} is a file, not a directory; move it away{other}"
    return f"{where} cannot be created ({exc.strerror or exc}); its parents must be directories{other}"
