"""`nox -s upgrade`: run baseline and candidate, attribute what changed with the single-package
entries, then print the verdict. Each entry runs as a child nox session with its log in reports/.

After an upgrade: remove the entries' environments that no current plan uses (old bisection probes,
old single-package entries), least recently used first, beyond the project's size limit
(harness.stack.environments.envs). Kept always: this run's plan, the matrix's entries, and the sessions that are not
entries (the checkout's `tests`, `golden`).
"""

from __future__ import annotations

import dataclasses
import random
import sys
import time

from harness import platforms, run_options
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.model.report import now
from harness.stack import boundary, project, staging
from harness.stack.commands import bisect, frame, options
from harness.stack.entry_side import entry as stack_entry, rollback
from harness.stack.environments import envs, harness_source
from harness.stack.pins import current, matrix, plan
from harness.stack.run import api_diff as api_for_run, followups, run_directory, run_plan, run_profile, run_verdict
from harness.stack.run.entry_runs import REPLAY, run_entries, run_sessions
from harness.stack.run.run_directory import RunDirectory
from harness.stack.shown import log_tail
from harness.stack.workspace import Workspace
from harness.verdict import judgement


SESSIONS = ("tests", "golden")  # environments of sessions that are not entries of a plan


def current_sessions(ws: Workspace) -> set[str]:
    """The sessions whose environments are in use: the published plan's (bisection probes included), the
    matrix's entries, and the sessions that are not entries. HarnessError when the matrix cannot be read."""
    names = {*SESSIONS, *current.entries(ws)}
    published = ws.published / plan.PLAN_FILE
    if published.exists():
        names |= set(plan.read(published))
    return names


def after_run(ws: Workspace, limit: float | None) -> list[str]:
    """Prune with this run's limit (None: the project's) and say what was removed, or why nothing was."""
    try:
        keep = current_sessions(ws)
        limit = project.load(ws).envs_size_limit if limit is None else limit
    except HarnessError as exc:
        return [f"note: the environments are not pruned: {str(exc).rstrip('.')}."]
    return envs.describe(envs.prune(ws.envdir, keep, limit))


def _follow_up(ws: Workspace, prepared: run_plan.Prepared, entries: list[matrix.Entry],
               seed: int) -> followups.FollowUps:
    """The replay, the rollbacks and the attribution harness.stack.run.followups decides from baseline and
    candidate, run here in its waves (FollowUps.waves); what was decided (the verdict's inputs follow it)."""
    run = RunDirectory.of(ws)
    singles, follow = entries[2:], followups.decide(run, entries)
    followups.write(follow, run, ws.options.run_id)
    if follow.examples:
        print(f"upgrade: {follow.replay_note()}")
    if follow.attributes:
        print(f"upgrade: {follow.attribution_note()}")
    elif follow.skipped_note(singles):
        print(f"upgrade: {follow.skipped_note(singles)}")
    if follow.rollback:
        print("upgrade: the baseline restores the candidate's checkpoints (can the team roll back?)"
              + ("; and each attribution entry's, in the same process once they ran (which bump moves the "
                 "rollback)" if follow.attribution else ""))
    for wave in follow.waves(entries[0], entries[1], run):
        run_sessions(ws, wave, seed, prepared.typed_in)
    for writer, name in follow.rollbacks(entries[1]).items():
        if not run.report_file(name).exists():
            print(f"upgrade: the baseline's rollback of {writer}'s checkpoints wrote no report; {writer}'s rollback "
                  f"checks stand as its own run read its own checkpoints (see {RunDirectory(ws.home).log(name)})",
                  file=sys.stderr)
    return follow


def _run_plan(ws: Workspace, request: Request, prepared: run_plan.Prepared, entries: list[matrix.Entry],
              seed: int):
    """Baseline and candidate; the baseline again on the candidate's failing examples of properties that
    fail there only, and on its checkpoints; then the single-package entries on just the checks that changed
    (and the rollback checks, the baseline reading their checkpoints)."""
    pair = entries[:2]
    why = f" ({request.jobs_why}; --jobs N to say otherwise)" if request.jobs_why else ""
    print(f"upgrade: running {', '.join(e.name for e in pair)}, {ws.options.jobs} at a time{why}")
    run_entries(ws, pair, seed, typed_in=prepared.typed_in)
    with run_profile.phase("follow-ups"):
        return _follow_up(ws, prepared, entries, seed)


