"""Before an entry runs: is its report already known? After: keep it for the next run.

The upgrade asks here for each entry it is about to start (harness.stack.run.entry_runs). A reused report
is written where the entry's own would be, with a log that says where it came from, so everything
after (the verdict, attribution, publishing) treats it as this run's.

A report in parts (a team's own contracts and the built-in ones: harness.stack.entry_side.parts) is looked up
part by part, each under its own key: every part kept, the report is reused whole; some, those parts are
written where the session would write them, and its job names them (RunOptions.reused_parts): it runs only
the others, and joins them.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.model import report_io
from harness.model.entry_job import JobOptions
from harness.model.enums import ReportPart
from harness.model.report import Report
from harness.model.reuse import ReusedFrom
from harness.stack import project
from harness.stack.entry_side import entry as stack_entry, parts as report_parts
from harness.stack.run import report_cache, same_stack
from harness.stack.pins.matrix import Entry
from harness.stack.run.report_key import digest
from harness.stack.run.report_key import ReportKey, key_of_job
from harness.stack.run.run_directory import RunDirectory
from harness.stack.workspace import Workspace


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One entry's look-up: its key (None: not computable before it runs; a report in parts: theirs together),
    the report reused if any, each part's key, and the part files written for its session to join."""

    key: ReportKey | None
    reused: Report | None = None
    why_ran: str = ""  # said when an earlier report existed but could not be reused
    keys: dict[ReportPart, ReportKey] = dataclasses.field(default_factory=dict)  # none: {ALL: key}
    reused_parts: tuple[Path, ...] = ()  # the part files reused: its session runs the other parts

    def parts_run(self) -> dict[ReportPart, ReportKey]:
        """The parts its session runs, with their keys as they were before it ran."""
        keys = self.keys or ({ReportPart.ALL: self.key} if self.key is not None else {})
        return {p: k for p, k in keys.items() if p not in {_part_of(f) for f in self.reused_parts}}


def _part_of(file: Path) -> ReportPart:
    return ReportPart(file.stem.rsplit(".", 1)[1])


def _selection(only: Path | None) -> list[str] | None:
    return [line.strip() for line in only.read_text().splitlines() if line.strip()] if only else None


def _key(ws: Workspace, entry: Entry, environ: dict[str, str], told: JobOptions,  # type: ignore[valid-type]
         part: ReportPart = ReportPart.ALL) -> ReportKey | None:
    try:
        return key_of_job(ws, entry, project.load(ws), environ, told, part)
    except (OSError, HarnessError):  # no lock yet (resolved inside its session), or no interpreter
        return None


def combined(keys: dict[ReportPart, ReportKey]) -> ReportKey:
    """The key of a report in parts: each input's digests over its parts (one part: its own key)."""
    if len(keys) == 1:
        return next(iter(keys.values()))
    names = dict.fromkeys(n for k in keys.values() for n in k.parts)
    return ReportKey({n: digest(json.dumps([k.parts.get(n) for k in keys.values()])) for n in names})


def attempt(ws: Workspace, cache: Path, entry: Entry, environ: dict[str, str],
            told: JobOptions,  # type: ignore[valid-type]
            report_file: Path, log_file: Path, fresh: bool, twin: str | None = None) -> Attempt:
    """Reuse the entry's report kept in `cache` when nothing that determines it changed (its session's
    environment `environ` and its job's options `told`: harness.stack.run.report_key): written to
    `report_file` as this run's entry, with a log saying where it came from; or, for a report in parts, the
    parts kept. `twin`: an entry of this run with the same key that has finished (harness.stack.run.same_stack);
    with --fresh, only its report is reused, never an earlier run's."""
    try:
        layout = report_parts.of_run(project.load(ws), told)
    except (OSError, HarnessError):
        return Attempt(None)
    keys = {part: _key(ws, entry, environ, told, part) for part in layout}
    if any(k is None for k in keys.values()):
        return Attempt(None)
    key = combined(keys)
    if fresh and twin is None:
        return Attempt(key, keys=keys)
    selection = _selection(told.only)
    found = {part: report_cache.lookup(cache, keys[part], selection, entry.name, part) for part in layout}
    usable = {}
    for part, kept in found.items():
        if kept.report is not None:
            report = report_cache.reused(kept.report, stack_entry.entry_info(entry), told.run_id, keys[part])
            if not fresh or same_stack.of_this_run(report):
                usable[part] = (report, kept)
    why = _why_ran(found, usable)
    if not usable:
        return Attempt(key, why_ran=why, keys=keys)
    try:
        for part, (report, kept) in usable.items():
            file = report_parts.part_file(report_file, part)
            report_io.write(file, report, derived=True)  # validated when it was read from the cache
            RunDirectory.of(ws).loaded.wrote(file, report)  # the run reads it from here, never the file
            if part != ReportPart.OWN:  # the checkpoints the built-in contracts wrote
                report_cache.copy_folder(kept.record, stack_entry.checkpoints_folder(report_file))
        if len(usable) < len(layout):
            return Attempt(key, why_ran=why, keys=keys,
                           reused_parts=tuple(report_parts.part_file(report_file, p) for p in usable))
        whole = _whole(ws, report_file, layout, entry, key, usable)
        log_file.write_text(_said(entry.name, whole, key) + "".join(
            f"\n\n{_origin(p, r)}:\n{kept.log}" if len(layout) > 1 else f"\n\n{kept.log}"
            for p, (r, kept) in usable.items()))
    except (OSError, HarnessError, ValueError) as exc:
        print(f"upgrade: {entry.name}: cannot reuse its report ({exc}); running it", file=sys.stderr)
        return Attempt(key, keys=keys)
    return Attempt(key, whole, keys=keys)


