"""The verdict for the terminal (text) and for tools (JSON); the PR comment is harness.verdict.markdown.
The sections are declared once (harness.verdict.sections); the text shows each one's lines in order."""

from __future__ import annotations

from harness.model.codec import to_json
from harness.model.enums import BuiltinMode, Mark
from harness.model.verdict import Verdict
from harness.verdict import views
from harness.verdict.section import Judged
from harness.verdict.sections import SECTIONS

EXIT_MEANING = "0 no contract changed, 1 a contract changed, 2 the harness could not judge"
REPORT_EXIT_MEANING = ("0 none of your contracts changed, 1 one of them changed or fails on the baseline, 2 the harness "
                       "could not judge; the built-in contracts are reported only")


def exit_meaning(verdict: Verdict) -> str:
    """What the exit status means for this verdict: with the built-ins reported only (a mode the verdict
    applies only when the project has contracts of its own), your contracts decide."""
    return REPORT_EXIT_MEANING if verdict.builtin == BuiltinMode.REPORT else EXIT_MEANING


def text(verdict: Verdict) -> str:
    """The verdict for the terminal: each section's lines (harness.verdict.sections), then the exit status."""
    judged = Judged(verdict)
    out = [line for section in SECTIONS for line in section.text(section.rows(judged))]
    out.append(f"\n  exit status {verdict.exit_status}")
    return "\n".join(out)


def as_json(verdict: Verdict) -> dict:
    """reports/upgrade-summary.json: the verdict for tools (changed checks in full, unchanged counted)."""
    base = verdict.baseline
    return {
        "exit_status": verdict.exit_status,
        "headline": verdict.headline,
        "cause": verdict.cause,
        "import_failure": to_json(verdict.import_failure),
        "bits_line": verdict.bits_line,
        "first_changed": verdict.first_changed,
        "own_families": to_json(verdict.own_families),
        "own_changes": to_json(verdict.own_changes),  # the project's own moved checks, each with its cause
        "builtin_mode": str(verdict.builtin),  # judge: the built-in contracts decide too; report: only shown
        "mode_note": verdict.mode_note,
        # Entries whose report is another's: they install the same stack, which ran once.
        "same_stack": [{"entry": s.entry, "same_as": s.same_as} for s in views.same_stacks(verdict)],
        "builtin_note": verdict.builtin_note,  # which built-in families a team's run took, and why
        # each callable a team's code calls, its first call site, and the built-in tests it takes
        "team_calls": to_json(verdict.team_calls),
        "api_diff": to_json(verdict.api_diff),
        # harness.model.golden_changes: the branch's golden values against its base branch's (None: not compared)
        "golden_changes": to_json(verdict.golden_changes),  # harness.model.api_diff: api-diff.schema.json
        # `reused`: the report came from an earlier run (its run, when it finished, the entry that computed it).
        # `reused_parts`: the parts of it an earlier run computed (own, builtin), the entry having run the other.
        "baseline": {"versions": base.environment.versions, "status": str(base.status),
                     "summary": to_json(base.summary), "reused": to_json(base.reused),
                     "reused_parts": to_json(base.reused_parts)},
        "baseline_failures": [{"id": c.id, "message": c.message} for c in verdict.baseline_failures],
        "entries": [
            {"name": e.name, "versions": e.versions, "status": str(e.status), "problem": e.problem,
             "counts": to_json(e.counts), "changes": to_json(e.changed),
             "unchanged": e.counts.get(Mark.UNCHANGED, 0), "new_warnings": to_json(e.new_warnings),
             "reused": to_json(e.reused), "reused_parts": to_json(e.reused_parts)}
            for e in verdict.entries
        ],
    }
