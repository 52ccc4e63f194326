"""`PATH` or `REV:PATH` (a file as git revision REV holds it), as `--baseline-from` and `--candidate-from`
take them. Plain Python: run_options carries the text to child processes with its path made absolute,
since they run elsewhere than where it was typed."""

from __future__ import annotations

from pathlib import Path


def split(text: str, base: Path) -> tuple[str | None, str]:
    """(REV, PATH) of `REV:PATH`; (None, text) for a plain path, or for a file that exists as typed
    (its name may hold a colon)."""
    revision, colon, path = text.partition(":")
    if not colon or (base / text).exists():
        return None, text
    return revision, path


def absolute(text: str, base: Path) -> str:
    """The same text with its path taken from `base`: `REV:/abs/path` or `/abs/path`."""
    revision, path = split(text, base)
    full = str((base / path).resolve()) if path else path
    return full if revision is None else f"{revision}:{full}"