USAGE = options.Usage(run_options=run_options.UPGRADE)  # `plan` (fanout) reads the same line
JOBS = 2  # entries run at once unless --jobs says otherwise, or the host's accelerator takes one process


@dataclasses.dataclass(frozen=True)
class Request:
    """What an upgrade (or CI's plan step) was asked, read once from its command line: its options as typed
    (harness.run_options; --jobs decided, --envs-size-limit in bytes) and, when it runs one entry at a time
    unasked, why."""

    options: run_options.RunOptions
    jobs_why: str | None = None


def parse_options(ws: Workspace, argv, command: str = "upgrade") -> Request:
    """`command`: upgrade, or plan (its first step alone, for CI), which takes the same options."""
    given = options.run_options_of(options.parse(USAGE, argv, options.prog(ws, command)))
    jobs, jobs_why = given.jobs, None
    if jobs is None:  # --platform names where JAX runs (platforms.entries_at_once); else the host's default
        jobs_why = boundary.one_process_at_a_time() if given.platform is None else None
        jobs = 1 if jobs_why else JOBS
    if jobs < 1:
        raise HarnessError(f"--jobs {jobs}: give at least 1.")
    size = given.envs_size_limit
    if size is not None:
        try:
            size = envs.parse_size(size)
        except ValueError as exc:
            raise HarnessError(f"--envs-size-limit: {exc}.") from None
    return Request(dataclasses.replace(given, jobs=platforms.entries_at_once(given.platform, jobs),
                                       envs_size_limit=size), jobs_why)


def upgrade(ws: Workspace, argv, invoked_from: str | None = None) -> int:
    """nox -s upgrade: resolve the plan, run it, compare, print the verdict, return the exit status."""
    return frame.execute(frame.Command("upgrade", lambda typed: _recovered_then_parsed(ws, typed),
                                       lambda request: _profiled(ws, request, argv, invoked_from)), argv)


def _recovered_then_parsed(ws: Workspace, argv) -> Request:
    """Before the pins are read, and whatever the arguments: an accept killed while moving its files into
    place is finished first. Then the options."""
    staging.recover_unless_busy(ws.root, lambda line: print(f"upgrade: {line}", flush=True))
    return parse_options(ws, argv)


def _profiled(ws: Workspace, request: Request, argv, invoked_from: str | None) -> int:
    """The run, its time measured (printed with --harness-phases once the preflight passed)."""
    run_profile.start()
    prepared = None
    try:
        with run_profile.phase("preflight (options, interpreters, committed locks, golden files)"):
            ws, prepared = run_plan.prepare(ws, request.options, invoked_from)
        if ws.options.phases:
            run_profile.detail()
        with run_directory.hold(ws.reports, ["nox", "-s", "upgrade", "--", *argv]):
            return _in_run_directory(ws, request, prepared)
    finally:
        profile = run_profile.stop()
        if profile is not None and prepared is not None and ws.options.phases:
            print("\n" + "\n".join(run_profile.table(profile)), flush=True)


