"""One row per entry (versions, status, result), with how `--candidate` resolved and which entries
installed the same stack. The PR comment shows the notes after your contracts (harness.verdict.sections.notes)."""

from __future__ import annotations

import dataclasses
from html import escape

from harness.verdict import host_drift, views
from harness.verdict.md_cells import esc
from harness.verdict.section import Judged, Section


@dataclasses.dataclass(frozen=True)
class Entries:
    rows: list[views.EntryRow]
    resolved: list[str]
    same: list[views.SameStack]
    host: str | None  # the baseline's host, and where the golden values were recorded
    missing: list[str]  # each check an attribution entry did not run, and why (the candidate's: in its changes)


def _rows(judged: Judged) -> Entries:
    v = judged.verdict
    return Entries(views.entry_rows(v), views.resolution_notes(v), views.same_stacks(v),
                   host_drift.host_row(v.baseline), views.missing_lines(v))


def _text(found: Entries) -> list[str]:
    out = [f"  {row.name:12s} {row.versions}  [{row.status}] {row.result}" for row in found.rows]
    out[1:1] = [f"  {'':12s} {found.host}"] if found.host else []  # under the baseline's row: where it ran
    out += [f"  resolved {note}" for note in found.resolved]
    return out + [f"  {same.line}" for same in found.same] + [f"  {line}" for line in found.missing]


def _markdown(found: Entries, _cuts: object) -> list[str]:
    return (["| entry | versions | status | result |", "|---|---|---|---|"]
            + [f"| {r.name} | {r.versions} | {r.status} | {r.result} |" for r in found.rows]
            + (["", esc(found.host[0].upper() + found.host[1:])] if found.host else [])
            + (["", *(f"- {esc(line)}" for line in found.missing)] if found.missing else []))


def _html(found: Entries) -> str:
    rows = "".join(f"<tr><td>{escape(r.name)}</td><td>{escape(r.versions)}</td><td>{escape(r.status)}</td>"
                   f"<td>{escape(r.result)}</td></tr>" for r in found.rows)
    notes = "".join(f"<li>{escape(n)}</li>" for n in found.resolved)
    same = "".join(f"<p class='detail'>{escape(s.line)}</p>" for s in found.same)
    host = f"<p class='detail' id='host'>{escape(found.host[0].upper() + found.host[1:])}</p>" if found.host else ""
    missing = "".join(f"<li>{escape(line)}</li>" for line in found.missing)
    return (f"<table><tr><th>entry</th><th>versions</th><th>status</th><th>result</th></tr>{rows}</table>" + host
            + (f"<p>Resolved:</p><ul class='detail'>{notes}</ul>" if notes else "") + same
            + (f"<ul class='detail' id='missing'>{missing}</ul>" if missing else ""))


SECTION = Section("entries", _rows, _text, _markdown, _html)
