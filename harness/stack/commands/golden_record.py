"""`nox -s golden` (`upgrade-harness golden`): the recording, all or nothing.

One recording writes from two pytest processes (the main suite's, and the multi-device family's beside it:
harness.stack.entry_side.multi_device), each its own golden files, and the checkpoints family writes its
baseline checkpoint into golden/checkpoints/. Each process refuses on its own what it cannot write, so without
more, a family that passed was written while another failed. Instead, the recording writes into a staged copy
of the project's pins, locks and golden values (harness.stack.staging), and its files move into place only when
the whole recording succeeded; a failed or interrupted one leaves the project as it was and its staged copy
removed. Under accept, which stages the recording itself (HARNESS_STAGE), it writes into accept's staged copy
and accept moves it with the pins and locks.

The departures an acceptance's recording made: statements the new baseline breaks, recorded as its behaviour
(harness.model.departure), and those it dropped because they hold again; read from the golden files before and
after (the staged copy), for accept's output and its golden/CHANGELOG.md entry.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from harness.model import departure
from harness.model.departure import Departure
from harness.stack import project, staging
from harness.stack.workspace import Workspace


Say = Callable[[str], None]


def mirrored(ws: Workspace) -> list[Path]:
    """What a recording or an acceptance may change, copied into the stage first: the pins (this checkout's
    matrix.toml; a team's pins file is its own), the locks and the golden values."""
    found = project.load(ws)
    return ([ws.matrix] if ws.is_checkout else []) + [found.locks, found.golden]


def record(ws: Workspace, run: Callable[[Workspace], None], say: Say) -> None:
    """`run` the recording in `ws` staged: its changes moved into place once it returned, none if it raised."""
    if ws.stage is not None:  # accept's: accept moves what its recording staged, with the pins and locks
        run(ws)
        return
    with staging.exclusive(ws.root):
        staging.recover(ws.root, say)
        stage = staging.create(ws.root, mirrored(ws))
        try:
            run(ws.staged(stage.files))
            moves = staging.changed(stage)
        except BaseException:
            staging.discard(stage)
            say("golden: NOT written: the recording did not succeed (see above); nothing it recorded was moved "
                "into place, in either process: the project's golden values are as they were")
            raise
        staging.commit(stage, moves)
    moved = [m.path for m in moves]
    say(f"golden: moved into place at once: {', '.join(_folded(moved)) or 'nothing (all as recorded already)'}")


def _folded(paths: list[str]) -> list[str]:
    """The files moved, a checkpoint's many files as its folder: golden/checkpoints/float32/ (12 files)."""
    shown: dict[str, int] = {}
    for path in paths:
        parts = Path(path).parts
        key = f"{'/'.join(parts[:3])}/" if len(parts) > 3 else path
        shown[key] = shown.get(key, 0) + 1
    return [key if n == 1 else f"{key} ({n} files)" for key, n in shown.items()]


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
