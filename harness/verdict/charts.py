"""The verdict page's charts, built from the verdict and the reports it judged.

Curves: the ones that changed first, each with the per-step difference from the baseline in float32
ulps (lines that differ by a few ulps look identical); unchanged ones folded away. Error against
tolerance: every check's largest error / tolerance per entry, with the checks that changed marked
by how they changed (beyond tolerance, exact mismatch, error contract, NaN/inf).
"""

from __future__ import annotations

import enum
import math
import struct

from harness.model.enums import ComparisonKind, Mark, Outcome
from harness.model.report import EXACT, CheckRecord, Report, Series
from harness.model.verdict import Change, Verdict
from harness.verdict import bits, svg

_ERROR_MARKS = (Mark.ERROR_TYPE_CHANGED, Mark.NOW_SILENT)  # besides failed error-contract comparisons
_NOT_RUN_MARKS = (Mark.MISSING, Mark.API_MISSING, Mark.NOT_JUDGED)
_FLOAT32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]

Docs = list[tuple[str, Report]]  # (label, report): the baseline first


class Marker(enum.StrEnum):
    """What a check's dot on the error / tolerance chart says, by how the check fared on the entry."""

    WITHIN = "within tolerance"
    BEYOND = "beyond tolerance"
    EXACT = "exact mismatch"
    ERROR = "error contract changed"
    NONFINITE = "NaN/inf appeared"
    UNMEASURED = "failed or missing, nothing measured"


_SHAPES = {Marker.WITHIN: "circle", Marker.BEYOND: "triangle", Marker.EXACT: "cross", Marker.ERROR: "diamond",
           Marker.NONFINITE: "square", Marker.UNMEASURED: "ring"}


def _same(a: Series, b: Series) -> bool:
    """Equal to the bit: NaN equals NaN, -0.0 differs from 0.0."""
    return [repr(float(v)) for v in a.x + a.y] == [repr(float(v)) for v in b.x + b.y]


def float32_ulps(base: float, other: float) -> int | None:
    """other - base in ulps of float32 (signed); None where either is not a finite float32."""
    if not all(math.isfinite(v) and abs(v) <= _FLOAT32_MAX for v in (base, other)):
        return None
    moved = bits.ulps_between(base, other, "float32")
    return moved if other >= base else -moved


def _series(docs: Docs) -> dict[tuple[str, str], list[tuple[int, str, Series]]]:
    """(check id, series name) -> (entry index, label, series) for every entry that kept it; the project's own
    checks' first (a team reads its own training's curves before the built-in contracts')."""
    found: dict[tuple[str, str], list[tuple[int, str, Series]]] = {}
    own: set[str] = set()
    for i, (label, doc) in enumerate(docs):
        for check in doc.checks:
            own |= {check.id} if check.own else set()
            for name, series in check.series.items():
                found.setdefault((check.id, name), []).append((i, label, series))
    return dict(sorted(found.items(), key=lambda item: item[0][0] not in own))


def _difference(key: tuple[str, str], found: list[tuple[int, str, Series]], xs: tuple[float, float]) -> str:
    """Each entry's series minus the baseline's (the first), at the steps both kept, in float32 ulps."""
    base = dict(zip(found[0][2].x, found[0][2].y))
    moves: dict[tuple, list[tuple[int, str]]] = {}  # entries that moved alike share one line
    for i, label, series in found[1:]:
        points = [(x, float32_ulps(base[x], y)) for x, y in zip(series.x, series.y) if x in base]
        moves.setdefault(tuple((x, float(d)) for x, d in points if d is not None), []).append((i, label))
    curves = [svg.Curve(" = ".join(label for _, label in who), [x for x, _ in pts], [d for _, d in pts], who[0][0])
              for pts, who in moves.items()]
    return svg.difference(f"{key[1]}: entry \u2212 {found[0][1]}, per step", curves, xs, "step", "float32 ulps")


def _changed_chart(key: tuple[str, str], found: list[tuple[int, str, Series]]) -> str:
    curves = [svg.Curve(label, s.x, s.y, i) for i, label, s in found]
    xs = svg.x_range(curves)
    return (f'<div class="pair">{svg.lines(key[0], curves, "step", key[1], xs)}'
            f'{_difference(key, found, xs)}</div>')


def _unchanged_chart(key: tuple[str, str], found: list[tuple[int, str, Series]]) -> str:
    """One line: every entry's is the same to the bit, and the legend names them."""
    i, _, series = found[0]
    label = " = ".join(label for _, label, _ in found) + (" (identical)" if len(found) > 1 else "")
    return svg.lines(key[0], [svg.Curve(label, series.x, series.y, i)], "step", key[1])


def curves(docs: Docs) -> str:
    """Changed curves first (with their difference from the baseline), the unchanged ones folded."""
    found = _series(docs)
    changed = {k: v for k, v in found.items() if any(not _same(v[0][2], s) for _, _, s in v[1:])}
    same = [k for k in found if k not in changed]
    if changed:
        head = (f"<p class='detail'>{len(changed)} of {len(found)} curves differ from the baseline's on some entry. "
                "Below each, every entry's value minus the baseline's at each step, in float32 ulps.</p>")
        body = head + "<div class='charts'>" + "".join(_changed_chart(k, v) for k, v in changed.items()) + "</div>"
    else:
        body = "<p class='detail'>No curve changed: every entry computed the same curves, to the bit.</p>"
    out = f"<h3 id='changed-curves'>Changed curves</h3>{body}"
    if same:
        charts = "".join(_unchanged_chart(k, found[k]) for k in same)
        out += (f"<details id='unchanged-curves'><summary>Unchanged curves ({len(same)}): the same on every entry "
                f"that kept them</summary><div class='charts'>{charts}</div></details>")
    return out


