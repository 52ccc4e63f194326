"""An upgrade's entries die with the run that started them, whatever ends it (Ctrl-C, SIGTERM, or a
SIGKILL that runs no clean-up, as an out-of-memory killer sends), so no entry of a dead run writes into
reports/ beside the next run.

Each entry's nox session starts as the leader of its own process group: its installer and its pytest
(and whatever they start) are in that group. As its first step the session asks the kernel (Linux
prctl PR_SET_PDEATHSIG) for SIGTERM when the run dies, and handles SIGTERM by killing its whole group
with SIGKILL: one hook covers the entire chain nox -> uv / pytest -> ... (a death signal asked for by
each level would miss any level that forgot to ask, and does not survive a fork). The session asks
itself, not a preexec_fn between fork and exec, which is unsafe while the run's display has threads;
before it asks it has started nothing, and a run that died meanwhile is seen by its parent pid. The run stops its entries on
Ctrl-C the same way: SIGTERM to each session. The children inherit the run lock's file descriptor
(harness.stack.run.run_directory), so the lock stays held until the last of them has exited.

Elsewhere (no prctl) the run still stops its entries on Ctrl-C and SIGTERM; a SIGKILL then leaves them
running, but still holding the run lock, so a new run refuses until they end.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

from harness import env_vars
from harness.stack import boundary

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _libc():
    """The C library this process already has loaded (its prctl), found without a process: asking
    ctypes.util.find_library runs ldconfig, once in every process that imports this module."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the running program's symbols, libc's among them
        return libc if hasattr(libc, "prctl") else None
    except (OSError, AttributeError):
        return None


_LIBC = _libc()


def dies_with_parent() -> bool:
    """Whether this system can ask the kernel to signal a child when its parent dies."""
    return _LIBC is not None


def popen_options(inherit: tuple[int, ...] = ()) -> dict:
    """subprocess.Popen's options for an entry: its own process group, and the file descriptors (the
    run lock) it keeps open for as long as it lives. Nothing runs between fork and exec (no preexec_fn:
    the run's display has threads); the session asks for its death signal itself (follow_run)."""
    return {"process_group": 0, "pass_fds": inherit}


def child_environment() -> dict[str, str]:
    """What an entry is told so that it can follow this run: the run's process id."""
    return {env_vars.RUN_PID: str(os.getpid())}


def end_group(signum, frame) -> None:
    os.killpg(0, signal.SIGKILL)  # this session, its installer, its pytest and their children, at once


def follow_run() -> None:
    """In an entry's nox session started by `upgrade`, first thing: on SIGTERM (the run died, or stopped
    it) kill the session's whole process group, and ask the kernel for that SIGTERM when the run dies;
    a run that died before the request took effect is seen at once (the parent is no longer the run).
    Nothing otherwise: a session a user started from a shell or a script shares their process group and
    keeps nox's own handling."""
    run = boundary.given(env_vars.RUN_PID)
    if not run or os.getpgrp() != os.getpid():
        return
    signal.signal(signal.SIGTERM, end_group)
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != int(run):
        end_group(signal.SIGTERM, None)
