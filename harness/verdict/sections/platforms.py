"""The same pins on two platforms (harness.verdict.across_platforms): the contract changes only the accelerator
shows, those only the CPU shows (and why not the other: unchanged there, or not on that platform), and the
chip's own drift against the CPU's baseline values. Informational: the verdict is this platform's."""

from __future__ import annotations

from html import escape

from harness.verdict.across_platforms import Contrast
from harness.verdict.md_cells import esc
from harness.verdict import where
from harness.verdict.section import Judged, Section

SHOWN = 12  # checks listed per side; the rest counted


HINT = ("no verdict on the CPU for the same pins yet: run the same upgrade with --platform cpu to see which "
        "changes only the accelerator shows")


def _rows(judged: Judged) -> list[Contrast | str]:
    """The contrasts; on an accelerator with none, the hint that gets one."""
    found = list(judged.verdict.across_platforms)
    return found or ([HINT] if where.on_accelerator(judged.verdict.baseline) and judged.verdict.entries else [])


def _lines(c: Contrast | str) -> list[str]:
    if isinstance(c, str):
        return [f"Across platforms: {c}."]
    here, there = c.here.split(" ")[0], c.there.split(" ")[0]
    out = [f"Same pins on {c.there}: {c.on_both} contract changes on both, {len(c.only_here)} only on {here}, "
           f"{len(c.only_there)} only on {there}"]
    out += [f"  only on {here}: {check} ({mark})" for check, mark in c.only_here[:SHOWN]]
    out += [f"  only on {there}: {check} ({mark}; on {here}: {why})" for check, mark, why in c.only_there[:SHOWN]]
    rest = max(0, len(c.only_here) - SHOWN) + max(0, len(c.only_there) - SHOWN)
    out += [f"  ... and {rest} more (reports/upgrade-summary.json)"] if rest else []
    if c.drift:
        out.append(f"{here}'s own drift, its baseline's values against {there}'s: {c.drift} (informational)")
    return out


def _text(found: list[Contrast | str]) -> list[str]:
    return [line for c in found for line in ["", *(f"  {x}" for x in _lines(c))]]


def _markdown(found: list[Contrast | str], _cuts: object) -> list[str]:
    return [line for c in found for line in ["", *(f"- {esc(x.strip())}" for x in _lines(c))]]


def _html(found: list[Contrast | str]) -> str | None:
    if not found:
        return None
    items = "".join(f"<li>{escape(x.strip())}</li>" for c in found for x in _lines(c))
    return f"<h3 id='platforms'>Across platforms</h3><ul>{items}</ul>"


SECTION = Section("platforms", _rows, _text, _markdown, _html)
