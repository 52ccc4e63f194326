"""An upgrade's entries die with the run that started them, whatever ends it (Ctrl-C, SIGTERM, or a
SIGKILL that runs no clean-up, as an out-of-memory killer sends), so no entry of a dead run writes into
reports/ beside the next run.

Each entry's nox session starts as the leader of its own process group: its installer and its pytest
(and whatever they start) are in that group. On Linux the kernel sends the session SIGTERM when the
run dies (prctl PR_SET_PDEATHSIG, asked for between fork and exec), and the session's handler kills its
whole group with SIGKILL, so one hook covers the entire chain nox -> uv / pytest -> ... (a death signal
asked for by each level would not reach a level that forgot to ask). The run stops its entries on
Ctrl-C the same way: SIGTERM to each session. The children inherit the run lock's file descriptor
(harness.stack.run_lock), so the lock stays held until the last of them has exited.

Elsewhere (no prctl) the run still stops its entries on Ctrl-C and SIGTERM; a SIGKILL then leaves them
running, but still holding the run lock, so a new run refuses until they end.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from typing import Callable

from harness import env_vars

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


_LIBC = _libc()  # loaded here: the child between fork and exec must not load libraries


def dies_with_parent() -> bool:
    """Whether this system can ask the kernel to signal a child when its parent dies."""
    return _LIBC is not None


def _child_setup(parent: int) -> Callable[[], None]:
    def setup() -> None:  # runs in the child between fork and exec: no imports, no allocation of note
        if _LIBC is not None:
            _LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
            if os.getppid() != parent:  # the run died before the request took effect
                os._exit(1)
    return setup


def popen_options(inherit: tuple[int, ...] = ()) -> dict:
    """subprocess.Popen's options for an entry: its own process group, SIGTERM when the run dies, and
    the file descriptors (the run lock) it keeps open for as long as it lives."""
    return {"process_group": 0, "preexec_fn": _child_setup(os.getpid()), "pass_fds": inherit}


def end_group(signum, frame) -> None:
    os.killpg(0, signal.SIGKILL)  # this session, its installer, its pytest and their children, at once


def follow_run() -> None:
    """In an entry's nox session started by `upgrade`: on SIGTERM (the run died or stopped it), kill
    the session's whole process group. Nothing otherwise: a session a user started from a shell or a
    script shares their process group and keeps nox's own handling."""
    if os.environ.get(env_vars.RUN_ID) and os.getpgrp() == os.getpid():
        signal.signal(signal.SIGTERM, end_group)
