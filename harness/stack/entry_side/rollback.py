"""The rollback runs of an upgrade: the baseline restores the checkpoints another entry wrote
(<reports>/checkpoints/<report name>/) and continues from them, running just the checkpoints family's
rollback checks. Its report, baseline-rollback-<writer>.json, speaks for the writer in the verdict
(harness.verdict.rollback): can a team that upgraded go back to its old pins and resume? The candidate's
checkpoints are rolled back, and each attribution entry's, so that a rollback check that changes is
blamed on the bump that changes it (harness.stack.run.followups decides which run).
"""

from __future__ import annotations

from harness.model.report import Report

CHECKPOINTS = "checkpoints"  # the run's checkpoints folder, one folder per report, published with the reports
PREFIX = "checkpoints/test_rollback_"  # the checks the baseline runs on another entry's checkpoints
SELECTION = "rollback-selection.txt"
REPORT = "baseline-rollback"  # baseline-rollback-<writer>.json


def checks(report: Report) -> tuple[str, ...]:
    """The rollback checks `report`'s entry ran (on its own checkpoints): those the baseline answers."""
    return tuple(c.id for c in report.checks if c.id.startswith(PREFIX))


def report_name(writer: str) -> str:
    """The report of the baseline's rollback of the checkpoints of the report named `writer`."""
    return f"{REPORT}-{writer}"


def folder_name(writer: str) -> str:
    """Where the entry writing report `writer` saves its checkpoints, in the run's reports directory."""
    return f"{CHECKPOINTS}/{writer}"


def wants_checkpoints(selection: list[str] | None) -> bool:
    """Whether a run of these checks (None: all) keeps the checkpoints it writes: only when a rollback
    run may read them (an attribution entry re-running other checks keeps none)."""
    return selection is None or any(i.startswith(PREFIX) for i in selection)
