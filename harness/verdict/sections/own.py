"""The project's own contracts first: each family, then each moved check with what moved it."""

from __future__ import annotations

import dataclasses
from html import escape

from harness.verdict import views
from harness.verdict.html_cells import breakable
from harness.verdict.md_cells import esc
from harness.verdict.section import Judged, Section


@dataclasses.dataclass(frozen=True)
class Own:
    title: str
    families: list[str]  # one line per family of the project's contracts
    moved: list[views.OwnRow]


def _rows(judged: Judged) -> Own | None:
    v = judged.verdict
    return Own(views.own_title(v), views.own_lines(v), views.own_rows(v)) if v.own_families else None


def _text(own: Own | None) -> list[str]:
    if own is None:
        return []
    out = [f"\n  {own.title}:"] + [f"  your contracts  {line}" for line in own.families]
    for row in own.moved:
        mark = row.mark.upper() + (" (informational)" if row.informational else "")
        out.append(f"    {mark}  {row.check_id}" + (f"  [{row.size}]" if row.size else ""))
        out += [f"      {row.what}"] if row.what else []
        out += [f"      cause: {row.cause}"] if row.cause else []
        out += [f"      first changed in {row.first_changed}"] if row.first_changed else []
    return out


def _markdown(own: Own | None, _cuts: object) -> list[str]:
    if own is None:
        return []
    out = ["", "**Your contracts:**" + esc(own.title.removeprefix("Your contracts")), ""]
    out += [f"- {esc(line)}" for line in own.families]
    if own.moved:
        out += ["", "| change | check | before → after | size | cause |", "|---|---|---|---|---|"]
        for r in own.moved:
            mark = f"{r.mark} (informational)" if r.informational else f"**{r.mark}**"
            first = f"<br>first changed in {esc(r.first_changed)}" if r.first_changed else ""
            out.append(f"| {mark} | `{r.check_id}` | {esc(r.what)} | {esc(r.size)} | {esc(r.cause)}{first} |")
    return out


def _html(own: Own | None) -> str:
    if own is None:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in own.families)
    rows = "".join(
        f"<tr><td class='mark'>{escape(r.mark)}{' (informational)' if r.informational else ''}</td>"
        f"<td><code>{breakable(r.check_id)}</code></td><td>{breakable(r.what)}</td><td>{escape(r.size)}</td>"
        f"<td>{escape(r.cause)}"
        + (f"<div class='first-changed'>first changed in <b>{escape(r.first_changed)}</b></div>" if r.first_changed
           else "") + "</td></tr>" for r in own.moved)
    table = (f"<table><tr><th>change</th><th>check</th><th>before → after</th><th>size</th><th>cause</th></tr>"
             f"{rows}</table>") if rows else ""
    return f"<h2 id='own'>{escape(own.title)}</h2><ul>{items}</ul>{table}"


SECTION = Section("own", _rows, _text, _markdown, _html)
