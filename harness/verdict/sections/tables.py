"""The tables at the end: each operation's time against the baseline's (informational), the attribution
(each changed check on every entry: which bump changes what) and, in the PR comment, the unchanged checks
with their tolerances. The HTML page shows the attribution with the changes (harness.verdict.sections.changes)."""

from __future__ import annotations

import dataclasses
from html import escape

from harness.model.verdict import SLOWER_THRESHOLD, Change, Verdict
from harness.verdict import views
from harness.verdict.md_cells import more
from harness.verdict.section import Cuts, Judged, Section


@dataclasses.dataclass(frozen=True)
class Tables:
    verdict: Verdict
    performance: list[tuple[str, list[str]]]
    names: list[str]  # the attribution's entries
    attribution: list[tuple[str, list[str]]]
    unchanged: list[Change]


def _rows(judged: Judged) -> Tables:
    v = judged.verdict
    names, rows = views.attribution(v)
    return Tables(v, views.performance_rows(v), names, rows, views.unchanged(v))


def _text(found: Tables) -> list[str]:
    out = []
    if found.performance:
        out.append(f"\n  Performance, fastest steady-state call / baseline's (informational; flagged above "
                   f"{SLOWER_THRESHOLD}x; compile time ratio in brackets):")
        for name, cells in found.performance:
            out.append(f"    {name:28s} " + " ".join(f"{f'{e.name}: {c}':24s}"
                                                     for e, c in zip(found.verdict.entries, cells)))
    if len(found.names) > 1 and found.attribution:
        out.append("\n  Attribution (each changed check on every entry):")
        out.append("    " + f"{'check':58s} " + " ".join(f"{n:18s}" for n in found.names))
        for check_id, marks in found.attribution:
            out.append("    " + f"{check_id:58s} " + " ".join(f"{m:18s}" for m in marks))
    return out


def _markdown(found: Tables, cuts: Cuts) -> list[str]:
    out = []
    names, rows, entries = found.names, found.attribution, found.verdict.entries
    if len(names) > 1 and rows:
        limit = len(rows) if cuts.attribution is None else cuts.attribution
        out += ["", f"<details><summary>Attribution: each changed check on every entry ({len(rows)} checks)"
                "</summary>", "", "| check | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        out += [f"| `{i}` | " + " | ".join(marks) + " |" for i, marks in rows[:limit]]
        out += [""] + more(limit, len(rows), "checks") + ["", "</details>"]
    if found.performance:
        out += ["", f"<details><summary>Performance (informational): fastest steady-state call / baseline's, "
                f"flagged above {SLOWER_THRESHOLD}x; compile-time ratio in brackets</summary>", "",
                "| operation | " + " | ".join(e.name for e in entries) + " |",
                "|---|" + "---|" * len(entries)]
        out += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in found.performance] + ["", "</details>"]
    unchanged = found.unchanged
    if unchanged and cuts.unchanged:
        out += ["", f"<details><summary>{len(unchanged)} unchanged checks on {entries[0].name}</summary>",
                "", "| check | kind | max abs / rel err | tolerance |", "|---|---|---|---|"]
        out += [f"| `{c.check_id}` | {c.kind} | {views.magnitude(c)} | {views.tolerance_text(c.tolerances)} |"
                for c in unchanged] + ["", "</details>"]
    elif unchanged:
        out += ["", f"{len(unchanged)} checks unchanged (listed in upgrade-report.html)."]
    return out


def _html(found: Tables) -> str:
    if not found.performance:
        return ""
    head = "".join(f"<th>{escape(e.name)}</th>" for e in found.verdict.entries)
    body = "".join(f"<tr><td>{escape(name)}</td>" + "".join(f"<td>{escape(c)}</td>" for c in cells)
                   + "</tr>" for name, cells in found.performance)
    return (f"<h2>Performance (informational)</h2><p>Fastest steady-state call relative to the baseline, compile-time "
            f"ratio in brackets; flagged above {SLOWER_THRESHOLD}x. Never changes the exit status.</p>"
            f"<table><tr><th>operation</th>{head}</tr>{body}</table>")


SECTION = Section("tables", _rows, _text, _markdown, _html)
