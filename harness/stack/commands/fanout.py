"""An upgrade's steps one by one, so that CI runs each entry as a job of its own (a GitHub Actions matrix)
and the wall time is the slowest entry plus the verdict, not their sum:

  nox -s plan -- [upgrade's options]   resolve the plan once into the reports directory; the baseline and
                                       the candidate as a matrix, with the run's id and Hypothesis seed
  nox -s <entry>                       each row: told HARNESS_JOB, the row's job file, which the plan
                                       (or followups) step wrote into the reports directory (jobs/): its
                                       entry, the run's id and seed, its report name, selection, examples
                                       and checkpoints (harness.model.entry_job); then, in the same job, the
                                       row's then_* run (the baseline restoring the checkpoints this one
                                       wrote), if any
  nox -s followups -- DIR              after baseline and candidate: the replay, the baseline on the
                                       candidate's checkpoints and the attribution entries as a matrix,
                                       empty when there are none (harness.stack.run.followups);
                                       and the run's API diff, DIR/api-diff.json, for the judge
                                       (harness.stack.run.api_diff)
  nox -s judge -- DIR                  the verdict on the run's reports (harness.stack.run.run_verdict)

`nox -s upgrade` runs the same steps in one process (the same functions), so the two never drift. Each
step prints its matrix as the last line of its output and, under GitHub Actions, writes it to
$GITHUB_OUTPUT (matrix, count, run_id, seed).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from harness import run_options
from harness.errors import HarnessError
from harness.model import entry_job, report_io
from harness.stack.commands import frame, options, upgrade
from harness.stack.entry_side import entry_jobs
from harness.stack.pins import matrix
from harness.stack.run import api_diff as api_for_run, followups, run_plan, run_verdict
from harness.stack.run.followups import EntryRun
from harness.stack.run.run_directory import RunDirectory
from harness.stack.ci.github_jobs import github_output
from harness.stack.workspace import Workspace


DIRECTORY = options.Usage(own=(options.own("directory", type=Path, metavar="DIR"),),
                          description="DIR: one run's reports and its upgrade-plan.json")


def _publish(runs: list[EntryRun], entries: list[matrix.Entry], directory: Path, run_id: str | None,
             seed: int | None) -> None:
    """The matrix of entry runs, each row's job file (and its then_* run's) written into `directory`: printed
    last (JSON on one line), and to $GITHUB_OUTPUT under Actions."""
    directory, by_name = directory.absolute(), {e.name: e for e in entries}
    for run in [r for first in runs for r in (first, first.then) if r is not None]:
        entry_job.write(RunDirectory.at(directory).job(run.report),
                        entry_jobs.job_of(by_name[run.entry], run.told(directory, run_id, seed)))
    table = json.dumps({"include": [r.row(directory) for r in runs]}, separators=(",", ":"))
    print(table)
    github_output(matrix=table, count=str(len(runs)), run_id=run_id or "", seed="" if seed is None else str(seed))


def plan(ws: Workspace, argv, invoked_from: str | None) -> int:
    """Resolve the plan once (`upgrade`'s options), write it, print the baseline and candidate as a matrix."""
    return frame.execute(frame.Command("plan", lambda typed: upgrade.parse_options(ws, typed, "plan"),
                                       lambda request: _plan(ws, request, invoked_from)), argv)


def _plan(ws: Workspace, request: upgrade.Request, invoked_from: str | None) -> int:
    ws, prepared = run_plan.prepare(ws, request.options, invoked_from)
    if ws.options.bisect:
        raise HarnessError("--bisect probes releases one after another with `nox -s upgrade -- --bisect`; "
                           "the steps one by one do not bisect: drop it here.")
    entries = run_plan.resolve(ws, prepared)  # an unresolvable candidate's report carries the run's id
    _publish(followups.first_runs(entries), entries, ws.reports, ws.options.run_id, random.getrandbits(32))
    return 0


def _directory(ws: Workspace, argv, invoked_from: str | None, command: str) -> Path:
    """DIR, as the user typed it from `invoked_from`."""
    return Path(invoked_from or ".") / options.parse(DIRECTORY, argv, options.prog(ws, command)).directory


def _run_id(ws: Workspace, directory: Path) -> str | None:
    """The run's id: this job's HARNESS_RUN_ID, else the one the baseline's report carries."""
    try:
        return ws.options.run_id or report_io.load(directory / f"{matrix.BASELINE}.json").run_id
    except HarnessError:
        return None


def follow_ups(ws: Workspace, argv, invoked_from: str | None) -> int:
    """After baseline and candidate: write the replay's and the attribution's files into DIR (and the
    reports of attribution entries that cannot run), print the runs they need as a matrix."""
    return frame.execute(frame.Command("followups", lambda typed: _directory(ws, typed, invoked_from, "followups"),
                                       lambda directory: _follow_ups(ws, directory)), argv)


def _follow_ups(ws: Workspace, directory: Path) -> int:
    entries = run_verdict.planned_entries(directory)
    follow = followups.decide(directory, entries)
    followups.write(follow, directory, _run_id(ws, directory))
    # The judge job has no environments: the API diff is made here, from the reports' versions, and travels
    # to it as DIR/api-diff.json (a note, never a failure, when it cannot be made).
    api_for_run.compute(ws, directory, entries)
    for note in (follow.replay_note() if follow.examples else None,
                 follow.rollback_note() if follow.rollback else None,
                 follow.attribution_note() if follow.attributes else follow.skipped_note(entries[2:])):
        if note:
            print(f"followups: {note}")
    _publish(follow.runs(entries[0], entries[1]), entries, directory, _run_id(ws, directory), ws.options.seed)
    return 0


def judge_directory(ws: Workspace, argv, invoked_from: str | None) -> int:
    """The verdict on DIR's reports, written into DIR; 0 unchanged, 1 changed, 2 cannot judge. The
    project options (`--builtin report`...) say how the verdict judges, as they do for `upgrade`."""
    return frame.execute(frame.Command("judge", options.split,
                                       lambda split: _judge(ws, *split, invoked_from)), argv)


def _judge(ws: Workspace, given: run_options.RunOptions, rest: list[str], invoked_from: str | None) -> int:
    ws = ws.with_options(run_options.absolute(given, Path(invoked_from or ".")))
    return run_verdict.judge(ws, _directory(ws, rest, invoked_from, "judge"))


COMMANDS = (
    options.Declaration("plan", "CI's first step: resolve the upgrade's plan once, print its baseline and candidate "
                                "as a matrix.", upgrade.USAGE,
                        lambda call: plan(call.ws, list(call.argv), invoked_from=str(call.invoked_from)),
                        session=options.Session.HOST, route=options.Route.SESSION),
    options.Declaration("followups", "CI, after baseline and candidate: the replay and attribution runs DIR needs, "
                                     "as a matrix.", DIRECTORY,
                        lambda call: follow_ups(call.ws, list(call.argv), invoked_from=str(call.invoked_from)),
                        session=options.Session.HOST, route=options.Route.SESSION),
    options.Declaration("judge", "The verdict on a directory of one run's reports (CI artifacts): as `upgrade` "
                                 "writes it. Exit 0/1/2.", DIRECTORY,
                        lambda call: judge_directory(call.ws, list(call.argv), invoked_from=str(call.invoked_from)),
                        session=options.Session.HOST, route=options.Route.HERE),
)
