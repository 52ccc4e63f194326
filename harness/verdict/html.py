"""The verdict as one self-contained HTML page with plots: reports/upgrade-report.html.

Plots are where people would rather look than read: the curves each check kept (schedules, loss
trajectories) for every entry on one chart, and every check's error as a fraction of its tolerance
(harness.verdict.sections.charts). Each section (harness.verdict.sections) gives one line of the page.
"""

from __future__ import annotations

from harness.model.report import Report
from harness.model.verdict import Verdict
from harness.verdict import render
from harness.verdict.section import Judged
from harness.verdict.sections import SECTIONS

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
h1 { font-size: 22px; padding: 10px 14px; border-radius: 6px; }
h1.ok { background: #e6f4ea; } h1.regressed { background: #fde7e9; } h1.cannot { background: #fff4d6; }
table { border-collapse: collapse; margin: 8px 0 18px; width: 100%; }
/* No word breaks inside: a column is at least its longest word wide ("anywhere" let the table squeeze columns
   to "baselin e"). A long id wraps after / [ - _ : (html_cells.breakable); only a run longer than the page
   breaks inside (break-word, which leaves the columns' widths alone). */
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; font-size: 13px;
         overflow-wrap: break-word; hyphens: none; }
th { background: #f5f5f5; white-space: nowrap; } td.mark { white-space: nowrap; font-weight: 600; }
code { font-size: 12px; } .detail { color: #555; font-size: 12px; }
.chart { margin: 6px 12px 18px 0; background: #fff; border: 1px solid #eee; }
.title { font-size: 13px; font-weight: 600; } .tick, .row { font-size: 10px; fill: #555; }
.label { font-size: 11px; fill: #333; } .legend { font-size: 11px; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; align-items: flex-start; } .pair { display: flex; flex-direction: column; }
.pair .chart { margin-bottom: 0; } .pair .chart + .chart { margin: 0 12px 18px 0; border-top: none; }
.row { font-family: ui-monospace, Menlo, Consolas, monospace; } .legend { font-weight: 400; }
summary { cursor: pointer; font-weight: 600; margin: 8px 0; } .first-changed { font-size: 12px; color: #7a4100; }
.axis { stroke: #999; } .grid { stroke: #eee; } .limit { stroke: #d62728; stroke-dasharray: 4 3; }
.zero { stroke: #555; } .edge { fill: #f4f4f4; } .band { fill: #fafafa; }
"""


def page(verdict: Verdict, others: list[Report]) -> str:
    """The page: each section's fragment on a line of its own (harness.verdict.sections), then the exit status."""
    judged = Judged(verdict, tuple(others))
    lines = [section.html(section.rows(judged)) for section in SECTIONS]
    body = "".join(f"{line}\n" for line in lines if line is not None)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Upgrade verdict</title><style>{_STYLE}</style></head>
<body>
{body}<p class="detail">Exit status {verdict.exit_status} ({render.exit_meaning(verdict)}).</p>
</body></html>
"""
