"""The verdict for the terminal (text) and for tools (JSON); the PR comment is harness.verdict.markdown."""

from __future__ import annotations

import textwrap

from harness.model.codec import to_json
from harness.model.enums import BuiltinMode, Mark
from harness.model.verdict import SLOWER_THRESHOLD, Verdict
from harness.verdict import api_view, groups, views

EXIT_MEANING = "0 no contract changed, 1 a contract changed, 2 the harness could not judge"
REPORT_EXIT_MEANING = ("0 none of your contracts changed, 1 one of them changed or fails on the baseline, 2 the harness "
                       "could not judge; the built-in contracts are reported only")


def exit_meaning(verdict: Verdict) -> str:
    """What the exit status means for this verdict: with the built-ins reported only (a mode the verdict
    applies only when the project has contracts of its own), your contracts decide."""
    return REPORT_EXIT_MEANING if verdict.builtin == BuiltinMode.REPORT else EXIT_MEANING


def _text_group(group: groups.ChangeGroup, cases: bool, first_changed: dict[str, str],
                api: list[str] = ()) -> list[str]:
    out = [f"    {group.contract}  {group.cases_text}".rstrip()]
    if group.about:
        out.append(f"      what it pins: {group.about}")
    if group.before_after:
        out.append(f"      {group.before_after}" + (f"  [{group.size}]" if group.size else ""))
    out += [f"      {line}" for line in api]
    if groups.first_changed(group, first_changed):
        out.append(f"      first changed in {groups.first_changed(group, first_changed)}")
    varying = len({(c.before, c.after) for c in group.changes}) > 1
    for c in group.changes if cases else []:
        said = "; ".join(x for x in (c.input, f"{c.before} → {c.after}" if varying else "") if x)
        if said:
            out.append(f"        - {groups.case_id(c.check_id) or c.check_id}: {said}")
    return out


def _text_groups(title: str, found: list[groups.ChangeGroup], cases: bool,
                 first_changed: dict[str, str] | None = None, verdict: Verdict | None = None) -> list[str]:
    out = [f"\n  {title}"] if found else []
    mark = None
    for group in found:
        if group.mark != mark:
            mark = group.mark
            out.append(f"  {mark.upper()}: {groups.MEANING.get(mark, '')}")
        api = api_view.links(verdict.api_diff, verdict.baseline, group.changes) if verdict else []
        out += _text_group(group, cases, first_changed or {}, api)
    return out


def _text_changes(verdict: Verdict) -> list[str]:
    out = []
    if verdict.import_failure:
        f = verdict.import_failure
        out += [f"\n  IMPORT FAILURE: {f.text}", "    library frames, outermost first: " + " > ".join(f.frames)]
    name = verdict.entries[0].name if verdict.entries else ""
    out += _text_groups(views.changed_title(verdict, name) + ":", views.contract_groups(verdict), cases=True,
                        first_changed=verdict.first_changed, verdict=verdict)
    out += _text_groups(views.bits_title(verdict, name) + ":", views.bits_groups(verdict), cases=False)
    for entry in verdict.entries:
        if entry.problem:
            out.append(f"\n  {entry.name}: {entry.problem}")
        for w in entry.new_warnings:
            out.append(f"  new {w.category} from {w.origin} on {entry.name}: {w.message[:200]}")
    return out


def _text_own(verdict: Verdict) -> list[str]:
    """The project's own contracts first: each family, then each moved check with what moved it."""
    if not verdict.own_families:
        return []
    out = [f"\n  {views.own_title(verdict)}:"] + [f"  your contracts  {line}" for line in views.own_lines(verdict)]
    for row in views.own_rows(verdict):
        mark = row.mark.upper() + (" (informational)" if row.informational else "")
        out.append(f"    {mark}  {row.check_id}" + (f"  [{row.size}]" if row.size else ""))
        out += [f"      {row.what}"] if row.what else []
        out += [f"      cause: {row.cause}"] if row.cause else []
        out += [f"      first changed in {row.first_changed}"] if row.first_changed else []
    return out


def _text_api(verdict: Verdict) -> list[str]:
    """The API section: per library, breaking changes first, then what was added."""
    found = api_view.section(verdict.api_diff)
    if found is None:
        return []
    out = [f"\n  {found.title}:"]
    for title, lines in found.packages:
        out += [f"    {title}"] + [f"      {line}" for line in lines]
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
        out.append("\n  Attribution (each changed check on every entry):")
        out.append("    " + f"{'check':58s} " + " ".join(f"{n:18s}" for n in names))
        for check_id, marks in rows:
            out.append("    " + f"{check_id:58s} " + " ".join(f"{m:18s}" for m in marks))
    return out


def text(verdict: Verdict) -> str:
    out = ["", f"VERDICT  {verdict.headline}"]
    if verdict.bits_line:
        out.append(f"         {verdict.bits_line} (informational)")
    if verdict.mode_note:
        out.append(f"         note: {verdict.mode_note}")
    if verdict.builtin_note:
        out.append(f"         {verdict.builtin_note}")
    out.append("")
    for row in views.entry_rows(verdict):
        out.append(f"  {row.name:12s} {row.versions}  [{row.status}] {row.result}")
    for note in views.resolution_notes(verdict):
        out.append(f"  resolved {note}")
    out += [f"  {same.line}" for same in views.same_stacks(verdict)]
    out += _text_own(verdict)
    if verdict.baseline.problem:
        out.append(f"\n  baseline: {verdict.baseline.problem}")
    shown, more = views.shown_baseline_failures(verdict)
    if shown:
        out.append(f"\n  {views.baseline_failures_title(verdict)}:")
    for check in shown:
        out.append(f"\n  baseline {check.outcome}: {check.id}\n" + textwrap.indent(check.message, "    "))
    if more:
        out.append(f"\n  ... and {more} more baseline failures (all in the baseline report)")
    out += _text_changes(verdict) + _text_api(verdict) + _text_tables(verdict)
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
        "api_diff": to_json(verdict.api_diff),  # harness.model.api_diff: api-diff.schema.json
        # `reused`: the report came from an earlier run (its run, when it finished, the entry that computed it).
        "baseline": {"versions": base.environment.versions, "status": str(base.status),
                     "summary": to_json(base.summary), "reused": to_json(base.reused)},
        "baseline_failures": [{"id": c.id, "message": c.message} for c in verdict.baseline_failures],
        "entries": [
            {"name": e.name, "versions": e.versions, "status": str(e.status), "problem": e.problem,
             "counts": to_json(e.counts), "changes": to_json(e.changed),
             "unchanged": e.counts.get(Mark.UNCHANGED, 0), "new_warnings": to_json(e.new_warnings),
             "reused": to_json(e.reused)}
            for e in verdict.entries
        ],
    }
