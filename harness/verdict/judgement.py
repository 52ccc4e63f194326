"""The verdict on one run's reports, as a typed call: what `nox -s upgrade`, `judge DIR` and
`python -m harness compare` all end with. It loads and checks the reports, judges them, prints the
verdict and writes its Markdown, JSON and HTML forms."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.model import api_diff, bisection, golden_changes, report_io
from harness.model.enums import BuiltinMode
from harness.model.report import Report
from harness.model.verdict import TeamCall, Verdict
from harness.verdict import across_platforms, compare, html, markdown, render, rerecorded
from harness.verdict.run_reports import RunReports

SUMMARY_MD, SUMMARY_JSON, REPORT_HTML = "upgrade-summary.md", "upgrade-summary.json", "upgrade-report.html"


@dataclasses.dataclass(frozen=True)
class Inputs:
    """The reports of one run: the baseline first, then the candidate and the attribution entries."""

    reports: tuple[Path, ...]
    replay: Path | None = None  # the baseline re-running the candidate's falsifying examples
    bisect: Path | None = None  # bisect.json: the release that first changed each contract
    builtin: BuiltinMode = BuiltinMode.JUDGE
    run_id: str | None = None  # the run every report must come from
    # The baseline restoring another entry's checkpoints, by that entry's name (harness.verdict.rollback).
    rollbacks: Mapping[str, Path] = dataclasses.field(default_factory=dict)
    api_diff: Path | None = None  # api-diff.json: the candidate's public API against the baseline's
    golden_changes: Path | None = None  # golden-changes.json: the branch's golden values against its base branch's
    builtin_note: str | None = None  # which built-in families a team's run took, and why
    team_calls: tuple[TeamCall, ...] = ()  # the callables a team's code calls and the built-in tests they take
    # Where each platform's verdict on a pair of pins is kept (harness.model.platform_marks): None, not kept.
    platform_marks: Path | None = None
    # The run's reports as its earlier steps read and compared them (an upgrade's follow-ups): none read again.
    reading: RunReports = dataclasses.field(default_factory=RunReports, compare=False)


@dataclasses.dataclass(frozen=True)
class Outputs:
    """Where the verdict is written besides the terminal (None: not written)."""

    markdown: Path | None = None
    json: Path | None = None
    html: Path | None = None

    @classmethod
    def beside(cls, directory: Path) -> Outputs:
        """The run's summary files, named as `nox -s upgrade` writes them."""
        return cls(directory / SUMMARY_MD, directory / SUMMARY_JSON, directory / REPORT_HTML)


def load_all(paths: list[str], run_id: str | None = None,
             reading: RunReports | None = None) -> tuple[Report, list[Report]]:
    """The baseline and the other reports, all validated, from one harness version and one run."""
    docs = [(reading or RunReports()).load(p) for p in paths]
    versions = {d.harness_version for d in docs}
    if len(versions) > 1:
        raise report_io.ReportProblem(
            f"the reports were written by different harness versions ({', '.join(sorted(versions))}); "
            "re-run all sessions with one harness version before comparing."
        )
    one_run(dict(zip(paths, docs)), run_id)
    return docs[0], docs[1:]


def one_run(reports: dict[str, Report], run_id: str | None) -> None:
    """HarnessError unless the reports come from one upgrade run (the named one, when given): a report
    left by another run (one that was stopped, or ran beside this one) is never judged with this run's.
    Reports of sessions run by hand carry no run id and may be judged together."""
    runs = {path: r.run_id for path, r in reports.items() if r.run_id is not None or run_id is not None}
    expected = run_id or next(iter(runs.values()), None)
    strays = {path: found for path, found in runs.items() if found != expected}
    if strays:
        named = "; ".join(f"{path} by run {found or '(none: a session run by hand)'}" for path, found in strays.items())
        raise report_io.ReportProblem(
            f"the reports are not all from one upgrade run: {named}, not run {expected}. A report of another run "
            "is never judged with this one's; run the upgrade again (or judge reports of one run together)."
        )


def _with_bisection(verdict: Verdict, path: Path) -> Verdict:
    """The verdict with each bisected contract's first release; an unreadable file is said, never fatal."""
    try:
        return dataclasses.replace(verdict, first_changed=bisection.read(path).first_changed())
    except HarnessError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return verdict


def _api_diff(path: Path | None) -> api_diff.ApiDiff | None:
    """The run's API diff; an unreadable one is said, never fatal (the section is left out)."""
    if path is None or not path.is_file():
        return None
    try:
        return api_diff.read(path)
    except HarnessError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return None


def _write(verdict: Verdict, others: list[Report], out: Outputs) -> None:
    if out.markdown:
        atomic_write_text(out.markdown, markdown.markdown(verdict))
    if out.json:
        atomic_write_text(out.json, json.dumps(render.as_json(verdict), indent=1) + "\n")
    if out.html:
        atomic_write_text(out.html, html.page(verdict, others))


def _rolled_back(others: list[Report], rollbacks: Mapping[str, Path], run_id: str | None,
                 reading: RunReports) -> list[Report]:
    """Each report whose checkpoints the baseline restored, its rollback checks taken from that run."""
    rolled = {name: reading.load(path) for name, path in rollbacks.items()}
    one_run({str(rollbacks[name]): report for name, report in rolled.items()}, run_id)
    return [reading.merged(o, rolled[o.entry.name]) if o.entry.name in rolled else o for o in others]


def judge(inputs: Inputs, out: Outputs) -> int:
    """Print the verdict, write its files; the exit status (0 unchanged, 1 changed, 2 cannot judge)."""
    if len(inputs.reports) < 2:
        print("compare: give the baseline report and at least one other report.", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    try:
        reading = inputs.reading
        base, others = load_all([str(p) for p in inputs.reports], inputs.run_id, reading)
        replay = reading.load(inputs.replay) if inputs.replay else None
        if replay is not None:
            one_run({str(inputs.replay): replay}, inputs.run_id or base.run_id)
        others = _rolled_back(others, inputs.rollbacks, inputs.run_id or base.run_id, reading)
        # Unlike the API diff, not optional once written: under re-recorded = "fail" it can decide the exit status.
        changes = golden_changes.read(inputs.golden_changes) if inputs.golden_changes is not None \
            and inputs.golden_changes.is_file() else None
    except HarnessError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return exc.exit_status
    verdict = compare.judge(base, others, replay, builtin=inputs.builtin, api=_api_diff(inputs.api_diff),
                            compared=reading.compared)
    if inputs.bisect:
        verdict = _with_bisection(verdict, inputs.bisect)
    if inputs.builtin_note:
        verdict = dataclasses.replace(verdict, builtin_note=inputs.builtin_note)
    if inputs.team_calls:
        verdict = dataclasses.replace(verdict, team_calls=list(inputs.team_calls))
    verdict = rerecorded.applied(verdict, changes, [base, *others])
    if inputs.platform_marks is not None:
        verdict = across_platforms.applied(verdict, inputs.platform_marks, others[0], inputs.reports[0])
    print(render.text(verdict))
    try:
        _write(verdict, others, out)
    except OSError as exc:
        print(f"compare: cannot write the summary ({exc}); the verdict above stands.", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    return verdict.exit_status
