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

from harness import env_vars
from harness.atomic import atomic_write_text
from harness.contract import environment
from harness.contract.encoding import decode_array
from harness.errors import HarnessError
from harness.model import departure, host_cpu

FORMAT_VERSION = 1


def record_command(accept: bool = False, builtin: bool = False) -> str:
    """The command that records golden values where this run is: a team's project (the `upgrade-harness`
    command sets HARNESS_PROJECT for its sessions; `builtin`: the built-in families, which it records only
    when asked) or this checkout's nox session."""
    if os.environ.get(env_vars.PROJECT):
        flags = [f for f, wanted in (("--record-builtin", builtin), ("--accept-changes", accept)) if wanted]
        return " ".join(["upgrade-harness golden", *flags])
    return "nox -s golden" + (" -- --accept-changes" if accept else "")


REPLACES = "replaces"  # a recording's change: an unreadable golden file written anew, whole
REMOVED = "removed"  # a recording's change: a departure no longer observed (its statement holds again)


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
    """Reads golden/<family>.json lazily; collects recordings to write in one go.

    ``fallback`` is where a family is read from when `directory` has no file for it: in a team's project,
    the tool's own golden values of the built-in contracts, so they need not live in the team's repository
    unless the team records its own (`upgrade-harness golden --record-builtin`). Recordings always go to
    `directory` and are compared with what it holds.
    """

    def __init__(self, directory: str | os.PathLike, fallback: str | os.PathLike | None = None):
        self.directory = Path(directory)
        self.fallback = Path(fallback) if fallback else None
        self._files: dict[tuple[str, bool], dict] = {}
        self._departures: dict[tuple[str, bool], dict[str, departure.Departure]] = {}
        self.recorded: dict[str, dict[str, dict]] = {}
        self.dropped: dict[str, set[str]] = {}  # departures a recording found no longer observed, by family

    def path(self, family: str) -> Path:
        return self.directory / f"{family}.json"

    def source(self, family: str) -> Path:
        """The file a family's golden values are read from: the project's, else the tool's own."""
        path = self.path(family)
        if path.exists() or self.fallback is None or not (self.fallback / path.name).exists():
            return path
        return self.fallback / path.name

    def folder(self, name: str) -> Path:
        """A folder of recorded files (the baseline's checkpoints) by name: the project's, else the tool's own."""
        path = self.directory / name
        if path.exists() or self.fallback is None or not (self.fallback / name).exists():
            return path
        return self.fallback / name

    def _recorder(self, family: str) -> str:
        """The command that records this family: a built-in one (the tool ships its values) needs
        --record-builtin in a team's project, where `golden` records only the team's own by default."""
        return record_command(builtin=self.is_builtin(family))

    def is_builtin(self, family: str) -> bool:
        """A family whose values the tool ships (only known in a team's project, where there is a fallback)."""
        return self.fallback is not None and (self.fallback / f"{family}.json").exists()

    def _load(self, family: str, own_only: bool = False) -> dict:
        if (family, own_only) in self._files:
            return self._files[(family, own_only)]
        path = self.path(family) if own_only else self.source(family)
        if not path.exists():
            raise GoldenProblem(
                f"golden file {path} does not exist; record it from the baseline with `{self._recorder(family)}`."
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
                f"(`git checkout -- {path}`) or record it again with `{self._recorder(family)}`."
            ) from None
        self._files[(family, own_only)] = data
        return data

    def get(self, family: str, key: str) -> dict:
        data = self._load(family)
        if key not in data["values"]:
            raise GoldenProblem(
                f"golden entry {key!r} is missing from {self.source(family)}; "
                f"record it from the baseline with `{self._recorder(family)}`."
            )
        return data["values"][key]

    def get_array(self, family: str, key: str) -> tuple[np.ndarray, dict]:
        entry = self.get(family, key)
        try:
            return decode_array(entry), entry
        except (KeyError, TypeError, ValueError) as exc:
            raise GoldenProblem(
                f"golden entry {key!r} in {self.source(family)} is malformed ({exc}); "
                f"record it again with `{self._recorder(family)}`."
            ) from None

    def departures(self, family: str, own_only: bool = False) -> dict[str, departure.Departure]:
        """The family's recorded departures by key (harness.model.departure); none where its golden file is
        missing or unreadable (its golden values say so). `own_only`: the project's own file (a recording's)."""
        found = self._departures.get((family, own_only))
        if found is None:
            try:
                found = departure.in_values(self._load(family, own_only)["values"])
            except GoldenProblem:
                found = {}
            self._departures[(family, own_only)] = found
        return found

    def provenance(self, family: str) -> dict:
        """Where the family's values were recorded (entry, versions, backend, host), as the file says."""
        return dict(self._load(family).get("provenance") or {})

    def host_note(self, family: str) -> str | None:
        """What a golden mismatch adds when the family's values were recorded on a CPU with other numerics
        features; None without a golden file (a contract that only compares with another entry's values)."""
        try:
            return host_cpu.difference(self.provenance(family).get("host"), environment.host_cpu())
        except GoldenProblem:
            return None

    def record(self, family: str, key: str, entry: dict) -> None:
        self.recorded.setdefault(family, {})[key] = entry

    def drop(self, family: str, key: str) -> None:
        """A recorded departure no longer observed: removed from the family's file when it is written."""
        self.dropped.setdefault(family, set()).add(key)

    def changes(self) -> list[tuple[str, str, str, Any, Any]]:
        """(family, key, 'added'|'changed', old, new) for every recording that differs from the
        project's own file (never the tool's: a team recording the built-ins adds its own copy);
        (family, key, 'removed', old, None) for a departure dropped from it; and (family, '*', 'replaces',
        why, None) for a file that exists but cannot be read: writing replaces it whole, so it is a change to
        accept, not values added."""
        out = []
        for family in sorted(self.dropped):
            old = self.departures(family, own_only=True)
            out += [(family, key, REMOVED, self._load(family, own_only=True)["values"][key], None)
                    for key in sorted(self.dropped[family]) if key in old]
        for family, values in sorted(self.recorded.items()):
            try:
                old = self._load(family, own_only=True)["values"]
            except GoldenProblem as exc:
                if self.path(family).exists():
                    out.append((family, "*", REPLACES, str(exc), None))
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
        for family in sorted(set(self.recorded) | set(self.dropped)):
            values = self.recorded.get(family, {})
            if family not in changed_families and self.path(family).exists():
                continue  # nothing new: leave the file (and its provenance) as it is
            try:
                merged = dict(self._load(family, own_only=True)["values"])
            except GoldenProblem:
                merged = {}
            merged.update(values)
            for key in self.dropped.get(family, ()):
                merged.pop(key, None)
            doc = {
                "format": FORMAT_VERSION,
                "family": family,
                "provenance": dict(provenance, recorded_at=_dt.datetime.now(_dt.timezone.utc).isoformat()),
                "values": dict(sorted(merged.items())),
            }
            atomic_write_text(self.path(family), dumps(doc))
            self._files[(family, True)] = self._files[(family, False)] = doc
            self._departures = {k: v for k, v in self._departures.items() if k[0] != family}
            written.append(self.path(family))
        return written
