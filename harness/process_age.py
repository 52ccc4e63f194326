"""How long this process has run, from Linux's /proc: the start-up a process measures before its own code
ran (an entry's session, its contract suite: --harness-phases)."""

from __future__ import annotations

import os


def seconds() -> float | None:
    """Seconds since this process started; None where /proc does not tell (not Linux)."""
    try:
        with open("/proc/self/stat") as fh:
            started_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, uptime - started_ticks / os.sysconf("SC_CLK_TCK"))
