"""The entries of one upgrade run, each a child `nox -s <entry>` session: what they are told, where their
environments live, and how they are started, shown, stopped (with the run) and explained when they end early.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import env_vars, run_options
from harness.model import progress as progress_io
from harness.model.report import now
from harness.stack import cli_args
from harness.stack.environments import entry as stack_entry
from harness.stack.pins import matrix, plan
from harness.stack.run import (ending, entry_reuse, lifeline, progress, report_cache, rollback as rollback_runs,
                              run_lock, run_profile, same_stack)
from harness.stack.workspace import Workspace

REPLAY = "baseline-replay"  # the baseline re-running the candidate's falsifying examples


def _stem(entry: matrix.Entry, replay: Path | None, rollback: Path | None) -> str:
    """The report name of an entry's run: the baseline's follow-ups have their own (a rollback's names the
    report whose checkpoints it restores: the folder's name)."""
    if replay is not None:
        return REPLAY
    return rollback_runs.report_name(rollback.name) if rollback is not None else entry.name


def child_environment(ws: Workspace, args, only: Path | None, seed: int, replay: Path | None,
                      rollback: Path | None = None) -> dict[str, str]:
    """What every entry of this run is told: the plan, the selection, one seed, examples to replay."""
    env = run_options.inherited(os.environ)  # never another run's plan, selection or replay
    env[env_vars.RUN_ID] = args.run_id  # the run its reports belong to
    env.update(lifeline.child_environment())  # and dies with
    env[env_vars.SEED] = str(seed)  # every entry draws the same examples
    env[env_vars.PLAN] = str(ws.reports / plan.PLAN_FILE)  # the entries, resolved once
    env[env_vars.REPORTS_DIR] = str(ws.reports)
    if args.offline:
        env["UV_OFFLINE"] = "1"
    if only is not None:
        env[env_vars.ONLY] = str(only)
    if replay is not None:
        env.update({env_vars.REPLAY: str(replay), env_vars.REPORT_NAME: REPLAY})
    if rollback is not None:
        env.update({env_vars.ROLLBACK_FROM: str(rollback),
                    env_vars.REPORT_NAME: rollback_runs.report_name(rollback.name)})
    return env


def new_run_id() -> str:
    """A run's id: when it started, and enough randomness that two runs never share one. Under GitHub Actions
    it names the Actions run (and attempt) instead of the process: a report reused in a later pull request
    then says which workflow run computed it (the verdict's "Reused" line)."""
    actions = os.environ.get("GITHUB_RUN_ID")
    where = f"actions-{actions}.{os.environ.get('GITHUB_RUN_ATTEMPT') or 1}" if actions else str(os.getpid())
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{where}-{random.getrandbits(24):06x}"


@contextlib.contextmanager
def _stopped_on_exit(running: dict):
    """On Ctrl-C or an error, stop the entries still running (and close their logs) before the run's
    lock is released, so no child keeps writing into reports/ behind a new run. SIGTERM makes an entry's
    session kill its whole process group (harness.stack.run.lifeline); a SIGKILL the run cannot catch is
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


def run_entries(ws: Workspace, entries: list[matrix.Entry], args, seed: int, only: Path | None = None,
                replay: Path | None = None, rollback: Path | None = None) -> dict[str, int]:
    """Run each entry's session as a child nox process, `jobs` at a time; logs in reports/<entry>.log.
    Each entry writes its phase and checks done to a progress file that the display shows."""
    with run_profile.phase(_label(entries, only, replay, rollback)):
        return _run_entries(ws, entries, args, seed, only, replay, rollback)


def _label(entries: list[matrix.Entry], only: Path | None, replay: Path | None, rollback: Path | None) -> str:
    """The phase of the run's profile (--harness-phases) these entries make."""
    names = ", ".join(e.name for e in entries)
    if replay is not None:
        return "replay: the baseline on the candidate's falsifying examples"
    if rollback is not None:
        return f"rollback: the baseline restores {rollback.name}'s checkpoints"
    return f"entries: {names}" + (" (the selected checks)" if only is not None else "")


def _run_entries(ws: Workspace, entries: list[matrix.Entry], args, seed: int, only: Path | None,
                 replay: Path | None, rollback: Path | None) -> dict[str, int]:
    env = child_environment(ws, args, only, seed, replay, rollback)
    reports, cache = ws.reports, report_cache.directory(ws.published)  # records outlive the run's directory
    pending, running, codes, jobs, attempts, phase_dirs = list(entries), {}, {}, args.jobs, {}, {}
    by_name, twins = {e.name: e for e in entries}, same_stack.Twins()
    typed_in = getattr(args, "typed_in", None)  # logs are shown relative to where the command was typed
    with tempfile.TemporaryDirectory(prefix="harness-progress-") as files, progress.display() as shown, \
            _stopped_on_exit(running):
        while pending or running:
            while pending and len(running) < max(1, jobs):
                entry = pending.pop(0)
                stem = _stem(entry, replay, rollback)
                looked_at = time.perf_counter()
                looked = entry_reuse.attempt(ws, cache, entry, env, seed, only, replay, reports / f"{stem}.json",
                                             reports / f"{stem}.log", getattr(args, "fresh", False),
                                             twin=twins.served_by.get(entry.name))
                if looked.reused is not None:
                    codes[entry.name], attempts[entry.name] = 0, looked
                    run_profile.entry_done(stem, time.perf_counter() - looked_at, True, None)
                    origin = (f"{looked.reused.reused.entry}, this run's: the same stack, ran once"
                              if same_stack.of_this_run(looked.reused) else looked.reused.reused.when)
                    shown.finished(entry.name, f"  {entry.name:12s} reused    the report of {origin} (log: "
                                               f"{cli_args.shown_path(ws.published / f'{stem}.log', typed_in)})")
                    continue
                twin = twins.wait_for(entry, looked.key)
                if twin is not None:  # one stack, one run: served from the twin's report once it has finished
                    shown.finished(entry.name, f"  {entry.name:12s} waits     for {twin}, which installs the same "
                                               "stack")
                    continue
                log = open(reports / f"{stem}.log", "w")
                file = Path(files) / f"{entry.name}.json"
                cmd = [sys.executable, "-m", "nox", "-f", str(ws.noxfile), "-s", entry.name,
                       "--envdir", str(ws.envdir)]
                phase_dirs[entry.name] = timed = run_profile.entry_directory(stem)  # --harness-phases: its own
                proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ws.root,
                                        env={**env, env_vars.PROGRESS: str(file), **run_profile.told(timed)},
                                        **lifeline.popen_options(run_lock.held_fds()))
                running[entry.name], attempts[entry.name] = (proc, log, f"{stem}.log", time.perf_counter()), looked
                twins.started(entry.name, looked.key)
                why = f" (ran: {looked.why_ran})" if looked.why_ran else ""
                shown.started(entry.name, file, f"  {entry.name:12s} started   {entry.pin_text}{why}")
            time.sleep(0.2 if running else 0)
            for name, (proc, log, log_name, t0) in list(running.items()):
                if proc.poll() is not None:
                    log.close()
                    codes[name] = proc.returncode
                    del running[name]
                    if proc.returncode != 0:
                        explain_ending(reports, by_name[name], proc.returncode, Path(files) / f"{name}.json",
                                       _stem(by_name[name], replay, rollback))
                    stem = Path(log_name).stem
                    entry_reuse.keep(ws, cache, attempts[name], by_name[name], env, seed, replay,
                                     reports / f"{stem}.json", reports / log_name)
                    run_profile.entry_done(stem, time.perf_counter() - t0, False, phase_dirs.get(name))
                    shown.finished(name, f"  {name:12s} finished  in {time.perf_counter() - t0:5.1f}s "
                                         f"(log: {cli_args.shown_path(ws.published / log_name, typed_in)})")
                    pending[:0] = twins.finished(name)  # its twins next, served from its report
            shown.refresh()
    return codes


def explain_ending(reports: Path, entry: matrix.Entry, return_code: int, progress_file: Path,
                   stem: str | None = None) -> None:
    """An entry whose session failed and left a partial report without a reason (nox itself was killed,
    or its session could not say why): the reason from nox's return code and the checks done. A session
    that failed before its suite started (no report, nox not killed) is told from its log instead."""
    report = reports / f"{stem or entry.name}.json"
    state = progress_io.read(progress_file)
    if return_code < 0:
        problem = ending.explain(return_code, state)
    elif report.exists():
        problem = f"its session ended with exit status {return_code} {ending.where(state)} (see {report.stem}.log)"
    else:
        return
    ending.record(report, stack_entry.entry_info(entry), problem, now())
