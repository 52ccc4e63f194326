"""Small inline-SVG charts for the HTML report: no plotting stack on the host, no scripts, no files
beside the page. Two kinds: lines (curves per entry) and dots on a log axis (error / tolerance).
"""

from __future__ import annotations

import math
from html import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
DASHES = ["", "6 3", "2 3", "8 3 2 3", "1 2", "4 4"]
W, H = 520, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 28, 40


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi == lo:
        return [lo]
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def lines(title: str, curves: list[tuple[str, list[float], list[float]]], xlabel: str, ylabel: str) -> str:
    """One polyline per (label, xs, ys); later curves dashed so overlapping ones stay visible."""
    pts = [(x, y) for _, xs, ys in curves for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y)]
    if not pts:
        return ""
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1
    if x1 == x0:
        x1 = x0 + 1

    def sx(x):
        return LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT)

    def sy(y):
        return H - BOTTOM - (y - y0) / (y1 - y0) * (H - TOP - BOTTOM)

    out = [_frame(title, xlabel, ylabel)]
    for t in _ticks(y0, y1):
        out.append(f'<text x="{LEFT - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" class="tick">{_fmt(t)}</text>')
    for t in _ticks(x0, x1):
        out.append(f'<text x="{sx(t):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" class="tick">{_fmt(t)}</text>')
    for i, (label, xs, ys) in enumerate(curves):
        color, dash = COLORS[i % len(COLORS)], DASHES[i % len(DASHES)]
        points = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y))
        out.append(f'<polyline class="curve" data-label="{escape(label)}" fill="none" stroke="{color}" '
                   f'stroke-width="2" stroke-dasharray="{dash}" points="{points}"/>')
        out.append(f'<text x="{W - RIGHT - 4}" y="{TOP + 14 + 14 * i}" text-anchor="end" fill="{color}" '
                   f'class="legend">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def error_dots(title: str, rows: list[tuple[str, list[float | None]]], labels: list[str]) -> str:
    """Per row (a check), one dot per entry at error / tolerance on a log axis; the line at 1 is the tolerance."""
    lo, hi = -8, 2  # log10 range: 1e-8 of the tolerance up to 100x over it
    height = TOP + BOTTOM + 16 * max(len(rows), 1)
    label_w, width = 320, W + 300

    def sx(v):
        v = min(max(v, 10.0 ** lo), 10.0 ** hi)
        return label_w + 10 + (math.log10(v) - lo) / (hi - lo) * (width - label_w - 10 - RIGHT - 70)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" class="chart" role="img">',
           f'<title>{escape(title)}</title>',
           f'<text x="8" y="18" class="title">{escape(title)}</text>']
    for e in range(lo, hi + 1, 2):
        x = sx(10.0 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{height - BOTTOM}" class="grid"/>')
        out.append(f'<text x="{x:.1f}" y="{height - BOTTOM + 16}" text-anchor="middle" class="tick">1e{e}</text>')
    one = sx(1.0)
    out.append(f'<line x1="{one:.1f}" y1="{TOP}" x2="{one:.1f}" y2="{height - BOTTOM}" class="limit"/>')
    out.append(f'<text x="{one + 4:.1f}" y="{TOP - 4}" class="tick">tolerance</text>')
    for r, (name, values) in enumerate(rows):
        y = TOP + 12 + 16 * r
        out.append(f'<text x="{label_w}" y="{y + 4}" text-anchor="end" class="row">{escape(name[-60:])}</text>')
        for i, v in enumerate(values):
            if v is None:
                continue
            shown = max(v, 10.0 ** lo)
            out.append(f'<circle class="dot" cx="{sx(shown):.1f}" cy="{y}" r="4" fill="{COLORS[i % len(COLORS)]}" '
                       f'fill-opacity="0.8"><title>{escape(labels[i])}: {v:.3g} of the tolerance</title></circle>')
    for i, label in enumerate(labels):
        out.append(f'<text x="{width - RIGHT - 4}" y="{height - 8 - 14 * (len(labels) - 1 - i)}" text-anchor="end" '
                   f'fill="{COLORS[i % len(COLORS)]}" class="legend">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _frame(title: str, xlabel: str, ylabel: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" class="chart" role="img">'
            f'<title>{escape(title)}</title>'
            f'<text x="{LEFT}" y="18" class="title">{escape(title)}</text>'
            f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}" class="axis"/>'
            f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" class="axis"/>'
            f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 6}" text-anchor="middle" class="label">{escape(xlabel)}</text>'
            f'<text x="14" y="{(TOP + H - BOTTOM) / 2}" text-anchor="middle" class="label" '
            f'transform="rotate(-90 14 {(TOP + H - BOTTOM) / 2})">{escape(ylabel)}</text>')
