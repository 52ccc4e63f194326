"""The golden values a branch changed against its base branch's: what a reviewer of the pull-request check reads
beside the verdict (a code change whose values were re-recorded and committed is otherwise judged green against
its own new values), and what the team's table decides about them (`re-recorded`: fail until recorded with a
reason, or report). Computed on the host from git when the baseline's pins come from a revision
(harness.stack.run.golden_changes), stored as `golden-changes.json` beside the run's plan, shown by the verdict.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.errors import HarnessError
from harness.model import departure
from harness.model.codec import from_json, to_json

GOLDEN_CHANGES_FILE = "golden-changes.json"


class Policy(enum.StrEnum):
    """The table's `re-recorded`: what a golden value re-recorded on a branch does to the check's exit status."""

    FAIL = "fail"  # exit 1 until every re-recorded value was written with a reason (strict; the default)
    REPORT = "report"  # listed, the exit status left to the contracts


class ValueChangeKind(enum.StrEnum):
    CHANGED = "changed"  # re-recorded: the key is in both, with another value
    REMOVED = "removed"  # in the base branch's file only (its contract or key gone, or a departure dropped)
    ADDED = "added"  # in the branch's file only (a new contract's value: nothing it replaces)


@dataclasses.dataclass(frozen=True)
class Writer:
    """What the branch's golden file says wrote it (its provenance's `accepted`)."""

    command: str | None  # "accept", "golden --accept-changes"; None: the file does not say
    reason: str | None  # the reason given to it (`--reason`); None: none given
    by_hand: bool = False  # edited, not recorded: its values differ from those its last recording wrote

    @property
    def said(self) -> str:
        if self.by_hand:
            return "edited by hand (its values are not those its last recording wrote)"
        who = f"`{self.command}`" if self.command else "a recording that names no command"
        return f"{who}, reason: {self.reason}" if self.reason else f"{who}, no reason given"


@dataclasses.dataclass(frozen=True)
class ValueChange:
    """One golden value that differs from the base branch's, in numbers a reviewer can weigh."""

    family: str
    key: str
    file: str  # the golden file, relative to the project's root
    kind: ValueChangeKind
    before: str | None  # the base branch's value as text, numbers whole (None: none there)
    after: str | None  # the branch's
    dtype: str | None  # a numeric value's dtype (None: a fact, an error type, a departure)
    differing: int  # elements that differ (1 for a fact)
    size: int  # elements in the value
    max_ulps: float | None  # the largest move in ulps of `dtype` at the base branch's value
    max_rel: float | None  # the largest move relative to the base branch's value (None: it was 0)
    writer: Writer
    check: str | None = None  # the check whose comparison reads the key (from the run's reports)

    non_finite: bool = False  # a NaN or infinity appeared or vanished (no ulps say how far)

    @property
    def needs_reason(self) -> bool:
        """Written without a reason, a value a check would otherwise pass on: one the branch replaced, or a departure
        it recorded (a statement now kept as broken). A removed value needs none (a check that still reads it fails,
        its golden value missing), nor a new contract's."""
        departs = self.kind == ValueChangeKind.ADDED and self.key.startswith(departure.KEY)
        return (self.kind == ValueChangeKind.CHANGED or departs) and self.writer.reason is None

    @property
    def size_text(self) -> str:
        parts = [f"{self.max_ulps:.3g} ulp"] if self.max_ulps is not None else []
        parts += ["nan/inf where a number was, or the reverse"] if self.non_finite else []
        parts += [f"{self.max_rel:.2g} relative"] if self.max_rel is not None else []
        return ", ".join(parts + [f"{self.differing} of {self.size} elements"]) if parts else ""


@dataclasses.dataclass(frozen=True)
class GoldenChanges:
    """Every golden value of the project's that the branch's golden directory holds otherwise than `base`'s."""

    base: str  # the revision compared with, as the pins' revision names it (origin/main)
    golden: str  # the golden directory, relative to the project's root
    policy: Policy
    values: tuple[ValueChange, ...] = ()

    def of_kind(self, kind: ValueChangeKind) -> list[ValueChange]:
        return [v for v in self.values if v.kind == kind]

    @property
    def unexplained(self) -> list[ValueChange]:
        return [v for v in self.values if v.needs_reason]

    @property
    def fails(self) -> bool:
        """Under `re-recorded = "fail"`, a value that needs a reason and has none fails the check."""
        return self.policy == Policy.FAIL and bool(self.unexplained)

    @property
    def line(self) -> str | None:
        """The headline's count; None when the branch changed no golden value."""
        if not self.values:
            return None
        counts = [f"{len(found)} {kind}" for kind in ValueChangeKind if (found := self.of_kind(kind))]
        line = f"Golden values against {self.base}'s: {', '.join(counts)}"
        unexplained = self.unexplained
        if not unexplained:
            return line + " (each recorded with a reason)"
        line += f"; {len(unexplained)} without a reason"
        if self.fails:
            return line + (" — this fails the check (re-recorded = \"fail\"): record them again with "
                           "`upgrade-harness golden --accept-changes --reason \"...\"`, or set re-recorded = \"report\"")
        return line + " (re-recorded = \"report\": listed, not failed)"


def write(path: Path, changes: GoldenChanges) -> None:
    atomic_write_text(path, json.dumps(to_json(changes), indent=1) + "\n")


def read(path: str | Path) -> GoldenChanges:
    """The golden changes at `path`; HarnessError naming the fix."""
    try:
        return from_json(GoldenChanges, json.loads(Path(path).read_text()))
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise HarnessError(f"the golden changes {path} are unreadable ({exc}); run the plan again to compute them "
                           "anew.") from None
