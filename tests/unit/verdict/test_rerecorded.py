"""The golden values a branch re-recorded, in the verdict's three forms: every value with numeric before → after
(never text cut mid-number), its size and the check that reads it (found in the run's reports); and the team's
policy on the exit status (harness.verdict.rerecorded)."""

from __future__ import annotations

import dataclasses
import html as html_text
import re

import pytest

from harness.model.golden_changes import GoldenChanges, Policy, ValueChange, ValueChangeKind, Writer
from harness.verdict import html, markdown, render, rerecorded


def _golden_labels(report) -> list[tuple[str, str, str]]:
    """(family, key, check id) of golden comparisons in the report."""
    return [(c.family, comp.label.removeprefix("golden:"), c.id) for c in report.checks for comp in c.comparisons
            if comp.label.startswith("golden:")]


@pytest.fixture(scope="module")
def changes(reports) -> GoldenChanges:
    """Sixteen values of the fixture baseline's golden keys, re-recorded without a reason, one of them large."""
    labels = _golden_labels(reports["baseline"])[:16]
    writer = Writer("golden --accept-changes", None)
    values = tuple(ValueChange(family, key, f"golden/{family}.json", ValueChangeKind.CHANGED,
                               f"[3, 1] 0.24667012691497803{i}", f"[3, 1] 0.2470001280307769{i}", "float32", 5, 16,
                               599.0 + i, 1.3e-3, writer) for i, (family, key, _) in enumerate(labels))
    return GoldenChanges("origin/main", "golden", Policy.FAIL, values)


def test_every_value_is_in_every_form_with_numbers_whole_and_its_check(verdict, reports, changes):
    judged = rerecorded.applied(verdict, changes, [reports["baseline"]])
    checks = {(f, k): c for f, k, c in _golden_labels(reports["baseline"])}
    text, md, page = render.text(judged), markdown.markdown(judged), html_text.unescape(
        re.sub(r"<wbr>|<[^>]+>", lambda m: "" if m.group(0) == "<wbr>" else " ", html.page(judged, [])))
    for value in changes.values:
        before_after = f"{value.before} → {value.after}"
        for form in (text, md, page):
            assert before_after in form
            assert value.key in form and checks[(value.family, value.key)] in form
        assert f"{value.max_ulps:.3g} ulp, 0.0013 relative, 5 of 16 elements" in md
    assert "16 changed; 16 without a reason" in text and "16 changed; 16 without a reason" in md


def test_the_strict_policy_fails_a_verdict_that_would_pass_and_says_why_first(verdict, reports, changes):
    passing = dataclasses.replace(verdict, exit_status=0, headline="OK: your contracts hold")
    judged = rerecorded.applied(passing, changes, [reports["baseline"]])
    assert judged.exit_status == 1
    assert judged.headline == ("RE-RECORDED: 16 golden values changed against origin/main's without a reason; "
                               "OK: your contracts hold")
    reported = rerecorded.applied(passing, dataclasses.replace(changes, policy=Policy.REPORT), [reports["baseline"]])
    assert (reported.exit_status, reported.headline) == (0, "OK: your contracts hold")
    assert reported.golden_changes is not None and len(reported.golden_changes.values) == 16
    reasoned = dataclasses.replace(changes, values=tuple(dataclasses.replace(
        v, writer=Writer("accept", "optax 0.2.8 accepted")) for v in changes.values))
    assert rerecorded.applied(passing, reasoned, [reports["baseline"]]).exit_status == 0
    assert render.as_json(reported)["golden_changes"]["values"][0]["key"] == changes.values[0].key


def test_the_page_shows_the_writing_command_as_code(verdict, reports, changes):
    page = html.page(rerecorded.applied(verdict, changes, [reports["baseline"]]), [])
    assert "written by <code>golden --accept-changes</code>, no reason given" in page and "`golden" not in page
