"""The verdict's sections are declared once (harness.verdict.sections.SECTIONS): the terminal text, the
PR comment and the HTML page each iterate them, in order, computing each section's rows once."""

import dataclasses
import re
from collections import Counter

import pytest

from harness.model.enums import BuiltinMode, Mark
from harness.model.verdict import OwnFamily
from harness.verdict import compare, html, markdown, render, sections
from harness.verdict.section import Judged, Section
from harness.verdict.sections import families

from support import upgrade_reports


@pytest.fixture(scope="module")
def reports_with_import_failure(reports):
    """optax 0.2.7 fails to import with jax 0.11.2: every module's checks are missing on it."""
    return compare.judge(reports["baseline"], [reports["candidate-optax-0.2.7"]])


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


def test_the_families_section_counts_each_builtin_familys_checks_from_the_reports(verdict):
    # Independent of the verdict: the check ids of the baseline's and the candidate's raw reports, by family.
    raw = [upgrade_reports.load(name)["checks"] for name in ("baseline", "candidate")]
    expected = Counter(i.split("/", 1)[0] for i in {c["id"] for checks in raw for c in checks})
    text = render.text(verdict)
    assert f"Built-in families judged on candidate: {len(expected)} families, {sum(expected.values())} checks:" in text
    for family, checks in expected.items():
        assert re.search(rf"^    {family} +{checks}  ", text, re.M), family
    assert re.search(r"^    masks +80  no change$", text, re.M)  # no masks check moved on the candidate
    md = markdown.markdown(verdict)
    assert "| masks | 80 | no change |" in md and "| family | checks | what changed |" in md
    assert "<h2 id='families'>Built-in families judged on candidate: 6 families" in html.page(verdict, [])


def test_the_families_section_says_what_moved_most_dangerous_first(verdict):
    row = next(r for r in families.SECTION.rows(Judged(verdict)).rows if r.family == "shapes")
    shapes = [c for c in verdict.entries[0].changes if c.family == "shapes"]
    assert row.checks == len(shapes)
    assert row.what_changed() == "6 now silent, 5 error type changed, 1 improved"  # the order of Mark: danger first


def test_the_families_section_leaves_out_the_projects_own_checks_not_a_built_in_family_of_their_name(verdict):
    """The project's own checks have their section; a built-in family that has an own family's name (a team's
    contracts/test_masks.py) is still a built-in family, listed here."""
    def listed(judged):
        return [r.family for r in families.SECTION.rows(Judged(judged)).rows]

    entry = verdict.entries[0]
    mine = dataclasses.replace(entry, changes=[dataclasses.replace(c, own=c.family == "masks") for c in entry.changes])
    own = dataclasses.replace(verdict, own_families=[OwnFamily("masks", 80, [], 0, [])],
                              entries=[mine, *verdict.entries[1:]])
    assert "masks" not in listed(own) and "shapes" in listed(own)
    beside = dataclasses.replace(verdict, own_families=[OwnFamily("masks", 1, [], 0, [])])  # the built-in masks
    assert "masks" in listed(beside)


def test_no_families_section_without_an_entry(verdict):
    alone = dataclasses.replace(verdict, entries=[])
    assert families.SECTION.rows(Judged(alone)) is None
    assert "Built-in families" not in html.page(alone, [])


def test_a_family_that_could_not_import_says_so_not_check_missing(reports_with_import_failure):
    verdict = reports_with_import_failure
    text = render.text(verdict)
    part = text.split("Built-in families judged on", 1)[1]
    assert re.search(r"^    masks +81  81 could not run \(the import failure\)$", part, re.M)
    assert "check missing" not in part


def test_a_report_whose_built_in_part_was_reused_says_so_in_every_form(reports):
    """The entry ran its own contracts and took its built-in part from an earlier run: its row and the
    comment's Reused line say which part, from which run."""
    from harness.model.reuse import ReusedFrom

    origin = ReusedFrom("20261202T004000-1-abc", "2026-12-02T00:40:12+00:00", "k" * 24, "candidate")
    candidate = dataclasses.replace(reports["candidate"], reused_parts={"builtin": origin})
    verdict = compare.judge(reports["baseline"], [candidate])
    assert "[complete, the built-in contracts reused from 2026-12-02 00:40 UTC]" in render.text(verdict)
    assert ("candidate: the built-in contracts not run, their report reused from run 20261202T004000-1-abc "
            "(finished 2026-12-02 00:40 UTC; nothing that determines it changed)") in markdown.markdown(verdict)
    said = render.as_json(verdict)["entries"][0]
    assert said["reused"] is None and said["reused_parts"]["builtin"]["run_id"] == origin.run_id


def test_a_check_an_attribution_entry_did_not_run_is_named_with_why_in_every_form():
    """Its row counts it ("1 check missing"); the changes listed are the candidate's, so the entries say which."""
    from harness.model import report_io

    docs = {name: upgrade_reports.load(name) for name in upgrade_reports.ENTRIES}
    gone = docs["optax-only"]["checks"].pop(0)["id"]
    parsed = [report_io.parse(docs[n], n) for n in upgrade_reports.ENTRIES]
    verdict = compare.judge(parsed[0], parsed[1:])
    said = (f"optax-only: {gone} did not run: the check ran on the baseline but not here (its module failed to "
            "import or it was skipped)")
    assert said in render.text(verdict) and said in markdown.markdown(verdict)
    assert said.replace("'", "&#x27;") in html.page(verdict, [])


def _failing_both(verdict, rows: int | None = None):
    """The verdict with the candidate's first `rows` changed contract rows (all: None) failing on the baseline too."""
    entry = verdict.entries[0]
    changed = [c.check_id for c in entry.changes if c.mark.changes_contract]
    made = set(changed if rows is None else changed[:rows])
    changes = [dataclasses.replace(c, mark=Mark.FAILING_BOTH) if c.check_id in made else c for c in entry.changes]
    return dataclasses.replace(verdict, entries=[dataclasses.replace(entry, changes=changes), *verdict.entries[1:]])


@pytest.mark.parametrize("rows, title", [
    (None, "Failing on the baseline and on the candidate, most dangerous first"),
    (1, "Changed on the candidate or failing on the baseline too, most dangerous first"),
    (0, "Changed on the candidate, most dangerous first")])
def test_the_changes_title_says_when_its_rows_fail_on_the_baseline_too(verdict, rows, title):
    """Issue 59: the page titled rows that fail on the baseline "changed on the candidate"."""
    shown = _failing_both(verdict, rows)
    assert f"<h3>{title}</h3>" in html.page(shown, [])
    assert f"\n  {title.replace('the candidate', 'candidate')}:" in render.text(shown)
    assert f"### {title.replace('the candidate', '`candidate`')}" in markdown.markdown(shown)


def test_the_builtin_changes_title_of_a_team_says_when_its_rows_fail_on_the_baseline_too(verdict):
    mine = OwnFamily("mine", checks=1, changed=[], bits_changed=0, failing_on_baseline=[])
    shown = dataclasses.replace(_failing_both(verdict), own_families=[mine], builtin=BuiltinMode.REPORT)
    assert ("<h3>Built-in contracts failing on the baseline and on the candidate (reported only: they do not decide "
            "the exit status), most dangerous first</h3>") in html.page(shown, [])
