"""Small inline-SVG charts for the HTML report: no plotting stack on the host, no scripts, no files
beside the page. Lines (curves per entry, and their difference from the baseline) and markers on a
log axis (error / tolerance). Text is measured by its character count, so no label is cut off.
"""

from __future__ import annotations

import dataclasses
import math
from html import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
DASHES = ["", "6 3", "2 3", "8 3 2 3", "1 2", "4 4"]
W, H, DIFF_H = 520, 300, 190
LEFT, RIGHT, BOTTOM = 64, 16, 40
CHAR = 0.62  # a character's width in ems: exact for monospace row labels, generous for the rest
LINE = 16  # height of a line of legend


def color(style: int) -> str:
    return COLORS[style % len(COLORS)]


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR


def fit(text: str, width: float, size: float) -> str:
    """The text (escaped) shortened in the middle to fit `width`, with the full text as its tooltip."""
    room = max(int(width / (size * CHAR)), 9)
    if len(text) <= room:
        return escape(text)
    head = (room - 1) // 2
    short = text[:head] + "\u2026" + text[len(text) - (room - 1 - head):]
    return f"{escape(short)}<title>{escape(text)}</title>"


def nice_ticks(lo: float, hi: float, integer: bool = False, n: int = 5) -> list[float]:
    """Ticks at multiples of 1, 2 or 5 x 10^k inside [lo, hi]; whole numbers only when the data are."""
    if not hi > lo:
        return [lo]
    mag = 10.0 ** math.floor(math.log10((hi - lo) / n))
    step = min((m * mag for m in (1, 2, 5, 10, 20)), key=lambda s: abs((hi - lo) / s - n))  # about n steps
    if integer:
        step = max(1.0, float(round(step)))
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [k * step for k in range(first, last + 1)]


def tick_text(value: float, step: float) -> str:
    """A tick label with as many decimals as the step needs (no 0.30000000000000004, no 2.5 on steps)."""
    if value == 0:
        return "0"
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 3
    return f"{value:.3g}" if decimals > 4 or abs(value) >= 1e6 else f"{value:.{decimals}f}"


def _open(width: float, height: float, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" class="chart" '
            f'role="img"><title>{escape(title)}</title>',
            f'<text x="8" y="18" class="title">{fit(title, width - 16, 13)}</text>']


def legend(items: list[tuple[str, str]], x: float, y: float, width: float) -> tuple[list[str], int]:
    """Swatch-and-label items (swatch: an SVG snippet drawn at 0,0) laid out in rows within `width`;
    the SVG and the number of rows."""
    out, cx, rows = [], x, 1
    for label, swatch in items:
        item_w = 26 + text_width(label, 11)
        if cx > x and cx + item_w > x + width:
            cx, rows = x, rows + 1
        cy = y + LINE * (rows - 1)
        out.append(f'<g transform="translate({cx:.1f},{cy - 4:.1f})">{swatch}</g>'
                   f'<text x="{cx + 24:.1f}" y="{cy:.1f}" class="legend">{fit(label, width - 26, 11)}</text>')
        cx += item_w + 14
    return out, rows


def line_swatch(style: int) -> str:
    return (f'<line class="swatch" x1="0" y1="0" x2="20" y2="0" stroke="{color(style)}" '
            f'stroke-width="2" stroke-dasharray="{DASHES[style % len(DASHES)]}"/>')


@dataclasses.dataclass(frozen=True)
class Curve:
    label: str
    xs: list[float]
    ys: list[float]
    style: int  # index into COLORS and DASHES: an entry keeps one look on every chart


@dataclasses.dataclass(frozen=True)
class _Plot:
    """A plot area and the data range it maps onto it."""

    width: float
    height: float
    top: float
    x0: float
    x1: float
    y0: float
    y1: float

    def sx(self, x: float) -> float:
        return LEFT + (x - self.x0) / (self.x1 - self.x0) * (self.width - LEFT - RIGHT)

    def sy(self, y: float) -> float:
        return self.height - BOTTOM - (y - self.y0) / (self.y1 - self.y0) * (self.height - self.top - BOTTOM)


