"""How the host's messages show a session's log and a path: its last lines, and the path as the user who typed
the command can open it (`upgrade` and `accept` share them)."""

from __future__ import annotations

import os
from pathlib import Path


def log_tail(path: Path, lines: int = 8) -> str:
    """The end of a session's log, indented, for a message that says why it stopped."""
    try:
        return "\n".join("    " + ln for ln in path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "    (no log)"


def shown_path(path: Path, typed_in: str | Path | None) -> str:
    """`path` as the user who typed the command in `typed_in` can open it: relative to that directory
    (`../reports/baseline.log` from a subdirectory), absolute when that is shorter or it is elsewhere."""
    path = Path(path).resolve()
    relative = os.path.relpath(path, Path(typed_in or ".").resolve())
    return relative if len(relative) <= len(str(path)) else str(path)
