"""The entries of one upgrade run, each a child `nox -s <entry>` session: what they are told, where their
environments live, and how they are started, shown, stopped (with the run) and explained when they end early.

While they run, what each is doing is shown, read from its progress file (harness.model.progress), so minutes
of running checks are not minutes of silence.

On a terminal: one live row per running entry (rich: name, bar, phase and checks, elapsed), the
started/finished lines printed above the rows, the rows removed when the entries are done. Elsewhere
(CI logs, `| tee`) escape codes would garble the log: a plain line per running entry every
PLAIN_INTERVAL_S instead. An old runner venv without rich gets the plain lines too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness import env_vars, run_options
from harness.model import entry_job, progress as progress_io
from harness.model.progress import Phase, Progress
from harness.model.report import now
from harness.run_options import RunOptions
from harness.stack import boundary
from harness.stack.entry_side import ending, entry as stack_entry, entry_jobs, rollback as rollback_runs
from harness.stack.pins import matrix
from harness.stack.run import lifeline, report_cache, run_directory, run_profile
from harness.stack.run.run_directory import REPLAY, RunDirectory
from harness.stack.shown import shown_path
from harness.stack.workspace import Workspace


PLAIN_INTERVAL_S = 15.0  # how often the plain display reports the running entries


def describe(state: Progress | None) -> str:
    """What an entry is doing, in the words both displays use: "running 120/340 checks"."""
    if state is None:
        return Phase.STARTING.value
    if state.phase == Phase.RUNNING:
        return f"running {state.done}/{state.total} checks" if state.total is not None else "running checks"
    if state.phase == Phase.COLLECTING:
        return "collecting checks"
    return state.phase.value


def status_line(name: str, state: Progress | None, elapsed: float) -> str:
    return f"  {name:12s} {describe(state)}  {elapsed:.0f}s"


@dataclass
class Watched:
    """One running entry: its progress file, when it started, the last progress read from it."""

    file: Path
    started: float
    state: Progress | None = None

    def poll(self) -> Progress | None:
        """The file's progress; the last one read while the file is missing or unreadable."""
        self.state = progress_io.read(self.file) or self.state
        return self.state


class PlainDisplay:
    """Started/finished lines, and every `interval` seconds one line per running entry."""

    def __init__(self, stream, interval: float = PLAIN_INTERVAL_S, clock=time.monotonic):
        self.stream, self.interval, self.clock = stream, interval, clock
        self.watched: dict[str, Watched] = {}
        self.last_report = clock()

    def started(self, name: str, file: Path, line: str) -> None:
        self.watched[name] = Watched(Path(file), self.clock())
        self._print(line)

    def finished(self, name: str, line: str) -> None:
        self.watched.pop(name, None)
        self._print(line)

    def refresh(self) -> None:
        now = self.clock()
        if now - self.last_report < self.interval:
            return
        self.last_report = now
        for name, watched in self.watched.items():
            self._print(status_line(name, watched.poll(), now - watched.started))

    def close(self) -> None:
        pass

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)


class LiveDisplay:
    """rich's progress rows, one per running entry; the started/finished lines printed above them."""

    def __init__(self, console, clock=time.monotonic):
        from rich.progress import BarColumn, Progress as Rows, TextColumn, TimeElapsedColumn

        self.console, self.clock = console, clock
        self.rows = Rows(TextColumn("  {task.fields[name]:12s}", markup=False), BarColumn(bar_width=30),
                         TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                         console=console, transient=True)
        self.watched: dict[str, Watched] = {}
        self.tasks: dict[str, object] = {}
        self.rows.start()

    def started(self, name: str, file: Path, line: str) -> None:
        self._print(line)
        self.watched[name] = Watched(Path(file), self.clock())
        self.tasks[name] = self.rows.add_task(describe(None), total=None, name=name)

    def finished(self, name: str, line: str) -> None:
        self.watched.pop(name, None)
        if name in self.tasks:
            self.rows.remove_task(self.tasks.pop(name))
            self.rows.refresh()  # else the line is printed above the rows as last drawn, the entry's still in
        self._print(line)

    def refresh(self) -> None:
        for name, watched in self.watched.items():
            state = watched.poll()
            counts = {} if state is None or state.total is None else {"total": state.total, "completed": state.done}
            self.rows.update(self.tasks[name], description=describe(state), **counts)

    def close(self) -> None:
        self.rows.stop()

    def _print(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)


def _live(stream) -> LiveDisplay | None:
    """The live display when `stream` is a terminal that can take it and rich is installed."""
    if not getattr(stream, "isatty", lambda: False)():
        return None
    try:
        from rich.console import Console
    except ImportError:  # a runner venv made before locks/runner.txt had rich
        return None
    console = Console(file=stream)
    if not console.is_terminal or console.is_dumb_terminal:
        return None
    return LiveDisplay(console)


