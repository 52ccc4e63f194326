"""`nox -s upgrade`: run baseline and candidate, attribute what changed with the single-package
entries, then print the verdict. Each entry runs as a child nox session with its log in reports/.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import json
import random
import signal
import subprocess
import sys
import tempfile
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
                           lifeline, plan, progress, project, project_options, run_dir, run_lock, upgrade_args)
from harness.stack.interpreters import find_python
from harness.verdict import cli, compare


REPLAY = "baseline-replay"  # the baseline re-running the candidate's falsifying examples
def _child_environment(args, only: Path | None, seed: int, replay: Path | None) -> dict[str, str]:
    """What every entry of this run is told: the plan, the selection, one seed, examples to replay."""
    env = {k: v for k, v in os.environ.items()
           if k not in (env_vars.ONLY, env_vars.CANDIDATE, env_vars.REPLAY, env_vars.REPORT_NAME, env_vars.PLAN)}
    env[env_vars.RUN_ID] = args.run_id  # the run its reports belong to
    env.update(lifeline.child_environment())  # and dies with
    env[env_vars.SEED] = str(seed)  # every entry draws the same examples
    env[env_vars.PLAN] = str(paths.REPORTS / plan.PLAN_FILE)  # the entries, resolved once
    env[env_vars.REPORTS_DIR] = str(paths.REPORTS)
    if args.offline:
        env["UV_OFFLINE"] = "1"
    if only is not None:
        env[env_vars.ONLY] = str(only)
    if replay is not None:
        env.update({env_vars.REPLAY: str(replay), env_vars.REPORT_NAME: REPLAY})
    return env


def envdir() -> Path:
    """The entries' environments: .nox/ beside the default reports/, DIR/.nox for `--reports DIR`, so two
    upgrades in two reports directories never install into one environment."""
    reports = paths.REPORTS_HOME or paths.REPORTS  # not the run's own directory: environments outlive runs
    return paths.ROOT / ".nox" if reports == paths.ROOT / "reports" else reports / ".nox"


def new_run_id() -> str:
    """A run's id: when it started, and enough randomness that two runs never share one."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{random.getrandbits(24):06x}"


@contextlib.contextmanager
def _stopped_on_exit(running: dict):
    """On Ctrl-C or an error, stop the entries still running (and close their logs) before the run's
    lock is released, so no child keeps writing into reports/ behind a new run. SIGTERM makes an entry's
    session kill its whole process group (harness.stack.lifeline); a SIGKILL the run cannot catch is
    handled by the kernel, which sends each session that SIGTERM when the run dies."""
    try:
        yield
    finally:
        for proc, log, *_ in running.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)  # the session and everything it started
                    proc.wait()
            log.close()


def run_entries(entries: list[matrix.Entry], args, seed: int, only: Path | None = None,
                replay: Path | None = None) -> dict[str, int]:
    """Run each entry's session as a child nox process, `jobs` at a time; logs in reports/<entry>.log.
    Each entry writes its phase and checks done to a progress file that the display shows."""
    env = _child_environment(args, only, seed, replay)
    pending, running, codes, jobs = list(entries), {}, {}, args.jobs
    with tempfile.TemporaryDirectory(prefix="harness-progress-") as files, progress.display() as shown, \
            _stopped_on_exit(running):
        while pending or running:
            while pending and len(running) < max(1, jobs):
                entry = pending.pop(0)
                log_name = f"{REPLAY if replay is not None else entry.name}.log"
                log = open(paths.REPORTS / log_name, "w")
                file = Path(files) / f"{entry.name}.json"
                cmd = [sys.executable, "-m", "nox", "-f", str(paths.NOXFILE), "-s", entry.name,
                       "--envdir", str(envdir())]
                proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=paths.ROOT,
                                        env={**env, env_vars.PROGRESS: str(file)},
                                        **lifeline.popen_options(run_lock.held_fds()))
                running[entry.name] = (proc, log, log_name, time.perf_counter())
                shown.started(entry.name, file, f"  {entry.name:12s} started   {entry.pin_text}")
            time.sleep(0.2)
            for name, (proc, log, log_name, t0) in list(running.items()):
                if proc.poll() is not None:
                    log.close()
                    codes[name] = proc.returncode
                    del running[name]
                    shown.finished(name, f"  {name:12s} finished  in {time.perf_counter() - t0:5.1f}s "
                                         f"(log: reports/{log_name})")
            shown.refresh()
    return codes


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
    """Arguments, a Python and a writable reports directory: HarnessError (exit 2) before anything runs."""
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
    return args


def _plan(args) -> list[matrix.Entry] | int:
    """Every entry resolved before any suite runs; the exit status when the candidate cannot be."""
    try:
        entries = plan.build(args.candidate, paths.REPORTS / "locks", args.pre)
    except HarnessError as exc:
        requested = matrix.entries(args.candidate)[matrix.CANDIDATE]
        stack_entry.write_unresolvable(requested, str(exc), now())
        print(f"upgrade: {exc}\nupgrade: CANNOT JUDGE: candidate is unresolvable (exit status 2; "
              f"{paths.REPORTS_HOME or paths.REPORTS}/{matrix.CANDIDATE}.json says why)", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
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
    if singles:
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
