"""Before an entry runs: is its report already known? After: keep it for the next run.

The upgrade asks here for each entry it is about to start (harness.stack.run.entry_runs). A reused report
is written where the entry's own would be, with a log that says where it came from, so everything
after (the verdict, attribution, publishing) treats it as this run's.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.model import report_io
from harness.model.entry_job import JobOptions
from harness.model.report import Report
from harness.stack import project
from harness.stack.entry_side import entry as stack_entry
from harness.stack.run import report_cache, same_stack
from harness.stack.pins.matrix import Entry
from harness.stack.run.report_key import ReportKey, key_of_job
from harness.stack.run.run_directory import RunDirectory
from harness.stack.workspace import Workspace


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One entry's look-up: its key (None: not computable before it runs), and the report reused if any."""

    key: ReportKey | None
    reused: Report | None = None
    why_ran: str = ""  # said when an earlier report existed but could not be reused


def _selection(only: Path | None) -> list[str] | None:
    return [line.strip() for line in only.read_text().splitlines() if line.strip()] if only else None


def _key(ws: Workspace, entry: Entry, environ: dict[str, str],
         told: JobOptions) -> ReportKey | None:  # type: ignore[valid-type]
    try:
        return key_of_job(ws, entry, project.load(ws), environ, told)
    except (OSError, HarnessError):  # no lock yet (resolved inside its session), or no interpreter
        return None


def attempt(ws: Workspace, cache: Path, entry: Entry, environ: dict[str, str],
            told: JobOptions,  # type: ignore[valid-type]
            report_file: Path, log_file: Path, fresh: bool, twin: str | None = None) -> Attempt:
    """Reuse the entry's report kept in `cache` when nothing that determines it changed (its session's
    environment `environ` and its job's options `told`: harness.stack.run.report_key): written to
    `report_file` as this run's entry, with a log saying where it came from. `twin`: an entry of this run
    with the same key that has finished (harness.stack.run.same_stack); with --fresh, only its report is
    reused, never an earlier run's."""
    key = _key(ws, entry, environ, told)
    if key is None or (fresh and twin is None):
        return Attempt(key)
    selection = _selection(told.only)
    found = report_cache.lookup(cache, key, selection, entry.name)
    if found.report is None:
        return Attempt(key, why_ran="" if found.why_not == "no earlier report" else found.why_not)
    report = report_cache.reused(found.report, stack_entry.entry_info(entry), told.run_id, key)
    if fresh and not same_stack.of_this_run(report):
        return Attempt(key)
    if same_stack.of_this_run(report):
        said = (f"{same_stack.served_line(entry.name, report)}: the report of entry {report.reused.entry} of this "
                f"run (key {key.digest}) is this entry's. That entry's log:")
    else:
        said = (f"reused the report of entry {report.reused.entry} from {report.reused.when} (run "
                f"{report.reused.run_id}): nothing that determines it changed (key {key.digest}); `--fresh` runs "
                "it again. That run's log:")
    try:
        report_io.write(report_file, report, derived=True)  # validated when it was read from the cache
        RunDirectory.of(ws).loaded.wrote(report_file, report)  # the run reads it from here, never the file
        report_cache.copy_folder(found.record, stack_entry.checkpoints_folder(report_file))
        log_file.write_text(f"{said}\n\n{found.log}")
    except (OSError, HarnessError) as exc:
        print(f"upgrade: {entry.name}: cannot reuse its report ({exc}); running it", file=sys.stderr)
        return Attempt(key)
    return Attempt(key, report)


def keep(ws: Workspace, cache: Path, done: Attempt, entry: Entry, environ: dict[str, str],
         told: JobOptions, report_file: Path, log_file: Path) -> None:  # type: ignore[valid-type]
    """After the entry ran: keep its report for the next run (a lock resolved in the session counts now).
    Only when its inputs are still those it started with: a contract or golden file edited while it ran
    would otherwise file the old results under the new inputs."""
    after = _key(ws, entry, environ, told)
    if after is None or done.reused is not None or (done.key is not None and done.key != after):
        return
    report_cache.store(cache, after, report_file, log_file, stack_entry.checkpoints_folder(report_file),
                       load=RunDirectory.of(ws).load)  # the run's first read of the report
