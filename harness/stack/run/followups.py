"""What an upgrade runs after its baseline and candidate, decided from those two reports alone: the
baseline again on the candidate's falsifying examples of properties that fail there only (the replay),
and the single-package entries on just the checks that changed (the attribution), only when a check
changed. `nox -s upgrade` runs them itself; CI runs each as a job of its own (`nox -s followups` prints
them as a matrix); `judge DIR` decides again to know which reports the verdict needs. One decision, so
the three never drift.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.errors import HarnessError
from harness.model import report_io
from harness.model.enums import Status
from harness.model.report import now, unresolvable
from harness.stack.environments import entry as stack_entry
from harness.stack.pins import matrix
from harness.stack.run.entry_runs import REPLAY
from harness.verdict import compare

EXAMPLES = "replay-examples.json"  # check id -> the @reproduce_failure arguments the replay runs
REPLAY_SELECTION = "replay-selection.txt"
ATTRIBUTION_SELECTION = "attribution-selection.txt"


@dataclasses.dataclass(frozen=True)
class EntryRun:
    """One run of an entry's session (a row of a CI matrix): the entry, the report it writes, and the
    files (in the reports directory) of the checks it runs and the examples it replays; None: all, none."""

    entry: str
    report: str
    only: str | None = None
    replay: str | None = None

    def row(self, directory: Path) -> dict[str, str]:
        """The matrix row: file names made paths in `directory`, "" for none (what the sessions read as unset)."""
        return {"entry": self.entry, "report": self.report, "only": str(directory / self.only) if self.only else "",
                "replay": str(directory / self.replay) if self.replay else ""}


def first_runs(entries: list[matrix.Entry]) -> list[EntryRun]:
    """Baseline and candidate, every check."""
    return [EntryRun(e.name, e.name) for e in entries[:2]]


@dataclasses.dataclass(frozen=True)
class FollowUps:
    """What follows baseline and candidate. `judged` False: one of them did not complete, nothing follows."""

    judged: bool
    examples: dict[str, str] = dataclasses.field(default_factory=dict)  # check id -> its falsifying example
    changed: tuple[str, ...] = ()  # the changed checks the attribution re-runs (none: no attribution)
    changed_text: str = ""  # them, counted as the verdict's headline counts them
    attributed: tuple[matrix.Entry, ...] = ()  # the plan's single-package entries, when a check changed

    @property
    def attributes(self) -> bool:
        return bool(self.attributed)

    @property
    def attribution(self) -> list[matrix.Entry]:
        """The single-package entries that run."""
        return [e for e in self.attributed if not e.problem]

    @property
    def unbuilt(self) -> list[matrix.Entry]:
        """Those the plan could not resolve: reported unresolvable, never run."""
        return [e for e in self.attributed if e.problem]

    def runs(self, base: matrix.Entry) -> list[EntryRun]:
        """The sessions to run: the replay (as the baseline), then the attribution entries."""
        replay = [EntryRun(base.name, REPLAY, REPLAY_SELECTION, EXAMPLES)] if self.examples else []
        return replay + [EntryRun(e.name, e.name, ATTRIBUTION_SELECTION) for e in self.attribution]

    def reports(self) -> list[str]:
        """The attribution's report names, in the plan's order (the replay's is REPLAY)."""
        return [e.name for e in self.attributed]

    def replay_note(self) -> str:
        return (f"{len(self.examples)} properties fail on the candidate only; replaying its falsifying examples "
                "on the baseline")

    def attribution_note(self) -> str:
        # Counted as the headline counts them, the bits-only moves apart: the attribution re-runs both.
        names = ", ".join(e.name for e in self.attributed)
        return f"{self.changed_text} on the candidate; attributing them with {names}"

    def skipped_note(self, singles: list[matrix.Entry]) -> str | None:
        """Why the single-package entries do not run, when the plan has some."""
        if not singles or self.attributes:
            return None
        if not self.judged:  # the verdict says why; nothing can be attributed
            return "the baseline or the candidate did not complete; the single-package entries are not run"
        return "no check changed on the candidate; the single-package entries are not needed"


def decide(directory: Path, entries: list[matrix.Entry]) -> FollowUps:
    """The follow-ups of the plan `entries` from the baseline's and the candidate's reports in `directory`."""
    try:
        base, candidate = (report_io.load(directory / f"{e.name}.json") for e in entries[:2])
    except HarnessError:
        return FollowUps(judged=False)
    if base.status != Status.COMPLETE or candidate.status != Status.COMPLETE:
        return FollowUps(judged=False)
    judged = compare.compare_entry(base, candidate)
    blobs = {i: candidate.check(i).reproduce_failure for i in compare.property_regressions(judged)}
    singles = entries[2:]
    changed = compare.changed_check_ids(judged) if singles else []
    return FollowUps(
        judged=True, examples={i: blob for i, blob in blobs.items() if blob}, changed=tuple(changed),
        changed_text=compare.changed_text(judged) if changed else "",
        attributed=tuple(singles) if changed else ())


def write(follow: FollowUps, directory: Path, run_id: str | None) -> None:
    """The files the follow-up sessions read, and the reports of attribution entries that cannot run (a
    partial attribution, said in the verdict; never a reason not to judge), carrying the run's id."""
    if follow.examples:
        (directory / EXAMPLES).write_text(json.dumps(follow.examples, indent=1) + "\n")
        (directory / REPLAY_SELECTION).write_text("\n".join(follow.examples) + "\n")
    if follow.attributes:
        (directory / ATTRIBUTION_SELECTION).write_text("\n".join(follow.changed) + "\n")
    for entry in follow.unbuilt:
        report = unresolvable(stack_entry.entry_info(entry), entry.problem, now())
        report_io.write(directory / f"{entry.name}.json", dataclasses.replace(report, run_id=run_id))
