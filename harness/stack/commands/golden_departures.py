"""The departures an acceptance's recording made: statements the new baseline breaks, recorded as its behaviour
(harness.model.departure), and those it dropped because they hold again; read from the golden files before and
after (the staged copy), for accept's output and its golden/CHANGELOG.md entry."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.model import departure
from harness.model.departure import Departure


@dataclasses.dataclass(frozen=True)
class DepartureChanges:
    recorded: list[Departure] = dataclasses.field(default_factory=list)  # new, or recorded again with other values
    dropped: list[Departure] = dataclasses.field(default_factory=list)  # no longer observed: the statements hold


def _entries(folder: Path) -> dict[tuple[str, str], dict]:
    """Every departure entry of a golden folder's family files, by (file, key); an unreadable file has none."""
    found = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            values = json.loads(path.read_text()).get("values") or {}
        except (OSError, ValueError, AttributeError):
            continue
        found.update({(path.name, key): entry for key, entry in values.items()
                      if key.startswith(departure.KEY) and departure.of_entry(entry) is not None})
    return found


def between(before: Path, after: Path) -> DepartureChanges:
    """What the golden folder `after` records of departures that `before` did not, and what it dropped."""
    old, new = _entries(before), _entries(after)
    recorded = [departure.of_entry(entry) for where, entry in new.items() if old.get(where) != entry]
    dropped = [departure.of_entry(entry) for where, entry in old.items() if where not in new]
    return DepartureChanges(recorded, dropped)


def recorded_text(found: Departure) -> str:
    """A departure recorded: the check, the statement and how far the release was from it."""
    return (f"`{found.check}`: {found.statement} departs from its stated {departure.stated(found)}"
            f" ({departure.size_text(found.size)})")


def dropped_text(found: Departure) -> str:
    """A departure dropped: its statement holds again."""
    return (f"`{found.check}`: {found.statement} holds again (its departure since "
            f"{departure.stack_text(found.recorded_on)} is dropped)")
