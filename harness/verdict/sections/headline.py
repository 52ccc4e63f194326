"""The headline: the decision, the bits that moved, the mode's note and which built-in families ran."""

from __future__ import annotations

from html import escape

from harness.model.verdict import Verdict
from harness.verdict.md_cells import esc
from harness.verdict.rerecorded import headline_count
from harness.verdict.section import Judged, Section

_ICON = {0: "✅", 1: "❌", 2: "⚠️"}
_CSS = {0: "ok", 1: "regressed", 2: "cannot"}


def _rows(judged: Judged) -> Verdict:
    return judged.verdict


def _text(verdict: Verdict) -> list[str]:
    out = ["", f"VERDICT  {verdict.headline}"]
    if verdict.bits_line:
        out.append(f"         {verdict.bits_line} (informational)")
    if verdict.host_line:
        out.append(f"         {verdict.host_line}")
    if verdict.mode_note:
        out.append(f"         note: {verdict.mode_note}")
    if verdict.builtin_note:
        out.append(f"         {verdict.builtin_note}")
    return out + [""]


def _markdown(verdict: Verdict, _cuts: object) -> list[str]:
    rerecorded = headline_count(verdict)  # counted here even when green: they may be the branch's whole change
    out = [f"## {_ICON[verdict.exit_status]} Upgrade verdict: {esc(verdict.headline)}"
           + (f"; {esc(rerecorded)}" if rerecorded else ""), ""]
    if verdict.bits_line:
        out += [f"Bits changed (informational: does not affect the exit status): {esc(verdict.bits_line)}", ""]
    if verdict.host_line:
        out += [f"Host: {esc(verdict.host_line)}", ""]
    if verdict.mode_note:
        out += [f"Note: {esc(verdict.mode_note)}", ""]
    if verdict.builtin_note:
        out += [esc(verdict.builtin_note[0].upper() + verdict.builtin_note[1:]), ""]
    return out


def _bits_paragraph(verdict: Verdict) -> str:
    note = f"<p id='host-drift'><b>Host:</b> {escape(verdict.host_line)}</p>" if verdict.host_line else ""
    note += f"<p class='detail' id='mode-note'>Note: {escape(verdict.mode_note)}</p>" if verdict.mode_note else ""
    if verdict.builtin_note:
        note += f"<p class='detail' id='builtin-note'>{escape(verdict.builtin_note)}</p>"
    if not verdict.bits_line:
        return note
    return (f"<p id='bits'><b>Bits changed</b> (informational: does not affect the exit status): "
            f"{escape(verdict.bits_line)}</p>{note}")


def _html(verdict: Verdict) -> str:
    return (f'<h1 class="{_CSS[verdict.exit_status]}" id="headline">{escape(verdict.headline)}</h1>\n'
            + _bits_paragraph(verdict))


SECTION = Section("headline", _rows, _text, _markdown, _html)