def _finite(curve: Curve) -> list[tuple[float, float]]:
    return [(x, y) for x, y in zip(curve.xs, curve.ys) if math.isfinite(x) and math.isfinite(y)]


def x_range(curves: list[Curve]) -> tuple[float, float]:
    xs = [x for c in curves for x, _ in _finite(c)] or [0.0]
    return min(xs), max(max(xs), min(xs) + 1)


def _axes(plot: _Plot, xlabel: str, ylabel: str, integer_x: bool, integer_y: bool) -> list[str]:
    """Axis lines, grid and tick labels at nice values, and the axis labels."""
    bottom, mid_y = plot.height - BOTTOM, (plot.top + plot.height - BOTTOM) / 2
    out = [f'<line x1="{LEFT}" y1="{bottom}" x2="{plot.width - RIGHT}" y2="{bottom}" class="axis"/>',
           f'<line x1="{LEFT}" y1="{plot.top}" x2="{LEFT}" y2="{bottom}" class="axis"/>']
    yt = nice_ticks(plot.y0, plot.y1, integer_y)
    for t in yt:
        y, text = plot.sy(t), tick_text(t, yt[1] - yt[0] if len(yt) > 1 else 1)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{plot.width - RIGHT}" y2="{y:.1f}" class="grid"/>'
                   f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick ytick">{text}</text>')
    xt = nice_ticks(plot.x0, plot.x1, integer_x)
    for t in xt:
        text = tick_text(t, xt[1] - xt[0] if len(xt) > 1 else 1)
        out.append(f'<text x="{plot.sx(t):.1f}" y="{bottom + 16}" text-anchor="middle" class="tick xtick">'
                   f'{text}</text>')
    out.append(f'<text x="{(LEFT + plot.width - RIGHT) / 2}" y="{plot.height - 6}" text-anchor="middle" '
               f'class="label">{escape(xlabel)}</text>'
               f'<text x="14" y="{mid_y:.1f}" text-anchor="middle" class="label" transform="rotate(-90 14 '
               f'{mid_y:.1f})">{fit(ylabel, plot.height - plot.top - BOTTOM, 11)}</text>')
    return out


def _integers(values) -> bool:  # integer data get integer ticks
    return all(float(v).is_integer() for v in values)


def _polyline(plot: _Plot, curve: Curve, css: str) -> str:
    points = " ".join(f"{plot.sx(x):.1f},{plot.sy(y):.1f}" for x, y in _finite(curve))
    return (f'<polyline class="{css}" data-label="{escape(curve.label)}" fill="none" '
            f'stroke="{color(curve.style)}" stroke-width="2" '
            f'stroke-dasharray="{DASHES[curve.style % len(DASHES)]}" points="{points}"/>')


def _chart(title: str, curves: list[Curve], xs: tuple[float, float], ys: tuple[float, float], height: float,
           labels: tuple[str, str]) -> tuple[list[str], _Plot]:
    """The frame every line chart shares: title, legend of line swatches, axes with nice ticks."""
    keys, rows = legend([(c.label, line_swatch(c.style)) for c in curves], LEFT, 36, W - LEFT - RIGHT)
    plot = _Plot(W, height + LINE * (rows - 1), 36 + LINE * rows, *xs, *ys)
    pts = [p for c in curves for p in _finite(c)]
    axes = _axes(plot, *labels, _integers(p[0] for p in pts), _integers(p[1] for p in pts))
    return _open(W, plot.height, title) + keys + axes, plot


