"""Each upgrade writes into its own run directory, reports/.runs/<run id>/, and only a run that finished
is published into reports/, so nothing a stopped or killed run (or an entry of it) writes can land
among the reports of another run. The run lock (harness.stack.run.run_lock) is held meanwhile: publishing
never interleaves with another run's.

While the run lasts, its steps are handed a workspace (harness.stack.workspace) whose reports are the run's
directory (the entries are told it through HARNESS_REPORTS_DIR) and whose home is the reports directory
it will be published to.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
from pathlib import Path

from harness.stack.run import run_directory
from harness.stack.workspace import Workspace
from harness.verdict import judgement

RUNS = ".runs"
PREVIOUS = "previous"  # the last run's files, moved aside as a run publishes
SUMMARY_FILES = run_directory.SUMMARY_FILES  # the files of a run besides its entries' reports, junit files and logs


def keep_previous(reports: Path, names: list[str], folders: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Move last run's reports (and its `folders`: the checkpoints) to reports/previous/ so a new run never
    silently overwrites them; what previous/ held before is the run before that one's, replaced."""
    files = [file for name in names for file in run_directory.entry_files(name)]
    kept = [name for name in dict.fromkeys([*files, *SUMMARY_FILES, *folders]) if (reports / name).exists()]
    if kept:
        (reports / PREVIOUS).mkdir(exist_ok=True)
    for name in kept:
        if (reports / name).is_dir():
            shutil.rmtree(reports / PREVIOUS / name, ignore_errors=True)
        os.replace(reports / name, reports / PREVIOUS / name)
    return kept


def start(ws: Workspace, run_id: str) -> Workspace:
    """The run's directory, made: the workspace the run's steps write into (published or not), holding the
    run's RunDirectory (what the run reads from it, read once)."""
    run = ws.reports / RUNS / run_id
    run.mkdir(parents=True)
    return dataclasses.replace(ws.running(run), run_directory=run_directory.RunDirectory(run))


def unfinished(home: Path) -> list[Path]:
    """Run directories left by runs that never finished (stopped, killed): oldest first."""
    runs = home / RUNS
    return sorted((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.name) if runs.is_dir() else []


def prune(home: Path, keep: int = 1) -> Path | None:
    """Remove unfinished runs' directories but the newest `keep` (called under the run lock, so none of
    them is live); the newest one kept, for its logs, or None."""
    left = unfinished(home)
    for stale in left[:-keep] if keep else left:
        shutil.rmtree(stale, ignore_errors=True)
    return left[-1] if keep and left else None


def newer_than_the_last_verdict(home: Path, run: Path) -> bool:
    """Whether an unfinished run's directory changed after the last published verdict: the run after it
    named it and finished, so the runs after that need not name it again (its files stay)."""
    verdict = home / judgement.SUMMARY_JSON  # written as a run ends
    try:
        return not verdict.exists() or run.stat().st_mtime_ns >= verdict.stat().st_mtime_ns
    except OSError:
        return True


def publish(run: Path, home: Path) -> list[str]:
    """Move every file (and folder) of the finished run into `home`, each with one rename, so a reader
    sees a report whole or not at all; then remove the run directory. The names moved. The sessions' job
    files (what they were told, not what they found: their progress files are gone) and the parts its
    entries' reports were joined from (harness.stack.entry_side.parts) are not published."""
    shutil.rmtree(run_directory.RunDirectory(run).jobs, ignore_errors=True)
    shutil.rmtree(run_directory.RunDirectory(run).parts, ignore_errors=True)
    moved = []
    for item in sorted(run.iterdir()):
        target = home / item.name
        if item.is_dir() and target.is_dir():
            shutil.rmtree(target)  # a folder (the plan's locks/) is replaced whole, as it was rewritten whole
        os.replace(item, target)
        moved.append(item.name)
    run.rmdir()
    with contextlib.suppress(OSError):
        (home / RUNS).rmdir()  # only when no unfinished run's directory is left in it
    return moved
