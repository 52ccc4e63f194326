"""golden/CHANGELOG.md: why the golden values changed. One entry per `nox -s accept`, appended at the
end; earlier entries are never rewritten (the file is only ever opened for appending).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from harness.model.verdict import Change
from harness.stack.commands.golden_departures import DepartureChanges, dropped_text, recorded_text
from harness.stack.pins.matrix import PACKAGES, Pins

HEADER = """# Golden values changelog

Each entry is one `nox -s accept`: the baseline moved to a judged candidate's versions and the golden
values were recorded again from it. Newest last; earlier entries are never rewritten.
"""
DETAIL_CHARS = 200  # a change's detail is cut to this length: the full text is in the upgrade report


@dataclasses.dataclass(frozen=True)
class Accepted:
    """What one acceptance did, as the changelog tells it."""

    when: dt.datetime
    before: Pins  # the matrix before: its python and [baseline] are the old baseline
    after: Pins
    headline: str  # the verdict's
    bits_line: str | None
    changes: list[Change]  # the candidate's changes against the old baseline (unchanged ones left out)
    reason: str | None
    golden_stat: str  # `git diff --stat -- golden/` after recording
    # Statements the new baseline breaks, recorded as its behaviour; and departures dropped (they hold again).
    departures: DepartureChanges = DepartureChanges()


def stack_text(pins: Pins) -> str:
    return ", ".join([f"python {pins.python}", *(f"{pkg} {pins.baseline[pkg]}" for pkg in PACKAGES)])


def _said(change) -> str:
    """A change in the verdict's user terms (input, before → after, size), else its raw detail."""
    if change.before or change.after:
        parts = [change.input, f"{change.before} → {change.after}", change.size]
        return short("; ".join(p for p in parts if p))
    return short(change.detail) if change.detail.strip() else ""


def moves(before: Pins, after: Pins) -> str:
    """What moved, e.g. 'jax 0.11.2 → 0.12.0.1, optax 0.2.6 → 0.2.8'."""
    pairs = [("python", before.python, after.python)]
    pairs += [(pkg, before.baseline[pkg], after.baseline[pkg]) for pkg in PACKAGES]
    moved = [f"{name} {old} → {new}" for name, old, new in pairs if old != new]
    return ", ".join(moved) or "no version moved"


def short(text: str, limit: int = DETAIL_CHARS) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def entry_text(accepted: Accepted) -> str:
    """The Markdown of one changelog entry."""
    changes = sorted(accepted.changes, key=lambda c: (c.mark.rank, c.check_id))
    lines = [
        f"## {accepted.when.astimezone(dt.timezone.utc):%Y-%m-%d %H:%M} UTC: {moves(accepted.before, accepted.after)}",
        "",
        f"- From: {stack_text(accepted.before)}",
        f"- To: {stack_text(accepted.after)}",
        f"- Verdict: {accepted.headline}",
    ]
    if accepted.bits_line:
        lines.append(f"- Bits: {accepted.bits_line}")
    lines.append(f"- Reason: {short(accepted.reason, 1000) if accepted.reason else '(none given)'}")
    lines.append(f"- Accepted changes ({len(changes)}):" if changes else "- Accepted changes: none")
    lines += [f"  - `{c.check_id}`: {c.mark.value}: {_said(c)}".rstrip(": ") for c in changes]
    lines += departure_lines(accepted.departures)
    stat = accepted.golden_stat.strip("\n")
    lines += ["- Golden files changed:", "", "  ```", *(f"  {ln}" for ln in stat.splitlines()), "  ```"] \
        if stat else ["- Golden files changed: none"]
    return "\n".join(lines) + "\n"


def departure_lines(found: DepartureChanges) -> list[str]:
    """The entry's lists of departures, when the recording made or dropped any."""
    out = [f"- Departures recorded ({len(found.recorded)}): statements the new baseline breaks, recorded as its "
           "behaviour and judged against it from now on"] if found.recorded else []
    out += [f"  - {recorded_text(d)}" for d in found.recorded]
    out += [f"- Departures dropped ({len(found.dropped)}): statements that hold again"] if found.dropped else []
    return out + [f"  - {dropped_text(d)}" for d in found.dropped]


def append(path: Path, entry: str) -> None:
    """Add an entry at the end, creating the file with its header first; never rewrites what is there."""
    existing = path.read_text() if path.exists() else None
    prefix = HEADER if existing is None else ("" if existing.endswith("\n") else "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(f"{prefix}\n{entry}")