@contextlib.contextmanager
def display(stream=None):
    """The display for `stream` (stdout by default), stopped however the block ends (Ctrl-C too)."""
    stream = stream if stream is not None else sys.stdout
    shown = _live(stream) or PlainDisplay(stream)
    try:
        yield shown
    finally:
        shown.close()


def told(ws: Workspace, seed: int, only: Path | None = None, replay: Path | None = None,
         rollback: tuple[Path, ...] = ()) -> RunOptions:
    """What an entry of this run is told: the run's options (its id, --contracts, --builtin, --offline, the
    wheel...), the selection, one seed, examples to replay, checkpoints folders to restore; its entry is in
    its job, never read from the plan."""
    named = REPLAY if replay is not None else rollback_runs.report_name(rollback[0].name) if len(rollback) == 1 else None
    return dataclasses.replace(ws.options, seed=seed, plan=None, reports_dir=ws.reports, only=only, replay=replay,
                               report_name=named, rollback_from=rollback)


def child_environment(ws: Workspace, options: RunOptions, job: Path) -> dict[str, str]:
    """An entry's session's environment: this process's without another run's own variables, the project's
    options (a user sets them too) and --offline as variables, and its job file's path (harness.model.entry_job),
    which carries the rest: no variable the job replaces is left from this process. A team's project is named
    (`upgrade-harness upgrade` runs in-process); this checkout's sessions find it themselves."""
    project = {} if ws.is_checkout else {env_vars.PROJECT: str(ws.root)}
    replaced = {spec.env: None for spec in run_options.specs(run_options.JOB).values() if spec.env}
    env = boundary.child_environment(options, run_options.PROJECT, run_options.RUN,
                                     extra={**replaced, **project, env_vars.JOB: str(job)})
    env.update(lifeline.child_environment())  # and dies with
    return env


def new_run_id() -> str:
    """A run's id: when it started, and enough randomness that two runs never share one. Under GitHub Actions
    it names the Actions run (and attempt) instead of the process: a report reused in a later pull request
    then says which workflow run computed it (the verdict's "Reused" line)."""
    actions = boundary.given("GITHUB_RUN_ID")
    where = f"actions-{actions}.{boundary.given('GITHUB_RUN_ATTEMPT') or 1}" if actions else str(os.getpid())
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
        for started in running.values():
            proc, log = started.proc, started.log
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)  # the session and everything it started
                    proc.wait()
            log.close()


@dataclasses.dataclass(frozen=True)
class Run:
    """One session an upgrade starts: an entry, the file of the checks it runs (None: all), the examples it
    replays, and the checkpoints folders it restores (several: one baseline process writing each writer's
    report, harness.contract.rollbacks)."""

    entry: matrix.Entry
    only: Path | None = None
    replay: Path | None = None
    rollback: tuple[Path, ...] = ()

    @property
    def reports(self) -> tuple[str, ...]:
        """The names of the reports it writes."""
        if self.replay is not None:
            return (REPLAY,)
        if self.rollback:
            return tuple(rollback_runs.report_name(f.name) for f in self.rollback)
        return (self.entry.name,)

    @property
    def name(self) -> str:
        """What it is shown, counted and logged as: its report's name (a rollback of several writers: the
        rollbacks' prefix, its log copied into each writer's when it ends)."""
        return self.reports[0] if len(self.reports) == 1 else rollback_runs.REPORT

    def job(self, ws: Workspace, seed: int, folders: tuple[Path, ...] | None = None, **own) -> entry_job.EntryJob:
        """Its session's job, restoring `folders` (default: all its own); `own`: progress file, phases dir."""
        options = told(ws, seed, self.only, self.replay, self.rollback if folders is None else folders)
        return entry_jobs.job_of(self.entry, dataclasses.replace(options, **own), entry_jobs.interpreter(self.entry))

    def environment(self, ws: Workspace, seed: int) -> dict[str, str]:
        """Its session's environment, its job file named (RunDirectory.job)."""
        return child_environment(ws, told(ws, seed), RunDirectory.of(ws).job(self.name))


def run_entries(ws: Workspace, entries: list[matrix.Entry], seed: int, only: Path | None = None,
                replay: Path | None = None, rollback: Path | None = None,
                typed_in: Path | None = None) -> dict[str, int]:
    """Run each entry's session as a child nox process, `jobs` at a time (run_sessions), all told the same."""
    runs = [Run(e, only, replay, (rollback,) if rollback is not None else ()) for e in entries]
    codes = run_sessions(ws, runs, seed, typed_in)
    return {run.entry.name: codes[run.name] for run in runs if run.name in codes}