def _in_run_directory(ws: Workspace, request: Request, prepared: run_plan.Prepared) -> int:
    """Run in reports/.runs/<run id>/ and publish into reports/ only a run that finished (any verdict,
    CANNOT JUDGE included); a stopped run's files stay in its run directory, never judged with another's,
    and so do those of a run that could not start (a mistyped pin): one typo must not move the last verdict."""
    left = run_directory.prune(ws.reports)
    if left is not None and run_directory.newer_than_the_last_verdict(ws.reports, left):
        # the plan is written once it is resolved and checked, before the first entry starts
        how = "did not finish" if (left / plan.PLAN_FILE).exists() else "stopped before any entry started"
        print(f"upgrade: note: an earlier run {how}; its files are in {left}/")
    own = ws.reports / run_directory.RUNS / ws.options.run_id
    try:
        run = run_directory.start(ws, ws.options.run_id)
        code = _upgrade(run, request, prepared)
    except run_plan.CannotStart as exc:  # before any entry started: the last finished run's verdict stays
        raise run_plan.CannotStart(f"{exc}\nnot published: {ws.reports}/ keeps the last finished run's verdict; "
                                   f"this run's files are in {own}/") from None
    except BaseException:
        print(f"upgrade: stopped; this run's files stay in {own}/ "
              "(not published to the reports directory)", file=sys.stderr)
        raise
    writers = [matrix.CANDIDATE, *(f"{g}-only" for g in matrix.GROUPS)]
    kept = run_directory.keep_previous(ws.reports, [e.name for e in matrix.upgrade_plan(current.entries(ws))] + [
        *writers, REPLAY, *map(rollback.report_name, writers), *bisect.report_names(ws.reports)],
        folders=[rollback.CHECKPOINTS, plan.LOCKS_DIR])  # the plan's locks go with the plan that names them
    with run_profile.phase("publishing the reports, pruning environments"):
        run_directory.publish(run.reports, ws.reports)
        if kept:
            print(f"upgrade: last run's reports moved to {ws.reports}/previous/ ({len(kept)} files)")
        for line in after_run(ws, ws.options.envs_size_limit):
            print(f"upgrade: {line}")
    return code


def _upgrade(ws: Workspace, request: Request, prepared: run_plan.Prepared) -> int:
    """In the run's workspace: the plan, its entries, the follow-ups (and the bisection), the verdict."""
    with run_profile.phase("resolution (the plan's locks resolved and checked)"):
        entries = run_plan.resolve(ws, prepared)
    # The harness every entry installs, built once here (an installed tool) and named to the children.
    ws = dataclasses.replace(ws, options=dataclasses.replace(ws.options, wheel=harness_source.wheel_for_entries(ws)))
    started = time.perf_counter()
    seed = random.getrandbits(32)
    follow = _run_plan(ws, request, prepared, entries, seed)
    run = RunDirectory.of(ws)
    ran = [*entries[:2], *follow.attributed]  # the single-package entries when they attribute a change
    print(f"upgrade: entries done in {time.perf_counter() - started:.1f}s")
    silent = [e for e in ran if not run.report_file(e.name).exists()]
    for entry in silent:
        print(f"upgrade: entry {entry.name} wrote no report; the end of {RunDirectory(ws.home).log(entry.name)} "
              "says:\n" + log_tail(run.log(entry.name)), file=sys.stderr)
        if entry not in ran[:2]:  # an attribution entry: the attribution is partial, the verdict stands
            stack_entry.write_unresolvable(ws.reports, entry, f"its session wrote no report (see {entry.name}.log)",
                                           now(), run_id=ws.options.run_id)
    if any(e in ran[:2] for e in silent):
        print("upgrade: CANNOT JUDGE (exit status 2)", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    if ws.options.bisect:
        with run_profile.phase("bisection"):
            bisect.run(ws, entries, seed, run_entries, run.replay if follow.examples else None,
                       typed_in=prepared.typed_in, offline=request.options.offline)
    with run_profile.phase("API diff (the versions' public APIs)"):
        api_for_run.compute(ws, run, entries)
    inputs = run_verdict.verdict_inputs(ws, run, entries, follow, ws.options.run_id)
    with run_profile.phase("verdict (compare, attribute, write summaries and the HTML page)"):
        return judgement.judge(inputs, run.summary)


COMMANDS = (options.Declaration(
    "upgrade", "Baseline vs candidate (and single-package entries), then the verdict. Exit 0/1/2.", USAGE,
    lambda call: upgrade(call.ws, list(call.argv), invoked_from=str(call.invoked_from)),
    session=options.Session.HOST, route=options.Route.HERE),)
