"""The uv program the harness runs (to resolve locks, install entries, build its wheel and make the API
reader's environment): one place that finds it, so a test can stand in for it there."""

from __future__ import annotations

import shutil


def uv() -> str | None:
    """The uv executable: the runner's own (locks/runner.txt installs it beside nox), else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")
