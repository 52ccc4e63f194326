"""The HTML page's plots: the curves each check kept, for every entry on one chart, and every check's
error as a fraction of its tolerance (harness.verdict.charts). Only on the page."""

from __future__ import annotations

from harness.verdict import charts
from harness.verdict.section import Judged, Section

_CURVES = """<h2>Curves</h2>
<p>What the checks computed along the way, for every entry (solid: baseline; dashed: the others).</p>
<div id="curves">{}</div>
<h2>Error against tolerance</h2>
<p>Each dot is a check's largest error as a fraction of its tolerance (log scale): right of the red line fails.</p>
<div id="tolerances">{}</div>"""


def _html(judged: Judged) -> str:
    docs = [("baseline", judged.verdict.baseline)] + [(d.entry.name, d) for d in judged.reports
                                                      if d.status.ran_to_end]
    return _CURVES.format(charts.curves(docs), charts.tolerances(judged.verdict, docs))


SECTION = Section("charts", lambda judged: judged, html=_html)
