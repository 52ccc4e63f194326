"""The verdict's sections are declared once (harness.verdict.sections.SECTIONS): the terminal text, the
PR comment and the HTML page each iterate them, in order, computing each section's rows once."""

import dataclasses

import pytest

from harness.model import report_io
from harness.verdict import compare, html, markdown, render, sections
from harness.verdict.section import Section

from support import upgrade_reports


@pytest.fixture(scope="module")
def verdict():
    reports = {name: report_io.parse(upgrade_reports.load(name), name) for name in upgrade_reports.ENTRIES}
    return compare.judge(reports["baseline"], [reports[n] for n in upgrade_reports.ENTRIES[1:]])


def _probe(calls: list[str]) -> Section:
    def rows(judged):
        calls.append(judged.verdict.entries[0].name)
        return "PROBE-ROWS"
    return Section("probe", rows, text=lambda r: [f"text {r}"], markdown=lambda r, cuts: [f"md {r}"],
                   html=lambda r: f"<p>html {r}</p>")


@pytest.mark.parametrize("after", ["headline", "api"])
def test_a_declared_section_shows_in_all_three_forms_where_declared(verdict, monkeypatch, after):
    calls = []
    declared = list(sections.SECTIONS)
    at = [s.name for s in declared].index(after) + 1
    monkeypatch.setattr(sections, "SECTIONS", tuple(declared[:at] + [_probe(calls)] + declared[at:]))
    for form in (render, markdown, html):
        monkeypatch.setattr(form, "SECTIONS", sections.SECTIONS)
    text, md, page = render.text(verdict), markdown.markdown(verdict), html.page(verdict, [])
    assert "text PROBE-ROWS" in text and "md PROBE-ROWS" in md and "<p>html PROBE-ROWS</p>" in page
    # where it was declared: after the headline (before the entries), or after the API section (last lines)
    follows = {"headline": ("[", "| entry |", "<table>"), "api": ("\n  Performance", "<details><summary>Attribution",
                                                                    "<h2>Curves</h2>")}[after]
    for found, probe, nxt in zip((text, md, page), ("text PROBE", "md PROBE", "html PROBE"), follows):
        assert found.index(probe) < found.index(nxt, found.index(probe))
    assert calls == ["candidate"] * 3  # once per rendering: the comment's five cuts reuse its rows


def test_a_section_without_a_form_adds_nothing_to_it(verdict, monkeypatch):
    plain = render.text(verdict), markdown.markdown(verdict), html.page(verdict, [])
    quiet = Section("quiet", lambda judged: None)  # no text, no Markdown, not on the page
    for form in (render, markdown, html):
        monkeypatch.setattr(form, "SECTIONS", (*sections.SECTIONS, quiet))
    assert (render.text(verdict), markdown.markdown(verdict), html.page(verdict, [])) == plain


def test_every_section_has_a_distinct_name():
    names = [s.name for s in sections.SECTIONS]
    assert len(set(names)) == len(names) and all(dataclasses.is_dataclass(s) for s in sections.SECTIONS)
