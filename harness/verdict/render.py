"""The verdict for people and tools: terminal text, GitHub Markdown for a PR comment, and JSON."""

from __future__ import annotations

from harness.model.codec import to_json
from harness.model.enums import Mark
from harness.model.verdict import SLOWER_THRESHOLD, Verdict
from harness.verdict import views

PR_COMMENT_LIMIT = 60_000  # GitHub refuses comments over 65,536 characters
EXIT_MEANING = "0 no contract regressed, 1 a contract regressed, 2 the harness could not judge"


def _text_changes(verdict: Verdict) -> list[str]:
    out = []
    for index, entry in enumerate(verdict.entries):
        if entry.problem:
            out.append(f"\n  {entry.name}: {entry.problem}")
        changed = views.changed(entry) if index == 0 else []  # the others appear in the attribution table
        if changed:
            out.append(f"\n  Changed on {entry.name}, by family:")
            out.append(f"    {'change':24s} {'check':58s} {'max abs / rel err':18s} tolerance")
            family = None
            for c in changed:
                if c.family != family:
                    family = c.family
                    out.append(f"  [{family}]")
                out.append(f"    {c.mark:24s} {c.check_id:58s} {views.magnitude(c):18s} "
                           f"{views.tolerance_text(c.tolerances)}")
                if c.detail:
                    out.append(f"      {c.detail[:600]}")
        for w in entry.new_warnings:
            out.append(f"  new {w.category} from {w.origin} on {entry.name}: {w.message[:200]}")
    return out


def _text_tables(verdict: Verdict) -> list[str]:
    out = []
    perf = views.performance_rows(verdict)
    if perf:
        out.append(f"\n  Performance, fastest steady-state call / baseline's (informational; flagged above "
                   f"{SLOWER_THRESHOLD}x; compile time ratio in brackets):")
        for name, cells in perf:
            out.append(f"    {name:28s} " + " ".join(f"{f'{e.name}: {c}':24s}" for e, c in zip(verdict.entries, cells)))
    names, rows = views.attribution(verdict)
    if len(names) > 1 and rows:
        out.append("\n  Attribution (which bump changes what):")
        out.append("    " + f"{'check':58s} " + " ".join(f"{n:18s}" for n in names))
        for check_id, marks in rows:
            out.append("    " + f"{check_id:58s} " + " ".join(f"{m:18s}" for m in marks))
    return out


def text(verdict: Verdict) -> str:
    out = ["", f"VERDICT  {verdict.headline}"]
    if verdict.bits_line:
        out.append(f"         {verdict.bits_line} (informational)")
    out.append("")
    for row in views.entry_rows(verdict):
        out.append(f"  {row.name:12s} {row.versions}  [{row.status}] {row.result}")
    if verdict.baseline.problem:
        out.append(f"\n  baseline: {verdict.baseline.problem}")
    shown, more = views.shown_baseline_failures(verdict)
    for check in shown:
        out.append(f"\n  baseline {check.outcome}: {check.id}\n    {check.message}")
    if more:
        out.append(f"\n  ... and {more} more baseline failures (all in the baseline report)")
    out += _text_changes(verdict) + _text_tables(verdict)
    out.append(f"\n  exit status {verdict.exit_status}")
    return "\n".join(out)


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def markdown(verdict: Verdict) -> str:
    """The verdict for a PR comment; details are shortened until it fits GitHub's comment limit."""
    for detail_chars in (300, 120, 0):
        page = _markdown(verdict, detail_chars)
        if len(page) <= PR_COMMENT_LIMIT:
            return page
    note = "\n\n(truncated to fit a PR comment: the full verdict is in upgrade-summary.json)\n"
    return page[:PR_COMMENT_LIMIT - len(note)].rsplit("\n", 1)[0] + note


