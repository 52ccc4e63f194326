"""An entry's report in parts: a team's own contracts and the built-in ones, each run in a pytest process of its
own and kept for reuse under a key of its own (harness.stack.run.report_key), then joined into the entry's one
report (harness.model.report_merge.joined).

Why two processes: the built-in part's key leaves the team's code out, so that an edit of that code re-runs only
the team's contracts; its checks must then not see that code. In one process they would: pytest imports the
team's contracts and the code they import (and its conftest.py files) before any check runs, and an import
that sets `jax_enable_x64` or a matmul precision changes every built-in result after it. The built-in part
runs without the team's import path and conftest files; the data-parallel family's process belongs to it.

A project with one kind of contracts (this checkout; a team with `builtin = false`, or without contracts of its
own), a rollback and a recording of golden values keep one process: their report is one part, ALL (a team's
rollback runs only built-in contracts, as the built-in part does: `runs`). A replay runs in the parts its
selection names, as an attribution does: the built-in contracts' examples on their one device, never on the devices
the team's training module sets (harness.contract.project_devices).
"""

from __future__ import annotations

import dataclasses
import functools
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path

from harness.model import report_io
from harness.model.enums import BuiltinMode, ReportPart, Status
from harness.model.report import EntryInfo, Report, unresolvable
from harness.model.report_merge import joined
from harness.run_options import RunOptions
from harness.stack import project
from harness.stack.selection import builtin_modules, ledger_families
from harness.verdict.run_reports import RunReports

PARTS = "parts"  # beside the run's reports: each part's own report and junit file, before they are joined
SPLIT = (ReportPart.BUILTIN, ReportPart.OWN)  # the order the entry's report holds them in, as one process did
LABELS = {part: part.label for part in SPLIT}


def part_file(report: Path, part: ReportPart) -> Path:
    """Where the part `part` of `report` is written (the report itself for ALL)."""
    return report if part == ReportPart.ALL else report.parent / PARTS / f"{report.stem}.{part}.json"


def _selection(options: RunOptions) -> list[str] | None:
    return [line.strip() for line in options.only.read_text().splitlines() if line.strip()] if options.only else None


@functools.cache
def _builtin_families() -> frozenset[str]:
    return frozenset(m.family for m in builtin_modules.modules())


def split(found: project.Project) -> bool:
    """Whether the project's reports are made of two parts: it has contracts of its own, and runs built-in ones."""
    return found.builtin != BuiltinMode.OFF and bool(found.own_contracts)


def runs(found: project.Project, part: ReportPart, rollback: bool) -> ReportPart:
    """Which contracts the process writing `part` runs: its own, but for a rollback in a project of two parts,
    which restores the built-in checkpoints family alone: the built-in part's, without the team's code (so an
    edit of that code does not run it again)."""
    return ReportPart.BUILTIN if part == ReportPart.ALL and rollback and split(found) else part


def of_run(found: project.Project, options: RunOptions, whole: bool = False) -> tuple[ReportPart, ...]:
    """The parts of the run's report: ALL for a project with one kind of contracts, a rollback or a recording
    (`whole`); else the built-in part and the own part, less one none of whose checks the run's selection (`only`:
    an attribution, a bisection probe, a replay's properties) names."""
    if whole or options.rollback_from or not split(found):
        return (ReportPart.ALL,)
    selection = _selection(options)
    if selection is None:
        return SPLIT
    builtin = {ledger_families.family_of(i) in _builtin_families() for i in selection}
    found_parts = tuple(p for p in SPLIT if (p == ReportPart.BUILTIN) in builtin)
    return found_parts or (ReportPart.ALL,)


def run(report: Path, parts: tuple[ReportPart, ...], reused: tuple[Path, ...], entry: EntryInfo,
        run_part: Callable[[ReportPart, Path], None], started: str, reports: RunReports | None = None) -> None:
    """Each part of `report` not among the `reused` part files, run by `run_part(part, its file)`, then the parts
    joined into `report`. A part's process that failed (some checks failed, or it ended early) does not stop
    the other's; its failure fails the session once the report is whole."""
    failure = None
    for part in parts:
        if part_file(report, part) in reused:
            continue
        try:
            run_part(part, part_file(report, part))
        except Exception as exc:  # nox's CommandFailed: the part's report says how it ended
            failure = failure or exc
    if parts != (ReportPart.ALL,):
        assemble(report, parts, entry, started, reports)
    if failure is not None:
        raise failure


def _read(file: Path, part: ReportPart, entry: EntryInfo, started: str, reports: RunReports) -> Report:
    """A part's report; a part whose process wrote none is a partial one saying so."""
    try:
        found = reports.load(file)
    except report_io.ReportProblem:
        found = dataclasses.replace(unresolvable(entry, "its process wrote no report", started),
                                    status=Status.PARTIAL, finished_at=None)
    if found.problem and found.status != Status.UNRESOLVABLE:
        found = dataclasses.replace(found, problem=f"{LABELS[part]}' process {found.problem}")
    return found


def assemble(report: Path, parts: tuple[ReportPart, ...], entry: EntryInfo, started: str,
             reports: RunReports | None = None) -> Report:
    """The parts' reports (each in its part file) joined into `report` (and their junit files into its own);
    the parts an earlier run computed named in its reused_parts."""
    reports = reports or RunReports()
    found = {p: _read(part_file(report, p), p, entry, started, reports) for p in parts}
    whole = functools.reduce(joined, [dataclasses.replace(r, reused=None) for r in found.values()])
    reused = {str(p): r.reused for p, r in found.items() if r.reused is not None}
    whole = dataclasses.replace(whole, reused_parts=reused or None)
    if ReportPart.OWN in found and len(found) > 1:  # its devices beside the built-in contracts' (`jax`)
        whole = dataclasses.replace(whole, environment=dataclasses.replace(
            whole.environment, own_jax=found[ReportPart.OWN].environment.jax))
    report_io.write(report, whole)
    reports.wrote(report, whole)
    _junit(report.with_suffix(".junit.xml"), [part_file(report, p).with_suffix(".junit.xml") for p in parts])
    return whole


def _junit(target: Path, files: list[Path]) -> None:
    """The parts' junit files as one (their test suites side by side), for CI's test tabs."""
    suites = ElementTree.Element("testsuites")
    for file in files:
        try:
            root = ElementTree.parse(file).getroot()
        except (OSError, ElementTree.ParseError):
            continue  # a reused part (no run here) or a process that wrote none
        suites.extend(root if root.tag == "testsuites" else [root])
    if len(suites):
        ElementTree.ElementTree(suites).write(target, encoding="utf-8", xml_declaration=True)
