"""The golden store: values recorded from the baseline entry, one human-diffable JSON file per family.

Arrays are stored in harness.contract.encoding's exact form, so the bits survive a write and a read.
Error contracts store the exception type name, or null for "no error".
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from harness.atomic import atomic_write_text
from harness.contract.encoding import decode_array
from harness.errors import HarnessError

FORMAT_VERSION = 1
RECORD_COMMAND = "nox -s golden"


class GoldenProblem(HarnessError):
    """A golden file or entry is missing or unreadable: the check cannot be judged."""


def dumps(doc: dict) -> str:
    """JSON with one line per golden value, so a diff names exactly the values that changed."""
    head = {k: v for k, v in doc.items() if k != "values"}
    lines = [json.dumps(head, indent=1)[:-2] + ',\n "values": {']
    items = list(doc["values"].items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, separators=(', ', ': '))}{comma}")
    lines.append(" }\n}\n")
    return "\n".join(lines)


class GoldenStore:
    """Reads golden/<family>.json lazily; collects recordings to write in one go."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self._files: dict[str, dict] = {}
        self.recorded: dict[str, dict[str, dict]] = {}

    def path(self, family: str) -> Path:
        return self.directory / f"{family}.json"

    def _load(self, family: str) -> dict:
        if family in self._files:
            return self._files[family]
        path = self.path(family)
        if not path.exists():
            raise GoldenProblem(
                f"golden file {path} does not exist; record it from the baseline with `{RECORD_COMMAND}`."
            )
        try:
            data = json.loads(path.read_text())
            if not isinstance(data, dict) or not isinstance(data.get("values"), dict):
                raise ValueError("top level must be an object with a 'values' object")
            if data.get("format") != FORMAT_VERSION:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT_VERSION}")
        except (OSError, ValueError) as exc:
            raise GoldenProblem(
                f"golden file {path} is unreadable ({exc}); restore it from git "
                f"(`git checkout -- {path}`) or record it again with `{RECORD_COMMAND}`."
            ) from None
        self._files[family] = data
        return data

    def get(self, family: str, key: str) -> dict:
        data = self._load(family)
        if key not in data["values"]:
            raise GoldenProblem(
                f"golden entry {key!r} is missing from {self.path(family)}; "
                f"record it from the baseline with `{RECORD_COMMAND}`."
            )
        return data["values"][key]

    def get_array(self, family: str, key: str) -> tuple[np.ndarray, dict]:
        entry = self.get(family, key)
        try:
            return decode_array(entry), entry
        except (KeyError, TypeError, ValueError) as exc:
            raise GoldenProblem(
                f"golden entry {key!r} in {self.path(family)} is malformed ({exc}); "
                f"record it again with `{RECORD_COMMAND}`."
            ) from None

    def record(self, family: str, key: str, entry: dict) -> None:
        self.recorded.setdefault(family, {})[key] = entry

    def changes(self) -> list[tuple[str, str, str, Any, Any]]:
        """(family, key, 'added'|'changed', old, new) for every recording that differs from disk."""
        out = []
        for family, values in sorted(self.recorded.items()):
            try:
                old = self._load(family)["values"]
            except GoldenProblem:
                old = {}
            for key, new in sorted(values.items()):
                if key not in old:
                    out.append((family, key, "added", None, new))
                elif old[key] != new:
                    out.append((family, key, "changed", old[key], new))
        return out

    def write(self, provenance: dict) -> list[Path]:
        """Merge recordings into the families whose values changed (atomically); return the paths written."""
        written = []
        changed_families = {family for family, *_ in self.changes()}
        for family, values in sorted(self.recorded.items()):
            if family not in changed_families and self.path(family).exists():
                continue  # nothing new: leave the file (and its provenance) as it is
            try:
                merged = dict(self._load(family)["values"])
            except GoldenProblem:
                merged = {}
            merged.update(values)
            doc = {
                "format": FORMAT_VERSION,
                "family": family,
                "provenance": dict(provenance, recorded_at=_dt.datetime.now(_dt.timezone.utc).isoformat()),
                "values": dict(sorted(merged.items())),
            }
            atomic_write_text(self.path(family), dumps(doc))
            self._files[family] = doc
            written.append(self.path(family))
        return written
