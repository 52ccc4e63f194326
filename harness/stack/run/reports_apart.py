"""The reports directory holds only what runs write. A run publishes there, moves the last run's files to
previous/ and replaces the folders it writes whole (the plan's locks/, checkpoints/): over the project's
own files (its root, golden values, locks, contracts) it would move or replace them. `--reports ""` once
moved a team's committed locks/baseline.txt to previous/."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.stack import project
from harness.stack.entry_side.rollback import CHECKPOINTS
from harness.stack.pins.plan import LOCKS_DIR
from harness.stack.run.run_dir import PREVIOUS
from harness.stack.workspace import Workspace

WRITTEN_WHOLE = (LOCKS_DIR, CHECKPOINTS, PREVIOUS)  # folders of the reports directory a run moves or replaces


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check(ws: Workspace) -> None:
    """HarnessError (before anything is written) when the reports directory is the project's root, lies in
    its golden or locks directory, or would move or replace one of those or a contracts directory."""
    found, reports = project.load(ws), ws.reports.resolve()
    why = _overlap(reports, found)
    if why:
        raise HarnessError(f"reports directory {reports} {why}: a run publishes its files there, moves the last "
                           f"run's to {PREVIOUS}/ and replaces its {LOCKS_DIR}/ and {CHECKPOINTS}/; give --reports "
                           "a directory of its own (the default is reports/ in the project's root).")


def _overlap(reports: Path, found: project.Project) -> str | None:
    """How the reports directory overlaps the project's own files, the first found; None when it does not."""
    if reports == found.root.resolve():
        return "is the project's root"
    own = [("golden", found.golden.resolve()), ("locks", found.locks.resolve()),
           *(("contracts", d.resolve()) for d in found.own_contracts)]
    written = (reports, *(reports / name for name in WRITTEN_WHOLE))
    for what, folder in own:
        if what != "contracts" and _within(reports, folder):  # a run writes nothing into its contracts
            return f"is inside the project's {what} directory {folder}"
        if any(_within(folder, place) for place in written):
            return f"would move or replace the project's {what} directory {folder}"
    return None
