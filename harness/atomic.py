"""Atomic file writes: a reader sees the old content or the new, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path | str, text: str) -> None:
    """Write a file so that a reader sees the old content or the new, never half of either."""
    _atomic_write(path, text, "w")


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """atomic_write_text's bytes (a compressed record, harness.stack.run.report_cache)."""
    _atomic_write(path, data, "wb")


def _atomic_write(path: Path | str, content: str | bytes, mode: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(content)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report is for everyone to read
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
