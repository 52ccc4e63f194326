"""What an upgrade runs after its baseline and candidate, decided from those two reports alone: the
baseline again on the candidate's falsifying examples of properties that fail there only (the replay),
the baseline on the candidate's checkpoints (the rollback, harness.stack.entry_side.rollback), and the
single-package entries on just the checks that changed (the attribution), only when a check changed,
each followed by the baseline on its own checkpoints. `nox -s upgrade` runs them itself, in waves on its
free cores, the rollbacks of every writer in one baseline process (FollowUps.waves); CI runs each
as a job of its own (`nox -s followups` prints them as a matrix); `judge DIR` decides again to know
which reports the verdict needs. One decision, so the three never drift.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.errors import HarnessError
from harness.model.report import now, unresolvable
from harness.run_options import RunOptions
from harness.stack.entry_side import entry as stack_entry
from harness.stack.pins import matrix
from harness.stack.entry_side import rollback as rollback_runs
from harness.stack.run.entry_runs import Run
# The files the follow-up sessions read are named with every file of a run, in run_directory.
from harness.stack.run.run_directory import ATTRIBUTION_SELECTION, EXAMPLES, REPLAY, REPLAY_SELECTION, RunDirectory
from harness.verdict import compare, own



@dataclasses.dataclass(frozen=True)
class EntryRun:
    """One run of an entry's session (a row of a CI matrix): the entry, the report it writes, and the
    files (in the reports directory) of the checks it runs, the examples it replays and the checkpoints
    it restores (None: all, none, none); `then`: the run that reads this one's checkpoints, in the same job."""

    entry: str
    report: str
    only: str | None = None
    replay: str | None = None
    rollback: str | None = None
    then: EntryRun | None = None

    def row(self, directory: Path) -> dict[str, str]:
        """The matrix row: its entry, its report's name and its job file in `directory` (what its session is
        told: HARNESS_JOB); the `then` run's as then_entry, then_report, then_job ("" for none)."""
        row = {"entry": self.entry, "report": self.report, "job": str(RunDirectory.at(directory).job(self.report))}
        after = self.then.row(directory) if self.then is not None else dict.fromkeys(row, "")
        return row | {f"then_{k}": v for k, v in after.items() if not k.startswith("then_")}

    def told(self, directory: Path, run_id: str | None, seed: int | None) -> RunOptions:
        """What its session is told in its job: the run's id and seed, its report's name, and its files made
        paths in `directory` (None, none: all checks, no examples, no checkpoints)."""
        return RunOptions(run_id=run_id, seed=seed, reports_dir=directory, report_name=self.report,
                          only=directory / self.only if self.only else None,
                          replay=directory / self.replay if self.replay else None,
                          rollback_from=(directory / self.rollback,) if self.rollback else ())


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
    rollback: tuple[str, ...] = ()  # the candidate's rollback checks, which the baseline runs on its checkpoints
    unjudgeable: int = 0  # checks not unchanged on the candidate that the baseline itself cannot judge

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

    def runs(self, base: matrix.Entry, candidate: matrix.Entry) -> list[EntryRun]:
        """The sessions to run: the replay and the rollback of the candidate's checkpoints (as the baseline),
        then the attribution entries, each followed by the baseline's rollback of its own checkpoints (so a
        rollback check that changes is blamed on the bump that makes it change)."""
        replay = [EntryRun(base.name, REPLAY, REPLAY_SELECTION, EXAMPLES)] if self.examples else []
        rolled = [self._rollback_run(base, candidate.name)] if self.rollback else []
        return replay + rolled + [EntryRun(e.name, e.name, ATTRIBUTION_SELECTION,
                                           then=self._rollback_run(base, e.name) if self.rollback else None)
                                  for e in self.attribution]

    def waves(self, base: matrix.Entry, candidate: matrix.Entry, where: RunDirectory | Path) -> list[list[Run]]:
        """What `nox -s upgrade` runs, in waves: a wave's sessions `jobs` at a time, each as soon as a slot is
        free, a wave once the one before it has ended. First the replay and the attribution entries (none
        needs another), then one baseline process restoring every writer's checkpoints: the candidate's and
        each attribution entry's, a report each (with nothing attributed, the candidate's rollback runs
        beside the replay). Each baseline process pays Python's, JAX's and the suite's start again; on few
        cores fewer processes finish sooner. CI keeps one job per row (runs())."""
        run = RunDirectory.at(where)
        replay = [Run(base, run.replay_selection, run.examples)] if self.examples else []
        attributing = [Run(e, run.attribution_selection) for e in self.attribution]
        writers = list(self.rollbacks(candidate))
        rolled = [Run(base, run.rollback_selection,
                      rollback=tuple(run.checkpoints_of(w) for w in writers))] if writers else []
        waves = [replay + attributing, rolled] if attributing else [replay + rolled]
        return [wave for wave in waves if wave]

    @staticmethod
    def _rollback_run(base: matrix.Entry, writer: str) -> EntryRun:
        return EntryRun(base.name, rollback_runs.report_name(writer), rollback_runs.SELECTION,
                        rollback=rollback_runs.folder_name(writer))

    def rollbacks(self, candidate: matrix.Entry) -> dict[str, str]:
        """Each report whose rollback checks the baseline answers -> the report of that rollback run."""
        writers = [candidate.name, *(e.name for e in self.attribution)] if self.rollback else []
        return {w: rollback_runs.report_name(w) for w in writers}

    def reports(self) -> list[str]:
        """The attribution's report names, in the plan's order (the replay's is REPLAY)."""
        return [e.name for e in self.attributed]

    def selection(self) -> list[str]:
        """What the attribution entries run: the changed checks, and the rollback checks (whether those
        change is known only once the baseline has read the candidate's checkpoints)."""
        return [*self.changed, *(i for i in self.rollback if i not in self.changed)]

    def replay_note(self) -> str:
        return (f"{len(self.examples)} properties fail on the candidate only; replaying its falsifying examples "
                "on the baseline")

    def rollback_note(self) -> str:
        return (f"the baseline restores the candidate's checkpoints ({len(self.rollback)} rollback checks)"
                + ("; and each attribution entry's" if self.attributes else ""))

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
        if self.unjudgeable:
            return (f"the only checks not unchanged on the candidate ({self.unjudgeable}) cannot be judged on the "
                    "baseline itself; the single-package entries are not needed")
        return "no check changed on the candidate; the single-package entries are not needed"


