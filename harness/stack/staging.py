"""Changes to several project files made all or nothing (`nox -s accept`, a golden recording).

Every file is prepared aside, in a staged copy of the project's pins, locks and golden values under
reports/.staged/files/ (git ignores reports/; it is on the project's filesystem, so a move is a rename).
Only once all are ready is reports/.staged/journal.json written (atomically): the list of moves. Each
move is one os.replace, so a process killed while moving leaves some files moved and the journal there.
The next start (accept, upgrade, golden) then rolls forward: it makes the moves not yet made. Forward,
not back, because once the journal exists every new file is complete and checked, and undoing would need
a copy of every old file; a move already made has no staged file left, so rolling forward twice is the
same as once. A staged copy without a journal is an accept stopped before it changed anything: removed.
A process staging holds reports/.staged.lock (flock, released by the kernel when it dies), so another
never takes its work for leftovers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import filecmp
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.errors import HarnessError

STAGE_DIR = ".staged"
MIRRORED = "mirrored.json"  # the project folders copied into the stage: a file gone from their copy is removed
LOCK_NAME = ".staged.lock"
Say = Callable[[str], None]
Replace = Callable[[Path, Path], None]


@dataclasses.dataclass(frozen=True)
class Move:
    """One staged file moved onto the project's: its path, the same under files/ and under the root; or,
    `removed`, a project file the staged step deleted (an old checkpoint's data file), deleted in turn."""

    path: str
    removed: bool = False


@dataclasses.dataclass(frozen=True)
class Stage:
    """Where a project's staged changes are: root/reports/.staged/."""

    root: Path

    @property
    def dir(self) -> Path:
        return self.root / "reports" / STAGE_DIR

    @property
    def files(self) -> Path:
        """The staged copy, laid out as the project: files/harness/matrix.toml, files/locks/, files/golden/."""
        return self.dir / "files"

    @property
    def journal(self) -> Path:
        return self.dir / "journal.json"

    def copy_of(self, target: Path) -> Path:
        """The staged copy of a project file (or folder)."""
        return self.files / relative(self.root, target)


def relative(root: Path, target: Path) -> Path:
    try:
        return Path(target).resolve().relative_to(root.resolve())
    except ValueError:
        raise HarnessError(f"{target} is outside the project {root}; accept and golden recording change only files "
                           "inside it: move it there (the golden and locks paths of [tool.upgrade-harness]).") from None


class Busy(HarnessError):
    """Another process is staging changes to this project."""


@contextlib.contextmanager
def exclusive(root: Path) -> Iterator[None]:
    """Held while staging or recovering; HarnessError when another process holds it."""
    path = root / "reports" / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(f"another accept or golden recording is changing {root}'s pins, locks or golden "
                               f"values ({path} is held); wait for it to end, then run this again.") from None
        yield
    finally:
        os.close(fd)


def recover(root: Path, say: Say, replace: Replace = os.replace) -> None:
    """At a start, under `exclusive`: finish an interrupted commit, or clear a stage that never committed."""
    stage = Stage(root)
    if stage.journal.exists():
        moves = _read_journal(stage)
        left = [m for m in moves
                if ((stage.root / m.path).exists() if m.removed else (stage.files / m.path).exists())]
        _move(stage, left, replace)
        _clear(stage)
        say(f"finished an interrupted accept or golden recording: moved {len(left)} staged files into place "
            f"({', '.join(m.path for m in left) or 'all were already'}) from {stage.journal}")
    elif stage.dir.exists():
        _clear(stage)
        say("removed the staged files of an accept or golden recording that was stopped before it changed anything "
            f"({stage.dir})")


def recover_unless_busy(root: Path, say: Say) -> None:
    """`recover`, unless another process is staging right now (its stage is its own, not leftovers)."""
    if not Stage(root).dir.exists():
        return
    try:
        with exclusive(root):
            recover(root, say)
    except Busy:
        return


def create(root: Path, mirrored: list[Path]) -> Stage:
    """A fresh staged copy of the files and folders in `mirrored` (those that exist)."""
    stage = Stage(root)
    _clear(stage)
    stage.files.mkdir(parents=True)
    if os.stat(stage.files).st_dev != os.stat(root).st_dev:
        raise HarnessError(f"{stage.dir} is on another filesystem than {root}; a staged file could not be renamed "
                           "into place: make reports/ a folder of the project, not a mount or a link elsewhere.")
    atomic_write_text(stage.dir / MIRRORED, json.dumps([str(relative(root, t)) for t in mirrored if t.is_dir()]))
    for target in mirrored:
        copy = stage.copy_of(target)
        copy.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            shutil.copytree(target, copy, symlinks=True)
        elif target.exists():
            shutil.copy2(target, copy)
    return stage


def changed(stage: Stage) -> list[Move]:
    """The staged files that are new or differ from the project's, in path order; then the files of the
    mirrored folders the staged steps deleted."""
    moves = []
    for staged in sorted(p for p in stage.files.rglob("*") if p.is_file() or p.is_symlink()):
        rel = staged.relative_to(stage.files)
        target = stage.root / rel
        if not target.is_file() or not filecmp.cmp(staged, target, shallow=False):
            moves.append(Move(str(rel)))
    for folder in json.loads((stage.dir / MIRRORED).read_text()):
        for existing in sorted(p for p in (stage.root / folder).rglob("*") if p.is_file() or p.is_symlink()):
            rel = existing.relative_to(stage.root)
            if not (stage.files / rel).exists() and not (stage.files / rel).is_symlink():
                moves.append(Move(str(rel), removed=True))
    return moves


def commit(stage: Stage, moves: list[Move], replace: Replace = os.replace) -> None:
    """The journal, then every move, then the stage removed: killed anywhere, `recover` completes it."""
    atomic_write_text(stage.journal, json.dumps({"moves": [m.path for m in moves if not m.removed],
                                                 "removals": [m.path for m in moves if m.removed]}, indent=1) + "\n")
    _move(stage, moves, replace)
    _clear(stage)


def discard(stage: Stage) -> None:
    """A stage that will not be committed: the project was never touched."""
    _clear(stage)


def _read_journal(stage: Stage) -> list[Move]:
    try:
        journal = json.loads(stage.journal.read_text())
        return ([Move(str(p)) for p in journal["moves"]]
                + [Move(str(p), removed=True) for p in journal.get("removals", [])])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(f"{stage.journal} is unreadable ({exc}): an interrupted accept cannot be finished. "
                           f"Its staged files are in {stage.files}; copy them into place by hand or run "
                           f"`git checkout -- harness/matrix.toml locks golden`, then delete {stage.dir}.") from None


def _move(stage: Stage, moves: list[Move], replace: Replace) -> None:
    for move in moves:
        if move.removed:  # deleting twice is deleting once: a recovery may repeat it
            (stage.root / move.path).unlink(missing_ok=True)
            continue
        staged = stage.files / move.path
        if not staged.exists():
            continue  # moved before the process was stopped
        target = stage.root / move.path
        target.parent.mkdir(parents=True, exist_ok=True)
        replace(staged, target)


def _clear(stage: Stage) -> None:
    """The journal first: without it, what is left is never taken for a commit to finish."""
    stage.journal.unlink(missing_ok=True)
    shutil.rmtree(stage.dir, ignore_errors=True)
