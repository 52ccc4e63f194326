"""The PR comment's notes under the entries: how `--candidate` resolved, which entries installed the same
stack, and which reports an earlier run computed (a reviewer finds their logs there). The terminal and the
HTML page show the first two in the entries section; only the comment says which reports were reused."""

from __future__ import annotations

import dataclasses

from harness.verdict import views
from harness.verdict.md_cells import esc
from harness.verdict.section import Judged, Section


@dataclasses.dataclass(frozen=True)
class Notes:
    resolved: list[str]
    same: list[views.SameStack]
    reused: list[views.ReusedReport]


def _rows(judged: Judged) -> Notes:
    v = judged.verdict
    return Notes(views.resolution_notes(v), views.same_stacks(v), views.reused_reports(v))


def _markdown(notes: Notes, _cuts: object) -> list[str]:
    out = ["", "Resolved: " + "; ".join(esc(n) for n in notes.resolved)] if notes.resolved else []
    out += ["", "; ".join(esc(s.line) for s in notes.same)] if notes.same else []
    return out + (["", "Reused: " + "; ".join(esc(r.line) for r in notes.reused)] if notes.reused else [])


SECTION = Section("notes", _rows, markdown=_markdown)
