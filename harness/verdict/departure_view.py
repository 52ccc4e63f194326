"""The statements the baseline departs from (harness.model.departure): recorded as its behaviour by an accepted
recording, and judged against those values instead of the statement. A reviewer sees them as notes, never as
changes: the departures section lists them, and a changed contract that holds one says so under it."""

from __future__ import annotations

import dataclasses

from harness.model import departure
from harness.model.verdict import Verdict


@dataclasses.dataclass(frozen=True)
class DepartureRow:
    """One statement the baseline departs from: its check, its label, since which stack, by how much."""

    check: str
    statement: str
    stated: str  # what the statement holds the value against ("float64 formula", "value", ...)
    since: str
    size: str

    @property
    def line(self) -> str:
        """The statement and its size (its check and stack are said above it)."""
        return f"{self.statement} departs from its stated {self.stated} ({self.size})"


def rows(verdict: Verdict) -> list[DepartureRow]:
    """Every departure the baseline's checks judged against (those that hold again are changes, not notes)."""
    found = [c.departure for check in verdict.baseline.checks for c in check.comparisons
             if c.departure is not None and not c.departure.holds_again]
    made = [DepartureRow(d.check, d.statement, departure.stated(d),
                         departure.stack_text(d.recorded_on), departure.size_text(d.size)) for d in found]
    return sorted(made, key=lambda r: (r.check, r.since, r.statement))


def under(found_rows: list[DepartureRow], check_ids: list[str]) -> list[str]:
    """The note under a changed contract whose checks the baseline judges against departures (`found_rows`, the
    verdict's rows: each one is in the departures section, with its size)."""
    wanted = set(check_ids)
    found = list(dict.fromkeys(row.statement for row in found_rows if row.check in wanted))
    if not found:
        return []
    return [f"the baseline departs from {len(found)} of its statements (see Departures): " + ", ".join(found)]
