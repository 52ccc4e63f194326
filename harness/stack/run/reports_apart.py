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
    own = [("golden", found.golden.resolve()), ("locks", found.locks.resolve()),
           *(("contracts", d.resolve()) for d in found.own_contracts)]
    why = None
    if reports == found.root.resolve():
        why = "is the project's root"
    for what, folder in own:
        if why is None and what != "contracts" and _within(reports, folder):
            why = f"is inside the project's {what} directory {folder}"
        for written in (reports, *(reports / name for name in WRITTEN_WHOLE)):
            if why is None and _within(folder, written):
                why = f"would move or replace the project's {what} directory {folder}"
    if why:
        raise HarnessError(f"reports directory {reports} {why}: a run publishes its files there, moves the last "
                           f"run's to {PREVIOUS}/ and replaces its {LOCKS_DIR}/ and {CHECKPOINTS}/; give --reports "
                           "a directory of its own (the default is reports/ in the project's root).")
