"""Why an entry's suite ended before its report was complete, said in the report's `problem` and so in
the verdict's headline: "candidate was killed by SIGKILL after 212 of 345 checks (often out of memory)".

A killed pytest leaves a partial report that cannot say why (it was not running to say it): the entry's
nox session knows pytest's return code, `nox -s upgrade` knows nox's, and both know the checks done
from the progress file (harness.model.progress).
"""

from __future__ import annotations

import dataclasses
import signal
from pathlib import Path

from harness.model import report_io
from harness.model.enums import Status
from harness.model.progress import Phase, Progress
from harness.model.report import EntryInfo, unresolvable
from harness.verdict.run_reports import RunReports

# pytest's exit statuses that end a run early (pytest.ExitCode; the host does not import pytest).
PYTEST_INTERRUPTED, PYTEST_INTERNAL_ERROR, PYTEST_USAGE_ERROR = 2, 3, 4
CRASH_SIGNALS = {"SIGSEGV", "SIGBUS", "SIGABRT", "SIGFPE", "SIGILL"}  # the process's own fault
SIGNAL_NOTES = {"SIGKILL": "often out of memory", "SIGTERM": "a stop request: a job's time limit or a shutdown"}


def where(state: Progress | None) -> str:
    """How far the suite got: "in clipping/test_x, after 212 of 345 checks", "while collecting its checks"."""
    if state is None or state.phase == Phase.STARTING:
        return "before its suite started"
    if state.phase in (Phase.RESOLVING, Phase.INSTALLING):
        return "while installing its stack"
    if state.phase == Phase.COLLECTING:
        return "while collecting its checks"
    if state.phase == Phase.REPORTING:
        return f"while writing its report, after all {state.done} checks"
    after = f"after {state.done} of {state.total} checks" if state.total is not None else f"after {state.done} checks"
    return after if state.current is None else f"in {state.current}, {after}"


def explain(return_code: int, state: Progress | None) -> str:
    """The reason, worded to follow the entry's name; `return_code` is the process's (negative: a signal)."""
    at = where(state)
    if return_code < 0:
        try:
            name = signal.Signals(-return_code).name
        except ValueError:
            name = f"signal {-return_code}"
        verb = "crashed with" if name in CRASH_SIGNALS else "was killed by"
        note = SIGNAL_NOTES.get(name)
        return f"{verb} {name} {at}" + (f" ({note})" if note else "")
    if return_code == PYTEST_INTERRUPTED:
        return f"was interrupted {at}"
    if return_code == PYTEST_INTERNAL_ERROR:
        return f"crashed with a pytest internal error {at}"
    if return_code == PYTEST_USAGE_ERROR:
        return f"could not start its suite: pytest could not import a plugin or conftest, or was misused ({at})"
    return f"ended with exit status {return_code} {at}"


def record(report_file: Path, entry: EntryInfo, problem: str, started_at: str, run: RunReports | None = None,
           run_id: str | None = None) -> bool:
    """Say `problem` in the entry's report when it does not say why it is incomplete: set it on a partial
    report without one, or write a partial report when there is none. Atomic (report_io). False when
    the report is complete, unresolvable or already says why. `run`: the upgrade's reports, which read it
    once (and hold what is written here). `run_id`: the upgrade run a report written here belongs to (a
    suite that died before writing one, e.g. a TPU another entry holds: without it the verdict refuses the
    report as another run's instead of saying why the entry ended)."""
    run = run or RunReports()
    try:
        report = run.load(report_file)
    except report_io.ReportProblem:
        report = None
    if report is not None and (report.status != Status.PARTIAL or report.problem):
        return False
    if report is None:
        report = dataclasses.replace(unresolvable(entry, problem, started_at), status=Status.PARTIAL, finished_at=None,
                                     run_id=run_id)
    said = dataclasses.replace(report, problem=problem)
    report_io.write(report_file, said)
    run.wrote(report_file, said)
    return True