def _used(check: CheckRecord) -> float | None:
    used = [c.tolerance_used for c in check.comparisons if c.tolerance_used is not None]
    return max(used) if used else None


def _marker(check: CheckRecord | None, change: Change | None) -> Marker | None:
    """How the check's dot looks on an entry: what its failure was, if it failed; None: nothing to show."""
    mark = change.mark if change else None
    failed = [c for c in check.comparisons if not c.passed] if check else []
    if mark in _ERROR_MARKS or any(c.kind == ComparisonKind.ERROR_CONTRACT for c in failed):
        return Marker.ERROR
    nonfinite = any(c.max_abs_err is not None and not math.isfinite(c.max_abs_err) for c in failed)
    if nonfinite or (change and change.bits and change.bits.nonfinite_appeared):
        return Marker.NONFINITE
    if any(c.tolerance != EXACT for c in failed):
        return Marker.BEYOND
    if failed:
        return Marker.EXACT
    if mark in _NOT_RUN_MARKS or (check and check.outcome in (Outcome.FAILED, Outcome.ERROR)):
        return Marker.UNMEASURED
    return Marker.WITHIN if check and _used(check) is not None else None


def _tip(label: str, check_id: str, marker: Marker, used: float | None, check: CheckRecord | None,
         change: Change | None) -> str:
    parts = [f"{label}: {check_id}", marker.value]
    if change and change.mark != Mark.UNCHANGED:
        parts.append(f"marked {change.mark.value}")
    if used is not None:
        parts.append(f"largest error {'>= 1e9 (capped)' if used >= 1e9 else f'{used:.3g}'} x the tolerance")
    if change and change.max_abs_err is not None:
        parts.append(f"max abs err {change.max_abs_err:.3g}, max rel err {change.max_rel_err or 0:.3g}")
    failed = next((c.message for c in check.comparisons if not c.passed), "") if check else ""
    return "; ".join(parts + ([failed[:300]] if failed else []))


def _dot(label: str, check_id: str, check: CheckRecord | None, change: Change | None) -> svg.Dot | None:
    marker = _marker(check, change)
    if marker is None:
        return None
    value = None  # not measured against a tolerance: the chart's "no ulp measure" column
    if check and marker == Marker.WITHIN:
        value = _used(check)
    elif check and marker == Marker.BEYOND:  # the failing comparison's (a failed bound has no measure)
        value = max((c.tolerance_used for c in check.comparisons if not c.passed and c.tolerance_used is not None),
                    default=None)
    return svg.Dot(value, _SHAPES[marker], marker.name.lower(), _tip(label, check_id, marker, value, check, change))


def _rows(verdict: Verdict, docs: Docs) -> dict[str, list[svg.DotRow]]:
    """Per family, one row per check with a dot on some entry; rows with a failure first."""
    changes = {e.name: {c.check_id: c for c in e.changes} for e in verdict.entries}
    ids: dict[str, str] = {}  # check id -> its family's group, in the order reports hold them
    taken = set(verdict.baseline.own_families or [])  # a built-in family of an own family's name: its own group

    def group(check: CheckRecord | Change) -> str:
        return f"{check.family} (built-in)" if not check.own and check.family in taken else check.family

    for _, doc in docs:
        ids.update({c.id: group(c) for c in doc.checks if c.id not in ids})
    for entry in changes.values():
        ids.update({i: group(c) for i, c in entry.items() if i not in ids})
    families: dict[str, list[svg.DotRow]] = {}
    for check_id, family in ids.items():
        dots = [_dot(label, check_id, doc.check(check_id), changes.get(label, {}).get(check_id) if i else None)
                for i, (label, doc) in enumerate(docs)]
        if any(dots):
            families.setdefault(family, []).append(svg.DotRow(check_id.split("/", 1)[-1], dots))
    return {f: sorted(rows, key=lambda r: (not _failing(r), r.name)) for f, rows in families.items()}


def _failing(row: svg.DotRow) -> bool:
    return any(d is not None and d.kind != Marker.WITHIN.name.lower() for d in row.dots)


def tolerances(verdict: Verdict, docs: Docs) -> str:
    """Per family, each check's largest error as a fraction of its tolerance, for every entry."""
    labels = [label for label, _ in docs]
    charts = []
    own = set(verdict.baseline.own_families or [])  # the project's own families first, then the built-in ones
    for family, rows in sorted(_rows(verdict, docs).items(), key=lambda item: (item[0] not in own, item[0])):
        failing = sum(map(_failing, rows))
        title = f"{family}: largest error / tolerance per check" + (f" ({failing} failing, listed first)"
                                                                     if failing else "")
        shown = {d.kind for r in rows for d in r.dots if d is not None}
        key = [(m.value, _SHAPES[m]) for m in Marker if m == Marker.WITHIN or m.name.lower() in shown]
        charts.append(svg.error_dots(title, rows, labels, key))
    return "".join(charts) or "<p class='detail'>No check measured an error against a tolerance.</p>"
