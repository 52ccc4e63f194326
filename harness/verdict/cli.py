"""`python -m harness compare BASE.json OTHER.json [...]`: the verdict from session reports.

Also what `nox -s upgrade` runs once its entries are done.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.model import bisection, report_io
from harness.model.enums import BuiltinMode
from harness.model.report import Report
from harness.model.verdict import Verdict
from harness.verdict import compare, html, markdown, render


def load_all(paths: list[str], run_id: str | None = None) -> tuple[Report, list[Report]]:
    """The baseline and the other reports, all validated, from one harness version and one run."""
    docs = [report_io.load(p) for p in paths]
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness compare",
                                     description="Compare session reports against the baseline report.")
    parser.add_argument("reports", nargs="+", help="BASE.json OTHER.json [...]: baseline first, candidate second")
    parser.add_argument("--markdown", help="also write the verdict as GitHub Markdown to this file")
    parser.add_argument("--json", help="also write the verdict as JSON to this file")
    parser.add_argument("--html", help="also write a self-contained HTML page with plots to this file")
    parser.add_argument("--bisect", help="reports/bisect.json of `nox -s upgrade -- --bisect`: show the release "
                                         "that first changed each contract")
    parser.add_argument("--builtin", choices=[BuiltinMode.JUDGE.value, BuiltinMode.REPORT.value],
                        default=BuiltinMode.JUDGE.value,
                        help="judge (default): the built-in contracts' changes decide the exit status too; report: "
                             "only the project's own contracts decide, the built-in ones are shown after them")
    parser.add_argument("--run-id", help="the upgrade run every report must come from (set by `nox -s upgrade`)")
    parser.add_argument("--replay", help="the baseline's report of re-running the candidate's failing examples: "
                                         "a property the baseline fails too is 'failing in both', not a change")
    return parser


def _with_bisection(verdict: Verdict, path: str) -> Verdict:
    """The verdict with each bisected contract's first release; an unreadable file is said, never fatal."""
    try:
        return dataclasses.replace(verdict, first_changed=bisection.read(path).first_changed())
    except HarnessError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return verdict


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if len(args.reports) < 2:
        print("compare: give the baseline report and at least one other report.", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    try:
        base, others = load_all(args.reports, args.run_id)
        replay = report_io.load(args.replay) if args.replay else None
        if replay is not None:
            one_run({args.replay: replay}, args.run_id or base.run_id)
    except HarnessError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return exc.exit_status
    verdict = compare.judge(base, others, replay, builtin=BuiltinMode(args.builtin))
    if args.bisect:
        verdict = _with_bisection(verdict, args.bisect)
    print(render.text(verdict))
    try:
        if args.markdown:
            atomic_write_text(Path(args.markdown), markdown.markdown(verdict))
        if args.json:
            atomic_write_text(Path(args.json), json.dumps(render.as_json(verdict), indent=1) + "\n")
        if args.html:
            atomic_write_text(Path(args.html), html.page(verdict, others))
    except OSError as exc:
        print(f"compare: cannot write the summary ({exc}); the verdict above stands.", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    return verdict.exit_status