@dataclasses.dataclass
class _Started:
    """A run's session while it runs: the process, its log, its report files' reuse look-ups by folder."""

    proc: subprocess.Popen
    log: object
    started: float
    attempts: dict[Path | None, report_cache.Attempt]


def run_sessions(ws: Workspace, runs: list[Run], seed: int, typed_in: Path | None = None) -> dict[str, int]:
    """Run each session as a child nox process, `jobs` at a time, each as soon as a slot is free; logs in
    reports/<run name>.log. Each writes its phase and checks done to a progress file that the display shows.
    A rollback of several writers looks up each writer's report apart and restores in one process only
    those it cannot reuse. The run's options (ws.options: its id, --jobs, --fresh, --offline) tell them all;
    logs are shown relative to `typed_in`, where the command was typed. The exit status of each run, by its
    name."""
    with run_profile.phase(_label(runs)):
        return _run_sessions(ws, runs, seed, typed_in)


def _label(runs: list[Run]) -> str:
    """The phase of the run's profile (--harness-phases) these sessions make."""
    if all(r.replay is None and not r.rollback for r in runs):
        selected = " (the selected checks)" if any(r.only is not None for r in runs) else ""
        return f"entries: {', '.join(r.entry.name for r in runs)}{selected}"
    parts = []
    for r in runs:
        if r.replay is not None:
            parts.append("replay: the baseline on the candidate's falsifying examples")
        elif r.rollback:
            parts.append(f"rollback: the baseline restores {', '.join(f.name for f in r.rollback)}'s checkpoints")
        else:
            parts.append(r.entry.name + (" (the selected checks)" if r.only is not None else ""))
    return "; ".join(parts)


def _run_sessions(ws: Workspace, runs: list[Run], seed: int, typed_in: Path | None) -> dict[str, int]:
    cache = report_cache.directory(ws.published)  # records outlive the run's directory
    pending, running, codes, jobs, phase_dirs = list(runs), {}, {}, ws.options.jobs or 1, {}
    by_name, twins = {r.name: r for r in runs}, report_cache.Twins()
    with tempfile.TemporaryDirectory(prefix="harness-progress-") as files, display() as shown, \
            _stopped_on_exit(running):
        while pending or running:
            while pending and len(running) < max(1, jobs):
                run = pending.pop(0)
                entry, name = run.entry, run.name
                looked = _looked_up(ws, cache, run, seed, twins.served_by.get(name), shown, typed_in)
                left = tuple(f for f, a in looked.items() if a.reused is None)
                if not left:
                    codes[name] = 0
                    continue
                key = looked[left[0]].key if len(looked) == 1 else None
                twin = twins.wait_for(run, key)
                if twin is not None:  # one stack, one run: served from the twin's report once it has finished
                    shown.finished(name, f"  {name:12s} waits     for {twin}, which installs the same stack")
                    continue
                restoring = left if run.rollback else ()
                file = Path(files) / f"{name}.json"
                phase_dirs[name] = timed = run_profile.entry_directory(name)  # --harness-phases: its own
                parts = looked[left[0]].reused_parts if len(left) == 1 else ()  # run the other parts, join them
                entry_job.write(RunDirectory.of(ws).job(name), run.job(ws, seed, restoring, progress=file,
                                                                      phases_dir=timed, reused_parts=parts))
                # One report: its own log; several: the process's, copied into each report's when it ends.
                log = open(RunDirectory.of(ws).log(_stem_of(run, left[0]) if len(left) == 1 else name), "w")
                cmd = [sys.executable, "-m", "nox", "-f", str(ws.noxfile), "-s", entry.name,
                       "--envdir", str(ws.envdir)]
                proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ws.root,
                                        env=run.environment(ws, seed),
                                        **lifeline.popen_options(run_directory.held_fds()))
                running[name] = _Started(proc, log, time.perf_counter(), {f: looked[f] for f in left})
                twins.started(name, key)
                whys = {a.why_ran for a in looked.values() if a.why_ran}
                why = f" (ran: {'; '.join(sorted(whys))})" if whys else ""
                what = entry.pin_text if len(restoring) < 2 else (
                    f"restoring the checkpoints of {', '.join(f.name for f in restoring)} in one process")
                shown.started(name, file, f"  {name if run.rollback else entry.name:12s} "
                                          f"started   {what}{why}")
            time.sleep(0.2 if running else 0)
            for name, started in list(running.items()):
                proc = started.proc
                if proc.poll() is None:
                    continue
                started.log.close()
                codes[name] = proc.returncode
                del running[name]
                run = by_name[name]
                _ended(ws, cache, run, started, seed, Path(files) / f"{name}.json")
                run_profile.entry_done(name, time.perf_counter() - started.started, False, phase_dirs.get(name))
                shown_log = _stem_of(run, next(iter(started.attempts)))
                shown.finished(name, f"  {name:12s} finished  in {time.perf_counter() - started.started:5.1f}s "
                                     f"(log: {shown_path(ws.published / f'{shown_log}.log', typed_in)})")
                pending[:0] = twins.finished(name)  # its twins next, served from its report
            shown.refresh()
    return codes


