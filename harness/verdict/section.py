"""What a verdict section is: the extension point the terminal text, the PR comment and the HTML page
all iterate (harness.verdict.sections.SECTIONS declares them, in the order every form shows them).

A section computes what it shows once from the judged verdict (`rows`) and says how each form renders
it; a form it has nothing for renders nothing (the baseline's failures are not on the HTML page, the
plots only there). Where the forms place one thing differently (the attribution table), the section
that holds it in each form says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Generic, TypeVar

from harness.model.report import Report
from harness.model.verdict import Verdict

Rows = TypeVar("Rows")


@dataclasses.dataclass(frozen=True)
class Judged:
    """What a rendering is given: the verdict, and the reports it plots (the HTML page's; else empty)."""

    verdict: Verdict
    reports: tuple[Report, ...] = ()


@dataclasses.dataclass(frozen=True)
class Cuts:
    """How much of each long section a PR comment shows (None: all of it): harness.verdict.markdown
    tries ever tighter cuts until the page fits its budget."""

    unchanged: bool = True
    cases: int | None = None
    attribution: int | None = None


def _no_lines(rows: object, *_: object) -> list:
    return []


def _not_on_page(rows: object) -> None:
    return None


@dataclasses.dataclass(frozen=True)
class Section(Generic[Rows]):
    """One part of the verdict: its name, what it shows (computed once per rendering) and its three forms."""

    name: str
    rows: Callable[[Judged], Rows]
    text: Callable[[Rows], list[str]] = _no_lines  # terminal lines
    markdown: Callable[[Rows, Cuts], list[str]] = _no_lines  # PR comment lines, within the cuts
    html: Callable[[Rows], str | None] = _not_on_page  # one line of the HTML page (None: no line)
