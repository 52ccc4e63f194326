"""The verdict as a PR comment: under COMMENT_BUDGET characters, the decision first.

When the page is too long, the unchanged-checks table goes first, then the per-case lists and the
attribution table are cut, each cut saying how many rows it left out; the HTML page and
upgrade-summary.json always hold everything.
"""

from __future__ import annotations

import dataclasses

from harness.model.verdict import SLOWER_THRESHOLD, Verdict
from harness.verdict import api_view, groups, views
from harness.verdict.render import exit_meaning

COMMENT_BUDGET = 20_000  # a reviewer's one-minute read; GitHub's own limit is 65,536


@dataclasses.dataclass(frozen=True)
class Cuts:
    """How much of each long section a page shows (None: all of it)."""

    unchanged: bool = True
    cases: int | None = None
    attribution: int | None = None


_CUTS = [Cuts(), Cuts(unchanged=False), Cuts(False, 60, 40), Cuts(False, 20, 15), Cuts(False, 0, 0)]


def esc(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _more(shown: int, total: int, what: str) -> list[str]:
    return [f"- … {total - shown} more {what} (all in upgrade-report.html and upgrade-summary.json)"] \
        if total > shown else []


def _head(verdict: Verdict) -> list[str]:
    icon = {0: "✅", 1: "❌", 2: "⚠️"}[verdict.exit_status]
    out = [f"## {icon} Upgrade verdict: {esc(verdict.headline)}", ""]
    if verdict.bits_line:
        out += [f"Bits changed (informational: does not affect the exit status): {esc(verdict.bits_line)}", ""]
    if verdict.mode_note:
        out += [f"Note: {esc(verdict.mode_note)}", ""]
    if verdict.builtin_note:
        out += [esc(verdict.builtin_note[0].upper() + verdict.builtin_note[1:]), ""]
    out += ["| entry | versions | status | result |", "|---|---|---|---|"]
    out += [f"| {r.name} | {r.versions} | {r.status} | {r.result} |" for r in views.entry_rows(verdict)]
    out += _own(verdict)
    notes = views.resolution_notes(verdict)
    out += ["", "Resolved: " + "; ".join(esc(n) for n in notes)] if notes else []
    same = views.same_stacks(verdict)
    out += ["", "; ".join(esc(s.line) for s in same)] if same else []
    reused = views.reused_reports(verdict)  # from which run: a reviewer finds its logs there
    out += ["", "Reused: " + "; ".join(esc(r.line) for r in reused)] if reused else []
    if verdict.baseline.problem:
        out += ["", f"**baseline**: {esc(verdict.baseline.problem[:800])}"]
    shown, more = views.shown_baseline_failures(verdict)
    if shown:
        out += ["", f"**{views.baseline_failures_title(verdict)}:**", ""]
        out += [f"- `{c.id}`: {esc(c.message[:400])}" for c in shown]
        out += [f"- … {more} more (all in the baseline report)"] if more else []
    found = verdict.import_failure
    if found:
        out += ["", "### Import failure", "", f"**{esc(found.text)}**", "",
                f"Library frames, outermost first: {' → '.join(f'`{f}`' for f in found.frames)}"]
    return out


def _own(verdict: Verdict) -> list[str]:
    """The project's own contracts first: each family, then each moved check with what moved it."""
    if not verdict.own_families:
        return []
    title = views.own_title(verdict)
    out = ["", "**Your contracts:**" + esc(title.removeprefix("Your contracts")), ""]
    out += [f"- {esc(line)}" for line in views.own_lines(verdict)]
    rows = views.own_rows(verdict)
    if rows:
        out += ["", "| change | check | before → after | size | cause |", "|---|---|---|---|---|"]
        for r in rows:
            mark = f"{r.mark} (informational)" if r.informational else f"**{r.mark}**"
            first = f"<br>first changed in {esc(r.first_changed)}" if r.first_changed else ""
            out.append(f"| {mark} | `{r.check_id}` | {esc(r.what)} | {esc(r.size)} | {esc(r.cause)}{first} |")
    return out


def _group_row(g: groups.ChangeGroup, first_changed: dict[str, str], api: list[str] = ()) -> str:
    what = f"`{g.contract}`" + (f"<br>{esc(g.about)}" if g.about else "")
    first = groups.first_changed(g, first_changed)
    what += f"<br>**first changed in {esc(first)}**" if first else ""
    what += "".join(f"<br>{esc(line)}" for line in api)
    return f"| **{g.mark}** | {what} | {esc(g.cases_text)} | {esc(g.before_after)} | {esc(g.size)} |"


def _changes(verdict: Verdict, cuts: Cuts) -> list[str]:
    found = views.contract_groups(verdict)
    out = []
    if found:
        name = verdict.entries[0].name
        out += ["", f"### {views.changed_title(verdict, f'`{name}`')}", "",
                "| change | contract | cases | before → after | size |", "|---|---|---|---|---|"]
        out += [_group_row(g, verdict.first_changed, api_view.links(verdict.api_diff, verdict.baseline, g.changes))
                for g in found]
        cases = [(g, c) for g in found for c in g.changes]
        limit = len(cases) if cuts.cases is None else cuts.cases
        if limit:
            out += ["", f"<details><summary>The {len(cases)} cases: input and outcome</summary>", ""]
            out += [f"- {g.mark}: `{c.check_id}`: " + esc("; ".join(x for x in (c.input, f"{c.before} → {c.after}")
                                                                    if x and x != " → ")) for g, c in cases[:limit]]
            out += _more(limit, len(cases), "cases") + ["", "</details>"]
        elif cases:
            out += ["", f"({len(cases)} cases: inputs and outcomes in upgrade-report.html)"]
    bits = views.bits_groups(verdict)
    if bits:
        out += ["", f"<details><summary>{views.bits_title(verdict)}: {sum(len(g.changes) for g in bits)} checks"
                "</summary>", "", "| contract | cases | what moved |", "|---|---|---|"]
        out += [f"| `{g.contract}` | {esc(g.cases_text)} | {esc(groups.bits_text(g))} |" for g in bits]
        out += ["", "</details>"]
    for entry in verdict.entries:
        if entry.problem:
            out += ["", f"**{entry.name}**: {esc(entry.problem[:800])}"]
        if entry.new_warnings:
            out += ["", f"New warnings (deprecations and others) on `{entry.name}`:", ""]
            out += [f"- {w.category} from {w.origin}: {esc(w.message[:200])}" for w in entry.new_warnings]
    return out


def _api(verdict: Verdict) -> list[str]:
    """The API section: per library, breaking changes first, then what was added."""
    found = api_view.section(verdict.api_diff)
    if found is None:
        return []
    out = ["", f"### {esc(found.title)}"]
    for title, lines in found.packages:
        out += ["", f"**{esc(title)}**", ""] + [f"{'  ' if line.startswith('  ') else ''}- {esc(line.strip())}"
                                                for line in lines]
    return out


def _tables(verdict: Verdict, cuts: Cuts) -> list[str]:
    out = []
    names, rows = views.attribution(verdict)
    if len(names) > 1 and rows:
        limit = len(rows) if cuts.attribution is None else cuts.attribution
        out += ["", f"<details><summary>Attribution: each changed check on every entry ({len(rows)} checks)"
                "</summary>", "", "| check | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        out += [f"| `{i}` | " + " | ".join(marks) + " |" for i, marks in rows[:limit]]
        out += [""] + _more(limit, len(rows), "checks") + ["", "</details>"]
    perf = views.performance_rows(verdict)
    if perf:
        out += ["", f"<details><summary>Performance (informational): fastest steady-state call / baseline's, "
                f"flagged above {SLOWER_THRESHOLD}x; compile-time ratio in brackets</summary>", "",
                "| operation | " + " | ".join(e.name for e in verdict.entries) + " |",
                "|---|" + "---|" * len(verdict.entries)]
        out += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in perf] + ["", "</details>"]
    unchanged = views.unchanged(verdict)
    if unchanged and cuts.unchanged:
        out += ["", f"<details><summary>{len(unchanged)} unchanged checks on {verdict.entries[0].name}</summary>",
                "", "| check | kind | max abs / rel err | tolerance |", "|---|---|---|---|"]
        out += [f"| `{c.check_id}` | {c.kind} | {views.magnitude(c)} | {views.tolerance_text(c.tolerances)} |"
                for c in unchanged] + ["", "</details>"]
    elif unchanged:
        out += ["", f"{len(unchanged)} checks unchanged (listed in upgrade-report.html)."]
    return out


def _page(verdict: Verdict, cuts: Cuts, links: str) -> str:
    out = _head(verdict) + _changes(verdict, cuts) + _api(verdict) + _tables(verdict, cuts)
    out += ["", f"Exit status {verdict.exit_status} ({exit_meaning(verdict)})." + (f" {links}" if links else "")]
    return "\n".join(out) + "\n"


def markdown(verdict: Verdict, links: str = "") -> str:
    """The verdict for a PR comment, within COMMENT_BUDGET: the longest sections are cut first."""
    for cuts in _CUTS:
        page = _page(verdict, cuts, links)
        if len(page) <= COMMENT_BUDGET:
            return page
    note = "\n\n… (cut to fit a PR comment: the full verdict is in upgrade-report.html and upgrade-summary.json)\n"
    return page[:COMMENT_BUDGET - len(note)].rsplit("\n", 1)[0] + note
