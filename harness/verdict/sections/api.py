"""The API section: per library, breaking changes first, then what was added (harness.verdict.api_view)."""

from __future__ import annotations

from html import escape

from harness.verdict import api_view
from harness.verdict.md_cells import esc
from harness.verdict.section import Judged, Section


def _rows(judged: Judged) -> api_view.Section | None:
    return api_view.section(judged.verdict.api_diff)


def _text(found: api_view.Section | None) -> list[str]:
    if found is None:
        return []
    out = [f"\n  {found.title}:"]
    for title, lines in found.packages:
        out += [f"    {title}"] + [f"      {line}" for line in lines]
    return out


def _markdown(found: api_view.Section | None, _cuts: object) -> list[str]:
    if found is None:
        return []
    out = ["", f"### {esc(found.title)}"]
    for title, lines in found.packages:
        out += ["", f"**{esc(title)}**", ""] + [f"{'  ' if line.startswith('  ') else ''}- {esc(line.strip())}"
                                                for line in lines]
    return out


def _html(found: api_view.Section | None) -> str:
    if found is None:
        return ""
    parts = [f"<h2 id='api'>{escape(found.title)}</h2>"]
    for title, lines in found.packages:
        items = "".join(f"<li class='{'detail' if line.startswith('  ') else ''}'>{escape(line.strip())}</li>"
                        for line in lines)
        parts.append(f"<h3>{escape(title)}</h3>" + (f"<ul>{items}</ul>" if items else ""))
    return "".join(parts)


SECTION = Section("api", _rows, _text, _markdown, _html)
