"""What the verdict rests on: each built-in family's checks judged on the candidate and what became of
them. The changes name the contracts that moved; this says how many checks of each family were judged
around them, so a reviewer sees at a glance which areas were covered and where the changes sit (a family
absent here did not run: a team's selection left it out, or its module did not import)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from html import escape

from harness.model.enums import Mark
from harness.verdict.md_cells import esc
from harness.verdict.section import Judged, Section


@dataclasses.dataclass(frozen=True)
class FamilyRow:
    family: str
    checks: int
    marks: Counter[Mark]
    not_imported: int = 0  # rows the candidate's import failure stands for (one finding, told above)

    def what_changed(self) -> str:
        """Each mark but unchanged, most dangerous first: "3 value changed, 20 bits changed", or "no change"."""
        said = [f"{self.not_imported} could not run (the import failure)"] if self.not_imported else []
        said += [f"{self.marks[m]} {m}" for m in Mark if self.marks[m] and m != Mark.UNCHANGED]
        return ", ".join(said) or "no change"


@dataclasses.dataclass(frozen=True)
class Families:
    entry: str  # the candidate
    rows: list[FamilyRow]  # in the order the candidate's report holds the families


def _rows(judged: Judged) -> Families | None:
    v = judged.verdict
    if not v.entries:
        return None
    failure = v.import_failure
    by_family: dict[str, Counter[Mark | None]] = {}  # None: folded into the import failure
    for change in v.entries[0].changes:
        if not change.own:  # the project's own: their own section
            folded = failure is not None and failure.folds(change)
            by_family.setdefault(change.family, Counter())[None if folded else change.mark] += 1
    rows = [FamilyRow(family, sum(marks.values()), Counter({m: n for m, n in marks.items() if m is not None}),
                      marks[None]) for family, marks in by_family.items()]
    return Families(v.entries[0].name, rows) if rows else None


def _title(found: Families, entry: str) -> str:
    return f"Built-in families judged on {entry}: {len(found.rows)} families, {sum(r.checks for r in found.rows)} checks"


def _text(found: Families | None) -> list[str]:
    if found is None:
        return []
    return [f"\n  {_title(found, found.entry)}:"] + [f"    {r.family:16s} {r.checks:5d}  {r.what_changed()}"
                                                     for r in found.rows]


def _markdown(found: Families | None, _cuts: object) -> list[str]:
    if found is None:
        return []
    return (["", f"**{_title(found, f'`{found.entry}`')}**", "", "| family | checks | what changed |", "|---|---|---|"]
            + [f"| {esc(r.family)} | {r.checks} | {esc(r.what_changed())} |" for r in found.rows])


def _html(found: Families | None) -> str | None:
    if found is None:
        return None
    rows = "".join(f"<tr><td>{escape(r.family)}</td><td>{r.checks}</td><td>{escape(r.what_changed())}</td></tr>"
                   for r in found.rows)
    return (f"<h2 id='families'>{escape(_title(found, found.entry))}</h2>"
            f"<table><tr><th>family</th><th>checks</th><th>what changed</th></tr>{rows}</table>")


SECTION = Section("families", _rows, _text, _markdown, _html)