def lines(title: str, curves: list[Curve], xlabel: str, ylabel: str, xs: tuple[float, float] | None = None) -> str:
    """One polyline per curve, each in its entry's colour and dash, with a legend of line swatches."""
    ys = [y for c in curves for _, y in _finite(c)]
    if not ys:
        return ""
    pad = (max(ys) - min(ys)) * 0.04 or 1.0
    out, plot = _chart(title, curves, xs or x_range(curves), (min(ys) - pad, max(ys) + pad), H, (xlabel, ylabel))
    out += [_polyline(plot, c, "curve") for c in curves]
    return "\n".join(out + ["</svg>"])


def difference(title: str, curves: list[Curve], xs: tuple[float, float], xlabel: str, unit: str) -> str:
    """Signed differences (the curves' ys) around a zero line, every point marked with its value as a
    tooltip; x aligned with the chart above when given the same range."""
    ys = [0.0] + [y for c in curves for _, y in _finite(c)]
    y0, y1 = (min(ys), max(ys)) if min(ys) < max(ys) else (-1.0, 1.0)
    out, plot = _chart(title, curves, xs, (y0, y1), DIFF_H, (xlabel, unit))
    out.append(f'<line x1="{LEFT}" y1="{plot.sy(0.0):.1f}" x2="{W - RIGHT}" y2="{plot.sy(0.0):.1f}" class="zero"/>')
    for c in curves:
        out.append(_polyline(plot, c, "diff"))
        out += [f'<circle class="diffpoint" cx="{plot.sx(x):.1f}" cy="{plot.sy(y):.1f}" r="2.5" '
                f'fill="{color(c.style)}"><title>{escape(c.label)}, {escape(xlabel)} {x:g}: '
                f'{int(y) if y.is_integer() else y:+} {escape(unit)}</title></circle>' for x, y in _finite(c)]
    return "\n".join(out + ["</svg>"])


def shape(name: str, cx: float, cy: float, color: str) -> str:
    """A marker: circle, triangle, cross, diamond, square, or ring (a hollow circle)."""
    paths = {"triangle": f"M{cx:.1f} {cy - 4.5:.1f}l4.5 8h-9z", "diamond": f"M{cx:.1f} {cy - 4.5:.1f}l4.5 4.5"
             f"l-4.5 4.5l-4.5 -4.5z", "square": f"M{cx:.1f} {cy:.1f}m-3.5 -3.5h7v7h-7z"}
    if name in paths:
        return f'<path d="{paths[name]}" fill="{color}"/>'
    if name == "cross":
        return (f'<path d="M{cx:.1f} {cy:.1f}m-3.5 -3.5l7 7m0 -7l-7 7" stroke="{color}" stroke-width="2.2" '
                f'fill="none"/>')
    return (f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="3.2" fill="{"#fff" if name == "ring" else color}" '
            f'stroke="{color}" stroke-width="1.4"/>')


@dataclasses.dataclass(frozen=True)
class Dot:
    value: float | None  # largest error / tolerance; None: not measured, drawn in the "no ulp measure" column
    shape: str
    kind: str  # what the shape means, for the page's readers of the markup (data-kind)
    tip: str


@dataclasses.dataclass(frozen=True)
class DotRow:
    name: str
    dots: list[Dot | None]  # one per entry (None: the entry has nothing to show for the check)


SPREAD = 6  # vertical distance between the dots of two entries on one row: none hides another
PLOT_W, HI = 420, 2  # the log axis ends at 10**HI (100x the tolerance); beyond, the "> 100x" column


@dataclasses.dataclass(frozen=True)
class _DotAxis:
    """Where the columns sit: "0", the log axis from 10**lo to 100, "> 100x", and "not measured"."""

    label_w: float
    lo: int

    @property
    def columns(self) -> dict[str, float]:
        x0 = self.label_w + 50
        return {"0": self.label_w + 22, "> 100x": x0 + PLOT_W + 44, "no ulp measure": x0 + PLOT_W + 124}

    def x(self, dot: Dot) -> float:
        if dot.value is None:
            return self.columns["no ulp measure"]
        if dot.value <= 0:
            return self.columns["0"]
        if dot.value > 10.0 ** HI:
            return self.columns["> 100x"]
        return self.label_w + 50 + (math.log10(dot.value) - self.lo) / (HI - self.lo) * PLOT_W