def decide(where: RunDirectory | Path, entries: list[matrix.Entry]) -> FollowUps:
    """The follow-ups of the plan `entries` from the baseline's and the candidate's reports in the run's
    directory (their comparison kept there for the verdict)."""
    run = RunDirectory.at(where)
    try:
        base, candidate = (run.reports(e.name) for e in entries[:2])
    except HarnessError:
        return FollowUps(judged=False)
    if not (base.status.ran_to_end and candidate.status.ran_to_end):
        return FollowUps(judged=False)
    judged = run.loaded.compared(base, candidate)
    blobs = {i: candidate.check(i).reproduce_failure for i in compare.property_regressions(judged)}
    singles = entries[2:]
    # A check the baseline itself cannot judge (a golden value never recorded) is not judged on every
    # entry: attributing it would only say so again.
    moved = compare.changed_check_ids(judged)
    changed = [i for i in moved if (b := base.check(i)) is None or not own.unjudgeable(b)] if singles else []
    return FollowUps(
        judged=True, examples={i: blob for i, blob in blobs.items() if blob}, changed=tuple(changed),
        changed_text=compare.changed_text(judged) if changed else "",
        attributed=tuple(singles) if changed else (), rollback=rollback_runs.checks(candidate),
        unjudgeable=len(moved) - len(changed) if singles else 0)


def write(follow: FollowUps, where: RunDirectory | Path, run_id: str | None) -> None:
    """The files the follow-up sessions read, and the reports of attribution entries that cannot run (a
    partial attribution, said in the verdict; never a reason not to judge), carrying the run's id."""
    run = RunDirectory.at(where)
    if follow.examples:
        run.examples.write_text(json.dumps(follow.examples, indent=1) + "\n")
        run.replay_selection.write_text("\n".join(follow.examples) + "\n")
    if follow.rollback:
        run.rollback_selection.write_text("\n".join(follow.rollback) + "\n")
    if follow.attributes:
        run.attribution_selection.write_text("\n".join(follow.selection()) + "\n")
    for entry in follow.unbuilt:
        report = unresolvable(stack_entry.entry_info(entry), entry.problem, now())
        run.write(entry.name, dataclasses.replace(report, run_id=run_id))
