"""The baseline's own trouble: why it did not run to the end, and the checks that fail on it (the first
few; all are in the baseline report). Not on the HTML page."""

from __future__ import annotations

import dataclasses
import textwrap

from harness.model.report import CheckRecord
from harness.verdict import views
from harness.verdict.md_cells import esc
from harness.verdict.section import Judged, Section


@dataclasses.dataclass(frozen=True)
class Baseline:
    problem: str | None
    title: str
    failures: list[CheckRecord]  # those shown
    more: int  # those left out


def _rows(judged: Judged) -> Baseline:
    shown, more = views.shown_baseline_failures(judged.verdict)
    return Baseline(judged.verdict.baseline.problem, views.baseline_failures_title(judged.verdict), shown, more)


def _text(found: Baseline) -> list[str]:
    out = [f"\n  baseline: {found.problem}"] if found.problem else []
    out += [f"\n  {found.title}:"] if found.failures else []
    for check in found.failures:
        out.append(f"\n  baseline {check.outcome}: {check.id}\n" + textwrap.indent(check.message, "    "))
    return out + ([f"\n  ... and {found.more} more baseline failures (all in the baseline report)"]
                  if found.more else [])


def _markdown(found: Baseline, _cuts: object) -> list[str]:
    out = ["", f"**baseline**: {esc(found.problem[:800])}"] if found.problem else []
    if found.failures:
        out += ["", f"**{found.title}:**", ""]
        out += [f"- `{c.id}`: {esc(c.message[:400])}" for c in found.failures]
        out += [f"- … {found.more} more (all in the baseline report)"] if found.more else []
    return out


SECTION = Section("baseline", _rows, _text, _markdown)
