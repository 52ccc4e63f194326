"""`nox -s upgrade`: run baseline and candidate, attribute what changed with the single-package
entries, then print the verdict. Each entry runs as a child nox session with its log in reports/.
"""

from __future__ import annotations

import argparse
import os
import json
import random
import sys
import time
from pathlib import Path

from harness import env_vars
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.model import report_io
from harness.model.enums import BuiltinMode, Status
from harness.model.report import Report
from harness.model.verdict import EntryVerdict
from harness.model.report import now
from harness.stack import (bisect, builtin_golden, cli_args, entry as stack_entry, harness_source, matrix, paths,
                           plan, preflight, project, project_options, prune_envs, run_dir, run_lock, upgrade_args)
from harness.stack.entry_runs import REPLAY, new_run_id, run_entries
from harness.stack.interpreters import find_python
from harness.verdict import cli, compare


def _judge_pair() -> tuple[Report, EntryVerdict] | None:
    """The candidate's report and how it changed against the baseline, judged once for the replay and
    the attribution; None when either report is unusable or incomplete."""
    try:
        base = report_io.load(paths.REPORTS / f"{matrix.BASELINE}.json")
        candidate = report_io.load(paths.REPORTS / f"{matrix.CANDIDATE}.json")
    except HarnessError:
        return None
    if base.status != Status.COMPLETE or candidate.status != Status.COMPLETE:
        return None
    return candidate, compare.compare_entry(base, candidate)


def _selection(name: str, ids: list[str]) -> Path:
    path = paths.REPORTS / name
    path.write_text("\n".join(ids) + "\n")
    return path


def _prepare(argv, invoked_from: str | None) -> argparse.Namespace:
    """Arguments, a Python, a writable reports directory and a plan that can run (harness.stack.preflight):
    HarnessError (exit 2) before anything runs or moves."""
    args = upgrade_args.parse(argv)
    args.run_id = new_run_id()
    if args.candidate is not None:
        matrix.parse_candidate(args.candidate)  # bad input is told before anything else
    find_python(matrix.load_pins().python)  # a project may set its own
    # This run's --contracts / --builtin / --no-builtin / --baseline-from reach the plan, every entry and the verdict.
    os.environ.update(project_options.environment(args, Path(invoked_from or ".")))
    if args.reports:
        paths.REPORTS = (Path(invoked_from or ".") / args.reports).resolve()
    if args.offline:
        os.environ["UV_OFFLINE"] = "1"  # this run's resolutions too
    upgrade_args.check_writable(paths.REPORTS)
    # Every committed lock, interpreter and golden file, before anything is moved, written or run.
    preflight.check(matrix.upgrade_plan(matrix.entries(args.candidate)))
    return args


