"""The same pins judged on two platforms: which contract changes only one of them shows, and how far the chip's
baseline values are from the CPU's (its own drift, informational). Read from the records an upgrade keeps per
platform and pins (harness.model.platform_marks); a verdict on an accelerator with no CPU record says how to
get one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness import platforms
from harness.model import platform_marks
from harness.model.enums import Outcome
from harness.model.platform_marks import PlatformMarks
from harness.model.report import Report
from harness.model.verdict import Verdict
from harness.verdict import bits, where


@dataclasses.dataclass(frozen=True)
class Contrast:
    """This verdict's platform against another's, for the same pins."""

    here: str  # "tpu (1 TPU v5 lite)"
    there: str  # "cpu (1 cpu)", judged when
    only_here: list[tuple[str, str]]  # (check id, mark) changed here, not there
    only_there: list[tuple[str, str, str]]  # (check id, mark, why not here: "unchanged" or "not on this platform")
    on_both: int  # contract changes both show
    drift: str | None  # the baseline's values here against there: "N of M values in K checks differ (max X ulp)"


def marks_of(verdict: Verdict, candidate: Report) -> PlatformMarks | None:
    """This verdict's record of the pair (`candidate`: its report), or None when it has no candidate judged to
    its end."""
    if not verdict.entries or not verdict.entries[0].status.ran_to_end:
        return None
    base = verdict.baseline
    jax = base.environment.jax
    changed = {c.check_id: str(c.mark) for c in verdict.entries[0].contract_changes}
    refused = sorted(c.id for c in base.checks
                     if c.outcome == Outcome.SKIPPED and platforms.said_not_here(c.message))
    return PlatformMarks(jax.backend or "?", where.device(jax), platform_marks.same_pins(base, candidate),
                         candidate.finished_at or "", changed, refused)


def _drift(base_here: Report, base_there: Report | None) -> str | None:
    if base_there is None:
        return None
    theirs = {c.id: c for c in base_there.checks}
    moved = [m for c in base_here.checks if c.id in theirs and (m := bits.moved(theirs[c.id], c)) is not None]
    if not moved:
        return "none: every value kept exactly is the same bit for bit"
    values, compared = sum(m.values for m in moved), sum(m.compared for m in moved)
    worst = max(moved, key=lambda m: m.max_ulps or 0)
    return (f"{values} of {compared} values in {len(moved)} checks differ"
            + (f" (max {worst.max_ulps} ulp: {worst.largest})" if worst.max_ulps else ""))


def contrast(here: PlatformMarks, there: PlatformMarks, base_here: Report, base_there: Report | None) -> Contrast:
    only_here = sorted((i, m) for i, m in here.changed.items() if i not in there.changed)
    only_there = sorted((i, m, platforms.NOT_HERE if i in here.not_here else "unchanged")
                        for i, m in there.changed.items() if i not in here.changed)
    return Contrast(f"{here.platform} ({here.device})", f"{there.platform} ({there.device}), judged {there.judged_at}",
                    only_here, only_there, len(here.changed.keys() & there.changed.keys()),
                    _drift(base_here, base_there))


def applied(verdict: Verdict, folder: Path, candidate: Report, baseline_file: Path) -> Verdict:
    """Keep this verdict's record for its pins (with `baseline_file`, the baseline's report as the run wrote it) and
    set its contrasts with the other platforms' (none: unchanged)."""
    marks = marks_of(verdict, candidate)
    if marks is None:
        return verdict
    try:
        platform_marks.write(folder, marks, baseline_file)
    except OSError:
        pass  # the record only informs a later verdict on another platform
    found = [contrast(marks, other, verdict.baseline, platform_marks.baseline_of(folder, other))
             for other in platform_marks.others(folder, marks.pins, marks.platform)]
    return dataclasses.replace(verdict, across_platforms=found)
