"""The PR comment's "Next:" line for a team's project: the one command the pull request's state asks for (record
your code's change, give re-recorded values a reason, accept a bump not yet accepted, with what merging without it
leaves), or that there is nothing to do. A verdict that could not judge has none: its headline names the fix. This
checkout's comment has none either (its accept is `nox -s accept`, which moves the matrix)."""

from __future__ import annotations

import enum

from harness.model.report import STACK_VERSION_KEYS
from harness.model.verdict import Verdict
from harness.verdict.md_cells import esc
from harness.verdict.rerecorded import FAILED_PREFIX
from harness.verdict.section import Judged, Section

RECORD = 'upgrade-harness golden --accept-changes --reason "..."'
ACCEPT = 'upgrade-harness upgrade && upgrade-harness accept --reason "..."'


class State(enum.Enum):
    """What the pull request is waiting for."""

    CODE_CHANGED = "code"  # the team's own checks fail on the baseline: its code moved them since recording
    NO_REASON = "reason"  # the check fails only for golden values re-recorded without a reason
    BUMP = "bump"  # a bump not yet accepted: `accept` adopts it (re-locks, records the golden values on it)
    NOTHING = "nothing"  # green


def _bumped(verdict: Verdict) -> bool:
    """Whether the candidate's stack is another than the baseline's, and the team's golden values are not yet
    recorded on it (as `accept` records them)."""
    base = verdict.baseline.environment.versions
    on = {k: verdict.entries[0].versions.get(k) for k in STACK_VERSION_KEYS}
    if all(on[k] == base.get(k) for k in STACK_VERSION_KEYS):
        return False
    recorded = [(verdict.baseline.golden_stacks or {}).get(f.name) for f in verdict.own_families]
    return not all(stack == on for stack in recorded)


def state(verdict: Verdict) -> State | None:
    """The pull request's state; None where no command applies (could not judge, no contracts of the team's own)."""
    if not verdict.own_families or not verdict.entries or verdict.exit_status not in (0, 1):
        return None
    if any(f.failing_on_baseline for f in verdict.own_families):
        return State.CODE_CHANGED
    if verdict.headline.startswith(FAILED_PREFIX):
        return State.NO_REASON
    if _bumped(verdict):
        return State.BUMP
    return State.NOTHING if verdict.exit_status == 0 else None


def line(verdict: Verdict) -> str | None:
    """The "Next:" line for the verdict's state."""
    found = state(verdict)
    if found is None:
        return None
    if found == State.NOTHING:
        return "Next: nothing to do."
    if found == State.CODE_CHANGED:
        return (f"Next: your checks failing on the baseline above moved with your code; if that is intended, "
                f"`{RECORD}` records their values on this branch: commit the golden files it writes.")
    if found == State.NO_REASON:
        return (f"Next: give the re-recorded values a reason: `{RECORD}` on this branch (on the same values it writes "
                'the reason alone), commit the golden files and push; or set `re-recorded = "report"`.')
    changed = sum(len(f.changed) for f in verdict.own_families)
    if changed:
        stale = (f" Merged without it, your golden values stay those of the old stack: the {changed} of your checks "
                 "that changed here then fail on the baseline of every later pull-request check (exit 1) until "
                 "recorded again.")
    elif verdict.exit_status == 0:
        stale = (" Merged without it, the check stays green, but your golden values stay recorded on the old stack: "
                 "later runs judge them as on another stack than the recording's (their numerical noise allowed "
                 "besides their golden ulps, where it was measured).")
    else:
        stale = ""
    return (f"Next: to adopt this bump, `{ACCEPT}` on this branch (it re-locks the baseline and records your golden "
            f"values on the candidate's stack), then commit the lock and golden files and push.{stale}")


def _markdown(found: str | None, _cuts: object) -> list[str]:
    return [f"**{esc(found)}**", ""] if found else []


SECTION = Section("next", lambda judged: line(judged.verdict), markdown=_markdown)
