"""One run's folder and what the run has read from it: every file name of a run (an entry's report, log and
junit file, the plan, the follow-ups' selections, the checkpoints, the summaries) built here, and its reports
held typed once read (harness.verdict.run_reports), so that the run's steps (the reports kept for reuse, the
follow-ups, the bisection, the API diff, the verdict) read, validate and compare each report once.

The folder is reports/.runs/<run id>/ while an upgrade runs (harness.stack.run.run_dir makes and publishes
it), the reports directory afterwards, or the directory `judge DIR` is given. The run's steps are handed
it with their workspace (`of`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from harness.model import api_diff, bisection, golden_changes, report_io
from harness.model.report import Report
from harness.stack.pins import plan
from harness.stack.entry_side import parts as entry_parts, rollback
from harness.verdict import judgement
from harness.verdict.run_reports import RunReports

if TYPE_CHECKING:
    from harness.stack.workspace import Workspace

REPLAY = "baseline-replay"  # the baseline re-running the candidate's falsifying examples
EXAMPLES = "replay-examples.json"  # check id -> the @reproduce_failure arguments the replay runs
REPLAY_SELECTION = "replay-selection.txt"
ATTRIBUTION_SELECTION = "attribution-selection.txt"
BISECT_SELECTION = "bisect-selection.txt"
JOBS = "jobs"  # the sessions' job files (harness.model.entry_job)
ENTRY_SUFFIXES = (".json", ".junit.xml", ".log")  # an entry's report, its junit file, its log
# The files of a run besides its entries' reports, junit files and logs.
SUMMARY_FILES = (judgement.SUMMARY_MD, judgement.SUMMARY_JSON, judgement.REPORT_HTML, ATTRIBUTION_SELECTION,
                 REPLAY_SELECTION, EXAMPLES, plan.PLAN_FILE, bisection.BISECT_FILE, BISECT_SELECTION,
                 rollback.SELECTION, api_diff.API_DIFF_FILE, golden_changes.GOLDEN_CHANGES_FILE)


def entry_files(name: str) -> list[str]:
    """The file names of report `name`: its report, junit file and log."""
    return [f"{name}{suffix}" for suffix in ENTRY_SUFFIXES]


@dataclasses.dataclass(frozen=True)
class RunDirectory:
    """The folder `path` of one run, and the reports the run read from it (`loaded`)."""

    path: Path
    loaded: RunReports = dataclasses.field(default_factory=RunReports, compare=False, repr=False)

    @classmethod
    def of(cls, ws: Workspace) -> RunDirectory:
        """The run directory of the workspace's run (the one `running` was given, with what the run read), or
        the workspace's reports directory read afresh (a CI job, a command outside an upgrade)."""
        held = ws.run_directory
        return held if isinstance(held, RunDirectory) and held.path == ws.reports else cls(ws.reports)

    @classmethod
    def at(cls, where: RunDirectory | Path) -> RunDirectory:
        """`where` itself, or a run directory of the folder `where` (read afresh)."""
        return where if isinstance(where, RunDirectory) else cls(Path(where))

    # --- an entry's files -----------------------------------------------------------------------------

    def report_file(self, name: str) -> Path:
        """The report named `name` (an entry's, the replay's, a rollback's, a bisection probe's)."""
        return self.path / f"{name}.json"

    def log(self, name: str) -> Path:
        return self.path / f"{name}.log"

    def junit(self, name: str) -> Path:
        return self.path / f"{name}.junit.xml"

    def job(self, name: str) -> Path:
        """The job file of the session writing report `name` (several writers: the rollbacks' prefix), which
        it is told (harness.model.entry_job); in a folder of their own, never read as a report."""
        return self.jobs / f"{name}.json"

    @property
    def jobs(self) -> Path:
        return self.path / JOBS

    @property
    def parts(self) -> Path:
        """The parts of its entries' reports, each run and kept apart, before they were joined."""
        return self.path / entry_parts.PARTS

    def reports(self, name: str) -> Report:
        """The typed report `name`, read and validated once in this run; ReportProblem when unusable."""
        return self.loaded.load(self.report_file(name))

    def load(self, path: Path) -> Report:
        """A report of this run given by its path (one named by the verdict's inputs), read once."""
        return self.loaded.load(path)

    def write(self, name: str, report: Report) -> None:
        """Write report `name` (validated, atomic: report_io.write); read back from memory."""
        path = self.report_file(name)
        report_io.write(path, report)
        self.loaded.wrote(path, report)

    # --- the run's other files ------------------------------------------------------------------------

    @property
    def replay(self) -> Path:
        return self.report_file(REPLAY)

    def rollback_report(self, writer: str) -> Path:
        """The baseline's rollback of the checkpoints of report `writer`."""
        return self.report_file(rollback.report_name(writer))

    @property
    def checkpoints(self) -> Path:
        return self.path / rollback.CHECKPOINTS

    def checkpoints_of(self, writer: str) -> Path:
        """Where the entry writing report `writer` saves its checkpoints."""
        return self.path / rollback.folder_name(writer)

    @property
    def plan(self) -> Path:
        return self.path / plan.PLAN_FILE

    @property
    def locks(self) -> Path:
        return self.path / plan.LOCKS_DIR

    @property
    def examples(self) -> Path:
        return self.path / EXAMPLES

    @property
    def replay_selection(self) -> Path:
        return self.path / REPLAY_SELECTION

    @property
    def attribution_selection(self) -> Path:
        return self.path / ATTRIBUTION_SELECTION

    @property
    def rollback_selection(self) -> Path:
        return self.path / rollback.SELECTION

    @property
    def bisect_selection(self) -> Path:
        return self.path / BISECT_SELECTION

    @property
    def bisection(self) -> Path:
        return self.path / bisection.BISECT_FILE

    @property
    def api_diff(self) -> Path:
        return self.path / api_diff.API_DIFF_FILE

    @property
    def golden_changes(self) -> Path:
        return self.path / golden_changes.GOLDEN_CHANGES_FILE

    @property
    def summary(self) -> judgement.Outputs:
        """The verdict's Markdown, JSON and HTML files."""
        return judgement.Outputs.beside(self.path)