def _ended(ws: Workspace, cache: Path, run: Run, started: _Started, seed: int, progress_file: Path) -> None:
    """A run's session ended: its log split per report (several writers), each report explained when the
    session failed, and kept for the next run."""
    run_files, code = RunDirectory.of(ws), started.proc.returncode
    if len(started.attempts) > 1:
        _split_log(run_files, run.name, [_stem_of(run, f) for f in started.attempts])
    for folder, a in started.attempts.items():
        stem = _stem_of(run, folder)
        if code != 0:
            explain_ending(RunDirectory.of(ws), run.entry, code, progress_file, stem)
        report_cache.keep(ws, cache, a, run.entry, run.environment(ws, seed),
                         run.job(ws, seed, (folder,) if folder else ()).options, run_files.report_file(stem),
                         run_files.log(stem))


def _looked_up(ws: Workspace, cache: Path, run: Run, seed: int, twin: str | None, shown,
               typed_in: Path | None) -> dict[Path | None, report_cache.Attempt]:
    """Each report the run writes, looked up in the cache apart (by its checkpoints folder, None for a run
    restoring none); those reused are written into the run's directory and shown as reused."""
    looked_at, run_files = time.perf_counter(), RunDirectory.of(ws)
    looked = {folder: report_cache.attempt(
        ws, cache, run.entry, run.environment(ws, seed), run.job(ws, seed, folders).options,
        run_files.report_file(stem), run_files.log(stem), ws.options.fresh, twin=twin)
        for folder, folders, stem in _parts(run)}
    for folder, a in looked.items():
        if a.reused is not None:
            stem = _stem_of(run, folder)
            run_profile.entry_done(stem, time.perf_counter() - looked_at, True, None)
            origin = (f"{a.reused.reused.entry}, this run's: the same stack, ran once"
                      if report_cache.of_this_run(a.reused) else a.reused.reused.when)
            shown.finished(stem, f"  {stem if run.rollback else run.entry.name:12s} reused    the report of "
                                 f"{origin} (log: {shown_path(ws.published / f'{stem}.log', typed_in)})")
    return looked


def _parts(run: Run) -> list[tuple[Path | None, tuple[Path, ...], str]]:
    """Each report a run writes, looked up apart: (its checkpoints folder or None, the folders its own run
    would restore, its name)."""
    if not run.rollback:
        return [(None, (), run.name)]
    return [(f, (f,), rollback_runs.report_name(f.name)) for f in run.rollback]


def _stem_of(run: Run, folder: Path | None) -> str:
    return run.name if folder is None else rollback_runs.report_name(folder.name)


def _split_log(run_files: RunDirectory, name: str, stems: list[str]) -> None:
    """One process restored several writers' checkpoints: its log becomes each writer's (said so on its first
    line), where a process of its own per writer wrote it; the shared one is removed."""
    shared = run_files.log(name)
    text = shared.read_text(errors="replace") if shared.exists() else ""
    for stem in stems:
        run_files.log(stem).write_text(
            f"one baseline process restored the checkpoints of {', '.join(stems)} (a report each); its log:\n\n"
            + text)
    shared.unlink(missing_ok=True)


def explain_ending(reports: RunDirectory | Path, entry: matrix.Entry, return_code: int, progress_file: Path,
                   stem: str | None = None) -> None:
    """An entry whose session failed and left a partial report without a reason (nox itself was killed,
    or its session could not say why): the reason from nox's return code and the checks done. A session
    that failed before its suite started (no report, nox not killed) is told from its log instead."""
    run = RunDirectory.at(reports)
    report = run.report_file(stem or entry.name)
    state = progress_io.read(progress_file)
    if return_code < 0:
        problem = ending.explain(return_code, state)
    elif report.exists():
        problem = f"its session ended with exit status {return_code} {ending.where(state)} (see {report.stem}.log)"
    else:
        return
    ending.record(report, stack_entry.entry_info(entry), problem, now(), run.loaded)
