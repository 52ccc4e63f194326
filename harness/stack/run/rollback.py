"""The rollback step of an upgrade: after the candidate ran, the baseline restores the checkpoints the
candidate wrote (reports/<run>/checkpoints/<candidate>/) and continues from them, running just the
checkpoints family's rollback checks. Its report, baseline-rollback.json, speaks for the candidate in the
verdict (harness.verdict.rollback): can a team that upgraded go back to its old pins and resume?
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.model import report_io
from harness.model.enums import Status
from harness.stack.environments.entry import checkpoints_folder

PREFIX = "checkpoints/test_rollback_"  # the checks the baseline runs on the candidate's checkpoints
SELECTION = "rollback-selection.txt"


def source(directory: Path, candidate: str) -> tuple[Path, list[str]] | None:
    """The candidate's checkpoints folder and the rollback checks to run on it; None when the candidate did
    not complete, ran no rollback check, or wrote no checkpoint (its own report says why)."""
    report = directory / f"{candidate}.json"
    try:
        found = report_io.load(report)
    except HarnessError:
        return None
    checks = [c.id for c in found.checks if c.id.startswith(PREFIX)]
    folder = checkpoints_folder(report)
    if found.status != Status.COMPLETE or not checks or not folder.is_dir():
        return None
    return folder, checks


def write_selection(directory: Path, checks: list[str]) -> Path:
    path = directory / SELECTION
    path.write_text("\n".join(checks) + "\n")
    return path
