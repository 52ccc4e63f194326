"""The project's own contracts first: each family, then each moved check with what moved it."""

from __future__ import annotations

import dataclasses
from html import escape

from harness.verdict import views
from harness.verdict.html_cells import breakable
from harness.verdict.md_cells import esc
from harness.verdict.section import Cuts, Judged, Section

HELD_INLINE = 5  # held checks named on one line; more are folded


@dataclasses.dataclass(frozen=True)
class Own:
    title: str
    families: list[str]  # one line per family of the project's contracts
    moved: list[views.OwnRow]
    held: list[str]  # ids of the checks that held on the candidate
    candidate: str


def _rows(judged: Judged) -> Own | None:
    v = judged.verdict
    if not v.own_families:
        return None
    return Own(views.own_title(v), views.own_lines(v), views.own_rows(v), views.own_held(v),
               v.entries[0].name if v.entries else "the candidate")


def _text(own: Own | None) -> list[str]:
    if own is None:
        return []
    out = [f"\n  {own.title}:"] + [f"  your contracts  {line}" for line in own.families]
    for row in own.moved:
        mark = row.mark.upper() + (" (informational)" if row.informational else "")
        out.append(f"    {mark}  {row.check_id}" + (f"  [{row.size}]" if row.size else ""))
        if row.keys:  # every value that differs, whole
            out += [f"      {k.key}: {k.before} → {k.after}" + (f"  [{k.size}]" if k.size else "") for k in row.keys]
        else:
            out += [f"      {row.what}"] if row.what else []
        out += [f"      cause: {row.cause}"] if row.cause else []
        out += [f"      first changed in {row.first_changed}"] if row.first_changed else []
    return out


def _markdown(own: Own | None, cuts: Cuts) -> list[str]:
    if own is None:
        return []
    out = ["", "**Your contracts:**" + esc(own.title.removeprefix("Your contracts")), ""]
    out += [f"- {esc(line)}" for line in own.families]
    out += _held(own, cuts)
    if own.moved:
        out += ["", "| change | check | value | before → after | size | cause |", "|---|---|---|---|---|---|"]
        for r in own.moved:
            mark = f"{r.mark} (informational)" if r.informational else f"**{r.mark}**"
            first = f"<br>first changed in {esc(r.first_changed)}" if r.first_changed else ""
            for key, what, size in _values(r):  # a row per value that differs: every key, numbers whole
                out.append(f"| {mark} | `{r.check_id}` | {f'`{esc(key)}`' if key else ''} | {esc(what)} | "
                           f"{esc(size)} | {esc(r.cause)}{first} |")
    return out


def _held(own: Own, cuts: Cuts) -> list[str]:
    """The checks that held, by name: on a line when few, else folded (cut with the cases when the comment is long)."""
    if not own.held:
        return []
    said = f"{len(own.held)} held on {own.candidate}"
    if len(own.held) <= HELD_INLINE:
        return [f"- {esc(said)}: " + ", ".join(f"`{esc(i)}`" for i in own.held)]
    shown = own.held if cuts.cases is None else own.held[:cuts.cases]
    left = [f"- … {len(own.held) - len(shown)} more (every check's outcome is in the candidate's report)"] \
        if len(shown) < len(own.held) else []
    return ["", f"<details><summary>Your {esc(said)}</summary>", ""] + [f"- `{esc(i)}`" for i in shown] + left + [
        "", "</details>"]


def _values(row: views.OwnRow) -> list[tuple[str, str, str]]:
    """(key, before → after, size) of each value that differs; the check's one line where it names none."""
    if row.keys:
        return [(k.key, f"{k.before} → {k.after}", k.size) for k in row.keys]
    return [("", row.what, row.size)]


def _html(own: Own | None) -> str:
    if own is None:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in own.families)
    rows = "".join(_html_rows(r) for r in own.moved)
    table = ("<table><tr><th>change</th><th>check</th><th>value</th><th>before → after</th><th>size</th>"
             f"<th>cause</th></tr>{rows}</table>") if rows else ""
    return f"<h2 id='own'>{escape(own.title)}</h2><ul>{items}</ul>{table}"


def _html_rows(r: views.OwnRow) -> str:
    """A row per value that differs; the change, the check and the cause spanning them."""
    values = _values(r)
    span = f" rowspan='{len(values)}'" if len(values) > 1 else ""
    first = (f"<div class='first-changed'>first changed in <b>{escape(r.first_changed)}</b></div>"
             if r.first_changed else "")
    cells = [f"<td>{f'<code>{breakable(key)}</code>' if key else ''}</td><td class='num'>{escape(what)}</td>"
             f"<td>{escape(size)}</td>" for key, what, size in values]
    head = (f"<td class='mark'{span}>{escape(r.mark)}{' (informational)' if r.informational else ''}</td>"
            f"<td{span}><code>{breakable(r.check_id)}</code></td>")
    return (f"<tr>{head}{cells[0]}<td{span}>{escape(r.cause)}{first}</td></tr>"
            + "".join(f"<tr>{c}</tr>" for c in cells[1:]))


SECTION = Section("own", _rows, _text, _markdown, _html)