def _md_head(verdict: Verdict) -> list[str]:
    icon = {0: "✅", 1: "❌", 2: "⚠️"}[verdict.exit_status]
    out = [f"## {icon} Upgrade verdict: {_md_escape(verdict.headline)}", ""]
    if verdict.bits_line:
        out += [f"Bits changed (informational, exit status unchanged): {_md_escape(verdict.bits_line)}", ""]
    out += [
           "| entry | versions | status | result |", "|---|---|---|---|"]
    out += [f"| {r.name} | {r.versions} | {r.status} | {r.result} |" for r in views.entry_rows(verdict)]
    if verdict.baseline.problem:
        out += ["", f"**baseline**: {_md_escape(verdict.baseline.problem[:800])}"]
    shown, more = views.shown_baseline_failures(verdict)
    if shown:
        out += ["", "**Baseline fails its own checks:**", ""]
        out += [f"- `{c.id}`: {_md_escape(c.message[:400])}" for c in shown]
        if more:
            out.append(f"- ... and {more} more (all in the baseline report)")
    return out


def _md_changes(verdict: Verdict, detail_chars: int) -> list[str]:
    out = []
    for index, entry in enumerate(verdict.entries):
        if entry.problem:
            out += ["", f"**{entry.name}**: {_md_escape(entry.problem[:800])}"]
        changed = views.changed(entry) if index == 0 else []  # the others appear in the attribution table
        if changed:
            out += ["", f"### Changed on `{entry.name}`", "",
                    "| family | change | check | max abs / rel err | tolerance | detail |", "|---|---|---|---|---|---|"]
            out += [f"| {c.family} | {c.mark} | `{c.check_id}` | {views.magnitude(c)} | "
                    f"{views.tolerance_text(c.tolerances)} | {_md_escape(c.detail[:detail_chars])} |" for c in changed]
        if entry.new_warnings:
            out += ["", f"New warnings on `{entry.name}`:", ""]
            out += [f"- {w.category} from {w.origin}: {_md_escape(w.message[:200])}" for w in entry.new_warnings]
    return out


def _md_tables(verdict: Verdict) -> list[str]:
    out = []
    perf = views.performance_rows(verdict)
    if perf:
        out += ["", f"<details><summary>Performance (informational): fastest steady-state call / baseline's, "
                f"flagged above {SLOWER_THRESHOLD}x; compile-time ratio in brackets</summary>", "",
                "| operation | " + " | ".join(e.name for e in verdict.entries) + " |",
                "|---|" + "---|" * len(verdict.entries)]
        out += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in perf]
        out += ["", "</details>"]
    names, rows = views.attribution(verdict)
    if len(names) > 1 and rows:
        out += ["", "### Attribution", "", "| check | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        out += [f"| `{i}` | " + " | ".join(marks) + " |" for i, marks in rows]
    unchanged = views.unchanged(verdict)
    if unchanged:
        out += ["", f"<details><summary>{len(unchanged)} unchanged checks on {verdict.entries[0].name}</summary>",
                "", "| check | kind | max abs / rel err | tolerance |", "|---|---|---|---|"]
        out += [f"| `{c.check_id}` | {c.kind} | {views.magnitude(c)} | {views.tolerance_text(c.tolerances)} |"
                for c in unchanged]
        out += ["", "</details>"]
    return out


def _markdown(verdict: Verdict, detail_chars: int) -> str:
    out = _md_head(verdict) + _md_changes(verdict, detail_chars) + _md_tables(verdict)
    out += ["", f"Exit status {verdict.exit_status} ({EXIT_MEANING})."]
    return "\n".join(out) + "\n"


def as_json(verdict: Verdict) -> dict:
    """reports/upgrade-summary.json: the verdict for tools (changed checks in full, unchanged counted)."""
    base = verdict.baseline
    return {
        "exit_status": verdict.exit_status,
        "headline": verdict.headline,
        "bits_line": verdict.bits_line,
        "baseline": {"versions": base.environment.versions, "status": str(base.status),
                     "summary": to_json(base.summary)},
        "baseline_failures": [{"id": c.id, "message": c.message} for c in verdict.baseline_failures],
        "entries": [
            {"name": e.name, "versions": e.versions, "status": str(e.status), "problem": e.problem,
             "counts": to_json(e.counts), "changes": to_json(e.changed),
             "unchanged": e.counts.get(Mark.UNCHANGED, 0), "new_warnings": to_json(e.new_warnings)}
            for e in verdict.entries
        ],
    }
