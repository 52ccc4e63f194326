"""`python -m harness compare BASE.json OTHER.json [...]`: the verdict from session reports.

The command line of harness.verdict.judgement.judge, the typed call `nox -s upgrade` and `judge DIR` make.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.model.enums import BuiltinMode
from harness.verdict import judgement


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


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    inputs = judgement.Inputs(tuple(Path(p) for p in args.reports), replay=Path(args.replay) if args.replay else None,
                              bisect=Path(args.bisect) if args.bisect else None, builtin=BuiltinMode(args.builtin),
                              run_id=args.run_id)
    out = judgement.Outputs(*(Path(p) if p else None for p in (args.markdown, args.json, args.html)))
    return judgement.judge(inputs, out)
