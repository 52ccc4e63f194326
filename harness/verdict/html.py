"""The verdict as one self-contained HTML page with plots: reports/upgrade-report.html.

Plots are where people would rather look than read: the curves each check kept (schedules, loss
trajectories) for every entry on one chart, and every check's error as a fraction of its tolerance.
"""

from __future__ import annotations

from html import escape

from harness.model.enums import Status
from harness.model.report import Report
from harness.model.verdict import SLOWER_THRESHOLD, Verdict
from harness.verdict import render, svg, views

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
h1 { font-size: 22px; padding: 10px 14px; border-radius: 6px; }
h1.ok { background: #e6f4ea; } h1.regressed { background: #fde7e9; } h1.cannot { background: #fff4d6; }
table { border-collapse: collapse; margin: 8px 0 18px; width: 100%; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; font-size: 13px; }
th { background: #f5f5f5; } td.mark { white-space: nowrap; font-weight: 600; }
code { font-size: 12px; } .detail { color: #555; font-size: 12px; }
.chart { margin: 6px 12px 18px 0; background: #fff; border: 1px solid #eee; }
.title { font-size: 13px; font-weight: 600; } .tick, .row { font-size: 10px; fill: #555; }
.label { font-size: 11px; fill: #333; } .legend { font-size: 11px; font-weight: 600; }
#curves { display: flex; flex-wrap: wrap; }
.axis { stroke: #999; } .grid { stroke: #eee; } .limit { stroke: #d62728; stroke-dasharray: 4 3; }
"""


def _css_class(status: int) -> str:
    return {0: "ok", 1: "regressed", 2: "cannot"}[status]


def _bits_paragraph(verdict: Verdict) -> str:
    if not verdict.bits_line:
        return ""
    return f"<p id='bits'><b>Bits changed</b> (informational, exit status unchanged): {escape(verdict.bits_line)}</p>"


def _entries_table(verdict: Verdict) -> str:
    rows = "".join(f"<tr><td>{escape(r.name)}</td><td>{escape(r.versions)}</td><td>{escape(r.status)}</td>"
                   f"<td>{escape(r.result)}</td></tr>" for r in views.entry_rows(verdict))
    return f"<table><tr><th>entry</th><th>versions</th><th>status</th><th>result</th></tr>{rows}</table>"


def _changes_tables(verdict: Verdict) -> str:
    out = []
    for index, entry in enumerate(verdict.entries):
        if entry.problem:
            out.append(f"<p><b>{escape(entry.name)}</b>: {escape(entry.problem)}</p>")
        changed = views.changed(entry) if index == 0 else []  # the others: attribution table below
        if not changed:
            continue
        rows = "".join(
            f"<tr><td class='mark'>{escape(c.mark)}</td><td><code>{escape(c.check_id)}</code>"
            f"<div class='detail'>{escape(c.detail[:600])}</div></td><td>{escape(views.magnitude(c))}</td>"
            f"<td>{escape(views.tolerance_text(c.tolerances))}</td></tr>" for c in changed)
        out.append(f"<h3>Changed on {escape(entry.name)}</h3><table><tr><th>change</th><th>check</th>"
                   f"<th>max abs / rel err</th><th>tolerance</th></tr>{rows}</table>")
    names, rows = views.attribution(verdict)
    if len(names) > 1 and rows:
        head = "".join(f"<th>{escape(n)}</th>" for n in names)
        body = "".join(f"<tr><td><code>{escape(i)}</code></td>" + "".join(f"<td>{escape(m)}</td>" for m in marks)
                       + "</tr>" for i, marks in rows)
        out.append(f"<h3 id='attribution'>Attribution: which bump changes what</h3>"
                   f"<table><tr><th>check</th>{head}</tr>{body}</table>")
    return "".join(out)


def _curve_charts(docs: list[tuple[str, Report]]) -> str:
    keys: dict[tuple[str, str], None] = {}
    for _, doc in docs:
        for check in doc.checks:
            for name in check.series:
                keys[(check.id, name)] = None
    charts = []
    for check_id, name in keys:
        curves = []
        for label, doc in docs:
            check = doc.check(check_id)
            if check and name in check.series:
                curves.append((label, check.series[name].x, check.series[name].y))
        charts.append(svg.lines(f"{check_id}: {name}", curves, "step", name))
    return "".join(charts)


def _tolerance_charts(docs: list[tuple[str, Report]]) -> str:
    """Per family, each check's largest error as a fraction of its tolerance, for every entry."""
    families: dict[str, dict[str, list]] = {}
    labels = [label for label, _ in docs]
    for i, (_, doc) in enumerate(docs):
        for check in doc.checks:
            used = [c.tolerance_used for c in check.comparisons if c.tolerance_used is not None]
            if not used:
                continue
            name = check.id.split("/", 1)[-1]  # the family is in the chart's title
            row = families.setdefault(check.family, {}).setdefault(name, [None] * len(docs))
            row[i] = max(used)
    return "".join(svg.error_dots(f"{family}: largest error / tolerance per check", sorted(rows.items()), labels)
                   for family, rows in sorted(families.items()))


def _performance_table(verdict: Verdict) -> str:
    rows = views.performance_rows(verdict)
    if not rows:
        return ""
    head = "".join(f"<th>{escape(e.name)}</th>" for e in verdict.entries)
    body = "".join(f"<tr><td>{escape(name)}</td>" + "".join(f"<td>{escape(c)}</td>" for c in cells)
                   + "</tr>" for name, cells in rows)
    return (f"<h2>Performance (informational)</h2><p>Fastest steady-state call relative to the baseline, compile-time "
            f"ratio in brackets; flagged above {SLOWER_THRESHOLD}x. Never changes the exit status.</p>"
            f"<table><tr><th>operation</th>{head}</tr>{body}</table>")


def page(verdict: Verdict, others: list[Report]) -> str:
    docs = [("baseline", verdict.baseline)] + [(d.entry.name, d) for d in others if d.status == Status.COMPLETE]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Upgrade verdict</title><style>{_STYLE}</style></head>
<body>
<h1 class="{_css_class(verdict.exit_status)}" id="headline">{escape(verdict.headline)}</h1>
{_bits_paragraph(verdict)}
{_entries_table(verdict)}
{_changes_tables(verdict)}
<h2>Curves</h2>
<p>What the checks computed along the way, for every entry (solid: baseline; dashed: the others).</p>
<div id="curves">{_curve_charts(docs)}</div>
<h2>Error against tolerance</h2>
<p>Each dot is a check's largest error as a fraction of its tolerance (log scale): right of the red line fails.</p>
<div id="tolerances">{_tolerance_charts(docs)}</div>
{_performance_table(verdict)}
<p class="detail">Exit status {verdict.exit_status} ({render.EXIT_MEANING}).</p>
</body></html>
"""
