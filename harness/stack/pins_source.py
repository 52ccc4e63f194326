"""Where one side's pins are read from: a file of the working tree, or that file as a git revision holds
it (`origin/main:requirements.txt`), so a branch's bump can be judged against the default branch's pins."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from harness import revision_path
from harness.errors import HarnessError

EXAMPLE = "e.g. origin/main:requirements.txt"


@dataclasses.dataclass(frozen=True)
class PinsSource:
    """A pins file: its path in the working tree's terms (absolute), and the revision to read it at (None:
    the file as it is on disk)."""

    path: Path
    revision: str | None = None

    def shown(self, base: Path) -> str:
        """How to type it in `base`: `origin/main:requirements.txt`, `requirements.txt`."""
        path = os.path.relpath(self.path, base) if self.path.is_relative_to(base) else str(self.path)
        return path if self.revision is None else f"{self.revision}:{path}"


def parse(text: str, base: Path) -> PinsSource:
    """`PATH` or `REV:PATH` as typed in `base`; HarnessError naming the fix when a half is missing."""
    if "\x00" in str(text):
        raise HarnessError(f"{text!r} holds a NUL byte, which no path or revision holds; give PATH or REV:PATH, "
                           f"{EXAMPLE}.")
    revision, path = revision_path.split(str(text), base)
    if revision is not None and not path:
        raise HarnessError(f"{text!r} names no file after the colon; give REV:PATH, {EXAMPLE}.")
    if revision == "":
        raise HarnessError(f"{text!r} names no revision before the colon; give REV:PATH, {EXAMPLE}, "
                           "or the file's path alone for the working tree's.")
    if revision is not None and revision.startswith("-"):  # git would read it as an option
        raise HarnessError(f"{text!r}: {revision!r} is not a revision (it starts with '-'); give REV:PATH, {EXAMPLE}.")
    return PinsSource((base / path).resolve(), revision)