def _dot_grid(axis: _DotAxis, top: float, bottom: float) -> list[str]:
    """Decade grid, the tolerance line at 1, and the edge columns, labelled above and below."""
    step = max(1, math.ceil((HI - axis.lo) / 6))
    out = []
    labels = [(axis.x(Dot(10.0 ** e, "", "", "")), f"{10.0 ** e:g}") for e in range(HI, axis.lo - 1, -step)]
    for name, x in axis.columns.items():
        half = 14 if name == "0" else 26
        out.append(f'<rect x="{x - half:.1f}" y="{top}" width="{2 * half}" height="{bottom - top}" class="edge"/>')
        labels.append((x, name))
    for x, text in labels:
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" class="grid"/>')
        out += [f'<text x="{x:.1f}" y="{y}" text-anchor="middle" class="tick">{escape(text)}</text>'
                for y in (top - 5, bottom + 14)]
    one = axis.x(Dot(1.0, "", "", ""))
    out.append(f'<line x1="{one:.1f}" y1="{top}" x2="{one:.1f}" y2="{bottom}" class="limit"/>')
    return out


def _dot_rows(axis: _DotAxis, rows: list[DotRow], top: float, pitch: float, entries: int) -> list[str]:
    out = []
    for r, row in enumerate(rows):
        y = top + pitch * r
        out.append(f'<text x="{axis.label_w - 6:.1f}" y="{y + pitch / 2 + 3.5:.1f}" text-anchor="end" class="row">'
                   f'{fit(row.name, axis.label_w - 14, 10)}</text>')
        out += [f'<g class="dot" data-kind="{escape(dot.kind)}" data-entry="{i}"><title>{escape(dot.tip)}'
                f'</title>{shape(dot.shape, axis.x(dot), y + pitch / 2 + (i - (entries - 1) / 2) * SPREAD, color(i))}'
                '</g>' for i, dot in enumerate(row.dots) if dot is not None]
    return out


def error_dots(title: str, rows: list[DotRow], labels: list[str], key: list[tuple[str, str]]) -> str:
    """Per row (a check), one marker per entry at error / tolerance on a log axis, entries offset
    vertically; zeros, values beyond 100x and failures with no measure sit in labelled edge columns.
    `key`: (meaning, shape) of the markers, for the legend."""
    values = [d.value for r in rows for d in r.dots if d and d.value]
    lo = min([-3] + [math.floor(math.log10(v)) for v in values])
    longest = max((text_width(r.name, 10) for r in rows), default=0)
    axis = _DotAxis(min(longest, 64 * 10 * CHAR) + 16, lo)
    width = axis.columns["no ulp measure"] + 64  # the title is fitted to it
    keys, n1 = legend([(label, shape("circle", 10, 0, color(i))) for i, label in
                       enumerate(labels)], 8, 36, width - 16)
    marks, n2 = legend([(meaning, shape(name, 10, 0, "#555")) for meaning, name in key], 8, 36 + LINE * n1,
                       width - 16)
    top = 36 + LINE * (n1 + n2) + 12
    pitch = SPREAD * len(labels) + 8
    bottom = top + pitch * max(len(rows), 1)
    bands = [f'<rect x="0" y="{top + pitch * r:.1f}" width="{width:.0f}" height="{pitch}" class="band"/>'
             for r in range(1, len(rows), 2)]  # every other row shaded: which dots belong to which check
    out = _open(width, bottom + 24, title) + keys + marks + bands + _dot_grid(axis, top, bottom)
    out += _dot_rows(axis, rows, top, pitch, len(labels))
    return "\n".join(out + ["</svg>"])
