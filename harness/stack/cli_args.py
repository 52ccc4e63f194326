"""What the host's sessions (`upgrade`, `accept`) share on their command line and in their messages."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from harness.errors import HarnessError


class HelpShown(Exception):
    """`nox -s <session> -- --help`: the usage is printed, nothing runs."""


def parse(parser: argparse.ArgumentParser, argv) -> argparse.Namespace:
    """The options, or HelpShown after --help, or HarnessError (exit 2) naming the bad arguments."""
    try:
        return parser.parse_args(list(argv))
    except SystemExit as exc:
        if exc.code == 0:  # --help was printed
            raise HelpShown() from None
        raise HarnessError(f"{parser.prog.removesuffix(' --')}: bad arguments {list(argv)}; "
                           "see the usage above.") from exc


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