def _whole(ws: Workspace, report_file: Path, layout, entry: Entry, key: ReportKey, usable) -> Report:
    """Every part reused: the report they make, reused as a whole (from the newest part's run)."""
    if layout == (ReportPart.ALL,):
        return usable[ReportPart.ALL][0]
    run = RunDirectory.of(ws)
    whole = report_parts.assemble(report_file, layout, stack_entry.entry_info(entry), "", run.loaded)
    newest = max((r.reused for r, _ in usable.values()), key=lambda o: o.finished_at or "")
    whole = dataclasses.replace(whole, reused=ReusedFrom(newest.run_id, newest.finished_at, key.digest,
                                                         newest.entry))
    report_io.write(report_file, whole, derived=True)
    run.loaded.wrote(report_file, whole)
    return whole


def _said(name: str, report: Report, key: ReportKey) -> str:
    if same_stack.of_this_run(report):
        return (f"{same_stack.served_line(name, report)}: the report of entry {report.reused.entry} of this run "
                f"(key {key.digest}) is this entry's. That entry's log:")
    return (f"reused the report of entry {report.reused.entry} from {report.reused.when} (run "
            f"{report.reused.run_id}): nothing that determines it changed (key {key.digest}); `--fresh` runs "
            "it again. That run's log:")


def _origin(part: ReportPart, report: Report) -> str:
    return f"{report_parts.LABELS[part]}, from run {report.reused.run_id} ({report.reused.when})"


def _why_ran(found: dict[ReportPart, report_cache.Found], usable: dict) -> str:
    """Why the entry (or which of its parts) runs, when an earlier report existed; which parts are reused."""
    if ReportPart.ALL in found:
        why = found[ReportPart.ALL].why_not
        return "" if usable or why == "no earlier report" else why
    said = []
    for part, kept in found.items():
        if part in usable:
            said.append(f"{_origin(part, usable[part][0])} reused")
        elif kept.why_not != "no earlier report":
            said.append(f"{report_parts.LABELS[part]}: {kept.why_not}")
    return "; ".join(said)


def keep(ws: Workspace, cache: Path, done: Attempt, entry: Entry, environ: dict[str, str],
         told: JobOptions, report_file: Path, log_file: Path) -> None:  # type: ignore[valid-type]
    """After the entry ran: keep each part it ran for the next run (a lock resolved in the session counts now).
    Only when its inputs are still those it started with: a contract or golden file edited while it ran
    would otherwise file the old results under the new inputs."""
    if done.reused is not None:
        return
    ran: dict = done.parts_run()
    if done.key is None:  # its key was not known before it ran: every part of its run, as it runs them now
        try:
            ran = dict.fromkeys(report_parts.of_run(project.load(ws), told))
        except (OSError, HarnessError):
            return
    for part, before in ran.items():
        after = _key(ws, entry, environ, told, part)
        if after is None or (before is not None and before != after):
            continue
        report_cache.store(cache, after, report_parts.part_file(report_file, part), log_file,
                           stack_entry.checkpoints_folder(report_file) if part != ReportPart.OWN else None,
                           load=RunDirectory.of(ws).load, part=part)  # the run's first read of the report