def _plan(args) -> list[matrix.Entry] | int:
    """Every entry resolved and checked before any suite runs; the exit status when the candidate cannot
    be resolved. A plan that cannot run (HarnessError from the checks) publishes nothing: last run's
    reports stay where they are (harness.stack.run_dir)."""
    try:
        entries = plan.build(args.candidate, paths.REPORTS / "locks", args.pre)
    except HarnessError as exc:
        requested = matrix.entries(args.candidate)[matrix.CANDIDATE]
        stack_entry.write_unresolvable(requested, str(exc), now())
        print(f"upgrade: {exc}\nupgrade: CANNOT JUDGE: candidate is unresolvable (exit status 2; "
              f"{paths.REPORTS_HOME or paths.REPORTS}/{matrix.CANDIDATE}.json says why)", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    preflight.check(entries)  # the locks the plan resolved, too
    plan.write(entries, paths.REPORTS / plan.PLAN_FILE)
    found = project.load()
    runs_builtin = found.builtin != BuiltinMode.OFF and not paths.IS_CHECKOUT
    note = builtin_golden.mismatch_note(entries[0], found.golden) if runs_builtin else None
    if note:
        print(f"upgrade: note: {note}")
    for entry in entries:
        for note in entry.notes:
            print(f"upgrade: {entry.name}: {note}")
    return entries


def _replay(base_entry: matrix.Entry, args, seed: int, candidate: Report, judged: EntryVerdict) -> Path | None:
    """Run the baseline on the candidate's falsifying examples of properties that fail there only."""
    blobs = {i: candidate.check(i).reproduce_failure for i in compare.property_regressions(judged)}
    examples = {i: blob for i, blob in blobs.items() if blob}
    if not examples:
        return None
    print(f"upgrade: {len(examples)} properties fail on the candidate only; replaying its falsifying examples "
          "on the baseline")
    file = paths.REPORTS / "replay-examples.json"
    file.write_text(json.dumps(examples, indent=1) + "\n")
    run_entries([base_entry], args, seed, only=_selection("replay-selection.txt", list(examples)), replay=file)
    return paths.REPORTS / f"{REPLAY}.json"


def _run_plan(args, plan: list[matrix.Entry], seed: int) -> tuple[list[matrix.Entry], Path | None]:
    """Baseline and candidate; the baseline again on the candidate's failing examples of properties that
    fail there only; then the single-package entries on just the checks that changed."""
    base_entry, pair, singles = plan[0], plan[:2], plan[2:]
    print(f"upgrade: running {', '.join(e.name for e in pair)}, {args.jobs} at a time")
    run_entries(pair, args, seed)
    judged = _judge_pair()
    replay = _replay(base_entry, args, seed, *judged) if judged else None
    changed = compare.changed_check_ids(judged[1]) if judged and singles else []
    if singles and changed:
        # Counted as the headline counts them, the bits-only moves apart: the attribution re-runs both.
        print(f"upgrade: {compare.changed_text(judged[1])} on the candidate; attributing them with "
              f"{', '.join(e.name for e in singles)}")
        unbuilt = [e for e in singles if e.problem]
        for entry in unbuilt:  # a partial attribution, said in the verdict; never a reason not to judge
            stack_entry.write_unresolvable(entry, entry.problem, now())
        run_entries([e for e in singles if not e.problem], args, seed,
                    only=_selection("attribution-selection.txt", changed))
        return [*pair, *singles], replay
    if singles and judged is None:  # the verdict says why; nothing can be attributed
        print("upgrade: the baseline or the candidate did not complete; the single-package entries are not run")
    elif singles:
        print("upgrade: no check changed on the candidate; the single-package entries are not needed")
    return pair, replay


def verdict_mode() -> list[str]:
    """The verdict's --builtin: "report" when the project (its table, or this run's --builtin) reports the
    built-in contracts only; nothing otherwise, so that the checkout's verdict is judged as ever."""
    mode = project.load().builtin
    return ["--builtin", mode.value] if mode == BuiltinMode.REPORT else []


def upgrade(argv, invoked_from: str | None = None) -> int:
    """nox -s upgrade: resolve the plan, run it, compare, print the verdict, return the exit status."""
    try:
        args = _prepare(argv, invoked_from)
        with run_lock.hold(paths.REPORTS, ["nox", "-s", "upgrade", "--", *argv]):
            return _in_run_directory(args)
    except cli_args.HelpShown:
        return 0
    except HarnessError as exc:
        print(f"upgrade: {exc}", file=sys.stderr)
        return exc.exit_status


def _in_run_directory(args) -> int:
    """Run in reports/.runs/<run id>/ and publish into reports/ only a run that finished (any verdict,
    CANNOT JUDGE included); a stopped run's files stay in its run directory, never judged with another's."""
    left = run_dir.prune(paths.REPORTS)
    if left is not None:
        print(f"upgrade: note: an earlier run did not finish; its files are in {left}/")
    saved = os.environ.get(env_vars.RUN_ID)
    os.environ[env_vars.RUN_ID] = args.run_id  # the reports this process writes (unresolvable entries) carry it
    try:
        with run_dir.writing(args.run_id) as run:
            code = _upgrade(args)
    except BaseException:
        print(f"upgrade: stopped; this run's files stay in {paths.REPORTS / run_dir.RUNS / args.run_id}/ "
              "(not published to the reports directory)", file=sys.stderr)
        raise
    finally:
        if saved is None:
            del os.environ[env_vars.RUN_ID]
        else:
            os.environ[env_vars.RUN_ID] = saved
    kept = run_dir.keep_previous([e.name for e in matrix.upgrade_plan(matrix.entries())] + [
        matrix.CANDIDATE, REPLAY, *(f"{g}-only" for g in matrix.GROUPS), *bisect.report_names(paths.REPORTS)])
    run_dir.publish(run, paths.REPORTS)
    if kept:
        print(f"upgrade: last run's reports moved to {paths.REPORTS}/previous/ ({len(kept)} files)")
    for line in prune_envs.after_run(args.envs_size_limit):
        print(f"upgrade: {line}")
    return code


def _upgrade(args) -> int:
    entries = _plan(args)
    if isinstance(entries, int):
        return entries
    # The harness every entry installs, built once here (an installed tool) and named to the children.
    os.environ.pop(env_vars.WHEEL, None)
    os.environ.update(harness_source.child_environment())
    started = time.perf_counter()
    seed = random.getrandbits(32)
    ran, replay = _run_plan(args, entries, seed)
    print(f"upgrade: entries done in {time.perf_counter() - started:.1f}s")
    silent = [e for e in ran if not (paths.REPORTS / f"{e.name}.json").exists()]
    for entry in silent:
        print(f"upgrade: entry {entry.name} wrote no report; the end of {paths.REPORTS_HOME}/{entry.name}.log says:\n"
              + cli_args.log_tail(paths.REPORTS / f"{entry.name}.log"), file=sys.stderr)
        if entry not in ran[:2]:  # an attribution entry: the attribution is partial, the verdict stands
            stack_entry.write_unresolvable(entry, f"its session wrote no report (see {entry.name}.log)", now())
    if any(e in ran[:2] for e in silent):
        print("upgrade: CANNOT JUDGE (exit status 2)", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    reports = paths.REPORTS
    replay_args = ["--replay", str(replay)] if replay is not None and replay.exists() else []
    bisected = bisect.run(args, entries, seed, run_entries, replay) if args.bisect else None
    replay_args += ["--bisect", str(bisected)] if bisected else []
    return cli.main([str(reports / f"{e.name}.json") for e in ran] + replay_args + verdict_mode() + [
        "--run-id", args.run_id, "--markdown", str(reports / "upgrade-summary.md"), "--json", str(reports / "upgrade-summary.json"),
        "--html", str(reports / "upgrade-report.html")])
