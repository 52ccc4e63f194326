"""The verdict's sections, declared once in the order every form shows them: the terminal text
(harness.verdict.render), the PR comment (harness.verdict.markdown) and the HTML page
(harness.verdict.html) each iterate SECTIONS. A new section is one module here and one line below."""

from __future__ import annotations

from harness.verdict.section import Section
from harness.verdict.sections import (api, baseline, changes, charts, departures, entries, families, headline,
                                     next_step, notes, own, platforms, rerecorded, tables)

SECTIONS: tuple[Section, ...] = (
    headline.SECTION,
    next_step.SECTION,
    entries.SECTION,
    platforms.SECTION,
    own.SECTION,
    rerecorded.SECTION,
    notes.SECTION,
    baseline.SECTION,
    departures.SECTION,
    changes.SECTION,
    families.SECTION,
    api.SECTION,
    charts.SECTION,
    tables.SECTION,
)
