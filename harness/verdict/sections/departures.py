"""The statements the baseline departs from (harness.verdict.departure_view): each check's statement that a
release broke and an accepted recording kept as its behaviour, since which stack and by how much. Notes for a
reviewer, not changes: the checks pass against the recorded values."""

from __future__ import annotations

import itertools
from html import escape

from harness.verdict.departure_view import DepartureRow, rows
from harness.verdict.md_cells import esc
from harness.verdict.section import Judged, Section

TITLE = "Departures: statements the baseline breaks, recorded as its behaviour by an accepted recording"


def _rows(judged: Judged) -> list[DepartureRow]:
    return rows(judged.verdict)


def _text(found: list[DepartureRow]) -> list[str]:
    if not found:
        return []
    out = [f"\n  {TITLE} (judged against the values recorded; not changes):"]
    for (check, since), statements in itertools.groupby(found, key=lambda r: (r.check, r.since)):
        out.append(f"    {check}  since {since}")
        out += [f"      {row.line}" for row in statements]
    return out


def _markdown(found: list[DepartureRow], _cuts: object) -> list[str]:
    if not found:
        return []
    return ["", f"<details><summary>{TITLE}: {len(found)}</summary>", "",
            "| contract | statement | departs since | size |", "|---|---|---|---|",
            *(f"| `{r.check}` | {esc(r.statement)} (its stated {esc(r.stated)}) | {esc(r.since)} | {esc(r.size)} |"
              for r in found), "", "</details>"]


def _html(found: list[DepartureRow]) -> str | None:
    if not found:
        return None
    body = "".join(f"<tr><td><code>{escape(r.check)}</code></td><td>{escape(r.statement)} (its stated "
                   f"{escape(r.stated)})</td><td>{escape(r.since)}</td><td>{escape(r.size)}</td></tr>" for r in found)
    return (f"<h3 id='departures'>{escape(TITLE)}</h3><table><tr><th>contract</th><th>statement</th>"
            f"<th>departs since</th><th>size</th></tr>{body}</table>")


SECTION = Section("departures", _rows, _text, _markdown, _html)
