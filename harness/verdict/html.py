"""The verdict as one self-contained HTML page with plots: reports/upgrade-report.html.

Plots are where people would rather look than read: the curves each check kept (schedules, loss
trajectories) for every entry on one chart, and every check's error as a fraction of its tolerance.
"""

from __future__ import annotations

from html import escape

from harness.model.enums import Status
from harness.model.report import Report
from harness.model.verdict import SLOWER_THRESHOLD, Verdict
from harness.verdict import api_view, charts, groups, render, views

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
h1 { font-size: 22px; padding: 10px 14px; border-radius: 6px; }
h1.ok { background: #e6f4ea; } h1.regressed { background: #fde7e9; } h1.cannot { background: #fff4d6; }
table { border-collapse: collapse; margin: 8px 0 18px; width: 100%; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; font-size: 13px;
         overflow-wrap: anywhere; }  /* a long name wraps in its cell: the size column stays on screen */
th { background: #f5f5f5; } td.mark { white-space: nowrap; font-weight: 600; }
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


def _css_class(status: int) -> str:
    return {0: "ok", 1: "regressed", 2: "cannot"}[status]


def _bits_paragraph(verdict: Verdict) -> str:
    note = f"<p class='detail' id='mode-note'>Note: {escape(verdict.mode_note)}</p>" if verdict.mode_note else ""
    if not verdict.bits_line:
        return note
    return (f"<p id='bits'><b>Bits changed</b> (informational: does not affect the exit status): "
            f"{escape(verdict.bits_line)}</p>{note}")


def _entries_table(verdict: Verdict) -> str:
    rows = "".join(f"<tr><td>{escape(r.name)}</td><td>{escape(r.versions)}</td><td>{escape(r.status)}</td>"
                   f"<td>{escape(r.result)}</td></tr>" for r in views.entry_rows(verdict))
    notes = "".join(f"<li>{escape(n)}</li>" for n in views.resolution_notes(verdict))
    same = "".join(f"<p class='detail'>{escape(s.line)}</p>" for s in views.same_stacks(verdict))
    return (f"<table><tr><th>entry</th><th>versions</th><th>status</th><th>result</th></tr>{rows}</table>"
            + (f"<p>Resolved:</p><ul class='detail'>{notes}</ul>" if notes else "") + same)


def _group_rows(group: groups.ChangeGroup, first_changed: dict[str, str], api: list[str] = ()) -> str:
    cases = "".join(f"<li><code>{escape(groups.case_id(c.check_id) or c.check_id)}</code>: "
                    f"{escape('; '.join(x for x in (c.input, f'{c.before} → {c.after}') if x and x != ' → '))}"
                    f"<div class='detail'>{escape(c.detail[:600])}</div></li>"
                    for c in group.changes)
    return (f"<tr><td class='mark'>{escape(group.mark)}</td><td><code>{escape(group.contract)}</code>"
            f"<div class='detail'>{escape(group.about)}</div>{_first_changed(group, first_changed)}"
            + "".join(f"<div class='api-link'>{escape(line)}</div>" for line in api) + "</td>"
            f"<td>{escape(group.cases_text)}"
            f"<details><summary>inputs and outcomes</summary><ul>{cases}</ul></details></td>"
            f"<td>{escape(group.before_after or group.changes[0].detail[:300])}</td><td>{escape(group.size)}</td></tr>")


def _first_changed(group: groups.ChangeGroup, found: dict[str, str]) -> str:
    text = groups.first_changed(group, found)
    return f"<div class='first-changed'>first changed in <b>{escape(text)}</b></div>" if text else ""


def _changes_tables(verdict: Verdict) -> str:
    out = []
    found = verdict.import_failure
    if found:
        out.append(f"<h3 id='import-failure'>Import failure</h3><p><b>{escape(found.text)}</b></p>"
                   f"<p class='detail'>Library frames, outermost first: {escape(' → '.join(found.frames))}</p>")
    for entry in verdict.entries:
        if entry.problem:
            out.append(f"<p><b>{escape(entry.name)}</b>: {escape(entry.problem)}</p>")
    for title, found_groups in ((views.changed_title(verdict, "the candidate"), views.contract_groups(verdict)),
                                (views.bits_title(verdict), views.bits_groups(verdict))):
        if found_groups:
            rows = "".join(_group_rows(g, verdict.first_changed, api_view.links(verdict.api_diff, verdict.baseline,
                                                                                g.changes)) for g in found_groups)
            out.append(f"<h3>{escape(title)}</h3><table><tr><th>change</th><th>contract</th><th>cases</th>"
                       f"<th>before → after</th><th>size</th></tr>{rows}</table>")
    names, rows = views.attribution(verdict)
    if len(names) > 1 and rows:
        head = "".join(f"<th>{escape(n)}</th>" for n in names)
        body = "".join(f"<tr><td><code>{escape(i)}</code></td>" + "".join(f"<td>{escape(m)}</td>" for m in marks)
                       + "</tr>" for i, marks in rows)
        out.append(f"<h3 id='attribution'>Attribution: which bump changes what</h3>"
                   f"<table><tr><th>check</th>{head}</tr>{body}</table>")
    return "".join(out)


def _own_list(verdict: Verdict) -> str:
    """The project's own contracts first: each family, then each moved check with what moved it."""
    if not verdict.own_families:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in views.own_lines(verdict))
    rows = "".join(
        f"<tr><td class='mark'>{escape(r.mark)}{' (informational)' if r.informational else ''}</td>"
        f"<td><code>{escape(r.check_id)}</code></td><td>{escape(r.what)}</td><td>{escape(r.size)}</td>"
        f"<td>{escape(r.cause)}"
        + (f"<div class='first-changed'>first changed in <b>{escape(r.first_changed)}</b></div>" if r.first_changed
           else "") + "</td></tr>" for r in views.own_rows(verdict))
    table = (f"<table><tr><th>change</th><th>check</th><th>before → after</th><th>size</th><th>cause</th></tr>"
             f"{rows}</table>") if rows else ""
    return f"<h2 id='own'>{escape(views.own_title(verdict))}</h2><ul>{items}</ul>{table}"


def _api_section(verdict: Verdict) -> str:
    """The API section: per library, breaking changes first, then what was added."""
    found = api_view.section(verdict.api_diff)
    if found is None:
        return ""
    parts = [f"<h2 id='api'>{escape(found.title)}</h2>"]
    for title, lines in found.packages:
        items = "".join(f"<li class='{'detail' if line.startswith('  ') else ''}'>{escape(line.strip())}</li>"
                        for line in lines)
        parts.append(f"<h3>{escape(title)}</h3>" + (f"<ul>{items}</ul>" if items else ""))
    return "".join(parts)


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
    docs = [("baseline", verdict.baseline)] + [(d.entry.name, d) for d in others if d.status.ran_to_end]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Upgrade verdict</title><style>{_STYLE}</style></head>
<body>
<h1 class="{_css_class(verdict.exit_status)}" id="headline">{escape(verdict.headline)}</h1>
{_bits_paragraph(verdict)}
{_entries_table(verdict)}
{_own_list(verdict)}
{_changes_tables(verdict)}
{_api_section(verdict)}
<h2>Curves</h2>
<p>What the checks computed along the way, for every entry (solid: baseline; dashed: the others).</p>
<div id="curves">{charts.curves(docs)}</div>
<h2>Error against tolerance</h2>
<p>Each dot is a check's largest error as a fraction of its tolerance (log scale): right of the red line fails.</p>
<div id="tolerances">{charts.tolerances(verdict, docs)}</div>
{_performance_table(verdict)}
<p class="detail">Exit status {verdict.exit_status} ({render.exit_meaning(verdict)}).</p>
</body></html>
"""
