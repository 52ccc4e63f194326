"""Compare session reports: what changed from the baseline, per check, and the exit status.

`python -m harness compare BASE.json OTHER.json [...]` (also what `nox -s upgrade` runs).
Every report's checks are judged against the same golden values (recorded from the baseline),
so a check that passes on the baseline and fails on another entry is a changed contract.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from harness.model import report
from harness.atomic import atomic_write_text
from harness.errors import EXIT_CANNOT_JUDGE, EXIT_OK, EXIT_REGRESSED, HarnessError

# Change marks, in the order a reviewer should read them.
REGRESSED = "regressed"
ERROR_TYPE_CHANGED = "error type changed"
NOW_SILENT = "now silent"
NEW_ERROR = "new error"
API_MISSING = "API missing"
NOT_JUDGED = "not judged"
MISSING = "check missing"
FIXED = "fixed"
DRIFT = "drift within tolerance"
NEW_CHECK = "new check"
FAILING_BOTH = "failing in both"
UNCHANGED = "unchanged"
BAD_MARKS = (REGRESSED, ERROR_TYPE_CHANGED, NOW_SILENT, NEW_ERROR, API_MISSING, MISSING)
ORDER = (REGRESSED, ERROR_TYPE_CHANGED, NOW_SILENT, NEW_ERROR, API_MISSING, MISSING, NOT_JUDGED, FAILING_BOTH, FIXED,
         DRIFT, NEW_CHECK, UNCHANGED)


@dataclasses.dataclass
class Change:
    check_id: str
    family: str
    kind: str
    mark: str
    detail: str
    max_abs_err: float | None
    max_rel_err: float | None
    tolerance: str

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


# A steady-state time this many times the baseline's is flagged "slower". Informational only:
# entries share two cores during `nox -s upgrade`, so ratios below ~1.5 are mostly noise.
SLOWER_THRESHOLD = 1.5


@dataclasses.dataclass
class Timing:
    name: str
    steady_ratio: float | None
    compile_ratio: float | None
    steady_s: float | None
    baseline_steady_s: float | None

    @property
    def slower(self) -> bool:
        return self.steady_ratio is not None and self.steady_ratio > SLOWER_THRESHOLD


def compare_performance(base: dict, other: dict) -> list[Timing]:
    """candidate/baseline time ratios per measured operation (measured in the same run)."""
    rows = []
    for name, b in sorted(base.get("performance", {}).items()):
        o = other.get("performance", {}).get(name)
        if o is None:
            rows.append(Timing(name, None, None, None, b["steady_min_s"]))
            continue
        # The fastest of many calls: the least disturbed by the other entry sharing the cores.
        rows.append(Timing(name, o["steady_min_s"] / b["steady_min_s"] if b["steady_min_s"] else None,
                           o["compile_s"] / b["compile_s"] if b["compile_s"] else None,
                           o["steady_min_s"], b["steady_min_s"]))
    return rows


@dataclasses.dataclass
class EntryVerdict:
    name: str
    versions: dict
    status: str
    problem: str | None
    changes: list[Change]
    new_warnings: list[dict]
    counts: dict
    requested: dict = dataclasses.field(default_factory=dict)
    requested_python: str = ""
    timings: list = dataclasses.field(default_factory=list)

    @property
    def bad(self) -> list[Change]:
        return [c for c in self.changes if c.mark in BAD_MARKS]


def _tolerance_text(check: dict) -> str:
    tols = []
    for comp in check.get("comparisons", []):
        tol = comp.get("tolerance")
        text = "exact" if tol == "exact" else f"rtol={tol['rtol']:.3g} atol={tol['atol']:.3g}"
        if text not in tols:
            tols.append(text)
    return ", ".join(tols) or "-"


def _error_mark(check: dict) -> str | None:
    for comp in check.get("comparisons", []):
        if comp.get("kind") == "error-contract" and not comp.get("passed"):
            expected, observed = comp.get("expected"), comp.get("observed")
            if expected is not None and observed is None:
                return NOW_SILENT
            if expected is None and observed is not None:
                return NEW_ERROR
            return ERROR_TYPE_CHANGED
    return None


_API_GONE = ("AttributeError", "ImportError", "ModuleNotFoundError")


def _api_mark(check: dict) -> str | None:
    """A function, class or module the check used no longer exists in this version."""
    return API_MISSING if check.get("exception") in _API_GONE else None


def _golden_drift(base: dict, other: dict) -> str | None:
    """Golden comparisons that moved (while passing): how many, and the largest with its magnitude."""
    before = {c["label"]: c for c in base.get("comparisons", [])}
    moved = []
    for comp in other.get("comparisons", []):
        if comp.get("kind") != "golden" or not comp.get("passed") or not comp.get("max_abs_err"):
            continue
        prior = before.get(comp["label"], {}).get("max_abs_err") or 0.0
        if comp["max_abs_err"] > prior:
            moved.append((comp["max_abs_err"], prior, comp["label"]))
    if not moved:
        return None
    err, prior, label = max(moved)
    return (f"{len(moved)} golden values moved; largest {label}: max abs err {err:.3g} "
            f"(baseline {prior:.3g})")


def _classify(base: dict | None, other: dict | None) -> tuple[str, str]:
    if other is None:
        return MISSING, "the check ran on the baseline but not here (its module failed to import or it was skipped)"
    if base is None:
        return NEW_CHECK, other.get("message", "")
    b, o = base["outcome"], other["outcome"]
    if o == "skipped" and b != "skipped":
        return MISSING, other.get("message", "") or "skipped here"
    if b == "skipped" and o != "skipped":  # ran only here: a failure is still a failure
        return (REGRESSED if o == "failed" else NEW_CHECK), other.get("message", "")
    if o == "error" or b == "error":
        return NOT_JUDGED, (other if o == "error" else base).get("message", "")
    if b == "passed" and o == "failed":
        return _error_mark(other) or _api_mark(other) or REGRESSED, other.get("message", "")
    if b == "failed" and o == "passed":
        return FIXED, base.get("message", "")
    if b == "failed" and o == "failed":
        return FAILING_BOTH, other.get("message", "")
    if b == "passed" and o == "passed":
        drift = _golden_drift(base, other)
        if drift:
            return DRIFT, drift
    return UNCHANGED, ""


def _warning_key(w: dict) -> tuple:
    return (w["category"], w["origin"], w["message"])


def compare_entry(base: dict, other: dict) -> EntryVerdict:
    base_checks = {c["id"]: c for c in base["checks"]}
    other_checks = {c["id"]: c for c in other["checks"]}
    if other.get("selection") is not None:  # an attribution run: judge only the checks it ran
        selected = set(other["selection"])
        base_checks = {i: c for i, c in base_checks.items() if i in selected}
    changes = []
    if other["status"] == "complete":
        for check_id in list(base_checks) + [i for i in other_checks if i not in base_checks]:
            b, o = base_checks.get(check_id), other_checks.get(check_id)
            mark, detail = _classify(b, o)
            ref = o or b
            changes.append(Change(check_id, ref["family"], ref["kind"], mark, detail,
                                  (o or {}).get("max_abs_err"), (o or {}).get("max_rel_err"),
                                  _tolerance_text(ref)))
    base_warnings = {_warning_key(w) for w in base["warnings"]}
    new_warnings = [w for w in other["warnings"] if _warning_key(w) not in base_warnings
                    and w["origin"] in ("jax", "jaxlib", "optax", "flax", "orbax", "numpy")]
    counts = {mark: sum(c.mark == mark for c in changes) for mark in ORDER}
    return EntryVerdict(other["entry"]["name"], other["environment"]["versions"], other["status"],
                        other.get("problem"), changes, new_warnings, counts,
                        other["entry"]["requested"], other["entry"]["python"], compare_performance(base, other))


@dataclasses.dataclass
class Verdict:
    baseline: dict
    entries: list[EntryVerdict]
    baseline_failures: list[dict]
    exit_status: int
    headline: str


def judge(base: dict, others: list[dict]) -> Verdict:
    """The verdict over all entries; the exit status follows the candidate (the second report)."""
    verdicts = [compare_entry(base, o) for o in others]
    baseline_failures = [c for c in base["checks"] if c["outcome"] in ("failed", "error")]
    problems = []  # short reasons for the headline; the details are printed below it
    if base["status"] != "complete":
        problems.append(f"the baseline report is {base['status']}")
    if baseline_failures:
        problems.append(f"the baseline fails {len(baseline_failures)} of its own checks "
                        "(golden files or baseline stack changed)")
    for v in verdicts:
        if v.status != "complete":
            problems.append(f"{v.name} is {v.status}")
        not_judged = v.counts.get(NOT_JUDGED, 0)
        if not_judged:
            problems.append(f"{v.name}: {not_judged} checks not judged")
    candidate = verdicts[0] if verdicts else None
    if problems:
        status, headline = EXIT_CANNOT_JUDGE, "CANNOT JUDGE: " + "; ".join(problems)
    elif candidate is not None and candidate.bad:
        status = EXIT_REGRESSED
        headline = f"REGRESSED: {len(candidate.bad)} contracts changed on {candidate.name}"
    else:
        status = EXIT_OK
        headline = "OK: no contract regressed" + (f" on {candidate.name}" if candidate else "")
    return Verdict(base, verdicts, baseline_failures, status, headline)


def load_all(paths: list[str]) -> tuple[dict, list[dict]]:
    docs = [report.load(p) for p in paths]
    versions = {d["harness_version"] for d in docs}
    if len(versions) > 1:
        raise report.ReportProblem(
            f"the reports were written by different harness versions ({', '.join(sorted(versions))}); "
            "re-run all sessions with one harness version before comparing."
        )
    return docs[0], docs[1:]


def main(argv=None) -> int:
    from harness.verdict import render

    parser = argparse.ArgumentParser(prog="python -m harness compare",
                                     description="Compare session reports against the baseline report.")
    parser.add_argument("reports", nargs="+", help="BASE.json OTHER.json [...]: baseline first, candidate second")
    parser.add_argument("--markdown", help="also write the verdict as GitHub Markdown to this file")
    parser.add_argument("--json", help="also write the verdict as JSON to this file")
    parser.add_argument("--html", help="also write a self-contained HTML page with plots to this file")
    args = parser.parse_args(argv)
    if len(args.reports) < 2:
        print("compare: give the baseline report and at least one other report.", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    try:
        base, others = load_all(args.reports)
    except HarnessError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return exc.exit_status
    verdict = judge(base, others)
    print(render.text(verdict))
    try:
        if args.markdown:
            atomic_write_text(Path(args.markdown), render.markdown(verdict))
        if args.json:
            atomic_write_text(Path(args.json), json.dumps(render.as_json(verdict), indent=1) + "\n")
        if args.html:
            from harness.verdict import html

            atomic_write_text(Path(args.html), html.page(verdict, others))
    except OSError as exc:
        print(f"compare: cannot write the summary ({exc}); the verdict above stands.", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    return verdict.exit_status
