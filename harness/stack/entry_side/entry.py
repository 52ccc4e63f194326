"""One matrix entry in its nox session: install exactly its locked stack, then run the contract suite.

An entry that cannot be installed still leaves a report (status unresolvable, with the reason).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

from harness import devices, env_vars, platforms
from harness.errors import HarnessError
from harness.model import progress, report_io
from harness.model.enums import ReportPart
from harness.model.progress import Phase, Progress
from harness.model.report import now, unresolvable
from harness.run_options import RunOptions
from harness.stack import boundary, paths, project
from harness.stack.environments import envs, harness_source
from harness.stack.entry_side import ending, entry_jobs, multi_device, parts, preinstalled, rollback
from harness.stack.entry_side.entry_jobs import entry_info  # noqa: F401 (harness.stack.entry_side.entry.entry_info)
from harness.stack.pins.locks import check_current, compile_lock, lock_command, lock_path, write_if_missing
from harness.stack.environments.uv_program import uv
from harness.stack.pins.matrix import Entry
from harness.stack.workspace import Workspace
from harness.verdict.run_reports import RunReports

PYTEST_TESTS_FAILED = 1  # pytest.ExitCode.TESTS_FAILED: the suite ran, some checks failed
# A judging run spread over the machine's cores by pytest-xdist, whole modules to a worker (harness.contract.workers):
# for an environment that has pytest-xdist (the tests session's), where nothing else runs beside it.
SPREAD_OVER_CORES = ("-n", "auto", "--dist", "loadfile")


def report_path(reports: Path, entry: Entry, report_name: str | None = None) -> Path:
    return reports / f"{report_name or entry.name}.json"


def checkpoints_folder(report: Path) -> Path:
    """Where the entry writing `report` saves its checkpoints: beside its report, in the run's directory
    (reports/.runs/<run id>/checkpoints/<report name>/), never in the project's own folders."""
    return report.parent / rollback.folder_name(report.stem)


def _keeps_checkpoints(options: RunOptions) -> bool:
    """Whether this run keeps the checkpoints it writes: a run of all checks, or of a selection (`only`)
    holding rollback checks; never a rollback run itself, which reads another entry's."""
    if options.rollback_from:
        return False
    try:
        return rollback.wants_checkpoints(options.only.read_text().split() if options.only else None)
    except OSError:
        return True  # the plugin says the selection cannot be read


def install_entry(session, ws: Workspace, entry: Entry, report_names: Sequence[str | None] = (None,)) -> None:
    """Make the session's virtualenv hold exactly the entry's resolved stack, plus the harness. When it cannot,
    each report the session would have written (`report_names`; None: the entry's) says why."""
    started = now()
    lock = lock_path(ws, entry)
    try:
        if entry.problem:  # the upgrade's plan could not resolve it
            raise HarnessError(entry.problem)
        if not entry.locked and not entry.lock_file:
            _tell_progress(ws.options, Phase.RESOLVING)
            compile_lock(entry, lock)
        elif written := write_if_missing(ws, entry):
            session.log(f"wrote {written}: the {entry.name} stack fully resolved (commit it)")
        elif not lock.exists():
            raise HarnessError(f"lock file {lock} is missing; generate it with `{lock_command(ws)}` "
                               "(or run the upgrade again to resolve its plan).")
        elif entry.locked:
            check_current(ws, entry, lock)
        _tell_progress(ws.options, Phase.INSTALLING)
        installer, itself = uv(), harness_source.install_args(ws)
        if installer and session.venv_backend == "uv":
            _uv_pip(session, installer, ["sync", "--quiet", str(lock), str(harness_requirement(itself, session.virtualenv.location))])
        else:
            session.install("-r", str(lock))
            session.install("--no-deps", *itself)
        if problem := preinstalled.check(session.virtualenv.location, lock):  # a TPU host's JAX on PYTHONPATH
            raise HarnessError(problem)
    except HarnessError as exc:
        for name in report_names:
            write_unresolvable(ws.reports, entry, str(exc), started, name, ws.options.run_id)
        session.error(str(exc).rstrip("."))  # nox ends the reason with its own period
    except Exception as exc:  # nox's CommandFailed: the installer's own output is above
        problem = f"installing {entry.pin_text} failed ({exc}); the installer's output is in the session log."
        for name in report_names:
            write_unresolvable(ws.reports, entry, problem, started, name, ws.options.run_id)
        session.error(problem.rstrip("."))


def _tell_progress(options: RunOptions, phase: Phase) -> None:
    """When `nox -s upgrade` runs this entry, it shows what the entry is doing from its progress file."""
    if options.progress:
        progress.write(options.progress, Progress(phase))


def harness_requirement(itself: list[str], venv: str) -> Path:
    """The harness as a requirements file in the environment, synced together with the lock: one `uv pip
    sync` then leaves an environment that already matches both untouched, where syncing the lock alone
    (which removes the harness, not in it) and installing the harness again rebuilt it every run (~1.2 s
    an entry). uv rebuilds the editable harness when its pyproject.toml changes; a new wheel has a new path."""
    line = f"-e {Path(itself[1]).resolve().as_uri()}" if itself[0] == "-e" else Path(itself[0]).resolve().as_uri()
    path = Path(venv) / "harness-requirement.txt"
    path.write_text(f"# the harness itself, synced with the entry's lock (harness.stack.entry)\n{line}\n")
    return path


def _uv_pip(session, installer: str, args: list[str]) -> None:
    """`uv pip ...` from uv's cache first: an environment that already matches its lock then needs no
    network (and no index round trip); only when the cache lacks something does it go online."""
    env = boundary.child_environment(extra={"VIRTUAL_ENV": session.virtualenv.location})
    # --python names the target: uv prefers UV_PYTHON to VIRTUAL_ENV, and an outer nox session (or a
    # user's shell) may have set it to another environment, which the sync would then rewrite.
    args = [*args, "--python", os.path.join(session.virtualenv.location, "bin", "python")]
    if subprocess.run([installer, "pip", *args, "--offline"], env=env, capture_output=True).returncode == 0:
        return
    session.run_install(installer, "pip", *args, external=True, env={"VIRTUAL_ENV": session.virtualenv.location})


def write_unresolvable(reports: Path, entry: Entry, problem: str, started: str, report_name: str | None = None,
                       run_id: str | None = None) -> None:
    """The report of an entry that cannot run, saying why; `run_id`: the upgrade run it belongs to."""
    report = unresolvable(entry_info(entry), problem, started)
    report_io.write(report_path(reports, entry, report_name), dataclasses.replace(report, run_id=run_id))


def suite_environment(entry: Entry, report: str, venv: str, golden: Path, is_checkout: bool,
                      rollback_reads: bool = True, options: RunOptions = RunOptions(),
                      job: Path | None = None, entry_report: Path | None = None) -> dict[str, str]:
    """What the contract suite's pytest run is told through its environment (is_checkout: whether the
    project judged is this checkout, whose golden/ holds the built-in contracts' values; rollback_reads:
    whether an upgrade's rollback may read this run's checkpoints, so that it keeps them; options: what the
    session was told, harness.stack.boundary — the rest of its environment the pytest process inherits).
    job: the job file of its entry and options (entry_jobs.write_beside), from which the contract side reads
    the report's entry and the JOB group's options (harness.contract.job): none of them as variables.
    entry_report: the entry's report, when `report` is one part of it (its checkpoints are the entry's)."""
    return {
        **({} if job is None else {env_vars.JOB: str(job)}),
        env_vars.REPORT: report,
        env_vars.GOLDEN_DIR: str(golden),
        # A team's project reads the built-in contracts' golden values from the tool unless it recorded its own.
        **({} if is_checkout else {env_vars.BUILTIN_GOLDEN_DIR: str(paths.builtin_golden(options.platform))}),
        # The platform the contracts compile for (--platform); unset, JAX's own choice (the CPU, where it is alone).
        **({"JAX_PLATFORMS": platforms.jax_platforms(options.platform)} if options.platform else {}),
        env_vars.ENTRY: entry.name,
        # Unset: the checks write their checkpoints into pytest's temporary folder, removed after the run.
        **({env_vars.CHECKPOINTS: str(checkpoints_folder(entry_report or Path(report)))}
           if rollback_reads and _keeps_checkpoints(options) else {}),
        # Derandomized unless asked otherwise: identical pins must give identical reports.
        env_vars.PROFILE: options.profile or "ci",
        # Keep bytecode: without it every run recompiles JAX's sources (~2.7 s of each run).
        "PYTHONDONTWRITEBYTECODE": "",
        # JAX's persistent compilation cache (harness.platforms.compilation_cache): a rerun loads the ~600 small
        # executables the suite compiles instead of compiling them again (about half of a cold run).
        # Keys include the jax/jaxlib versions and flags, so a cached executable is the same program.
        "JAX_COMPILATION_CACHE_DIR": platforms.compilation_cache(venv, options.platform),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }


def run_entry(session, ws: Workspace, entry: Entry, pytest_args=(), report_name: str | None = None,
              install: bool = True, rollback_reads: bool = True, whole: bool = False, main_args=()) -> None:
    """Install the entry's stack and run the contract suite, writing reports/<entry>.json (and, when an
    upgrade's rollback may read them, its checkpoints beside it): in parts (harness.stack.entry_side.parts), a
    pytest process each, those the job names as reused left out; in one process when `whole` (a recording).
    A rollback of several writers' checkpoints (its job's rollback_from naming several folders) writes each
    writer's report from one process. `main_args` go to the main pytest process only, not to the data-parallel
    family's (SPREAD_OVER_CORES)."""
    envs.mark_used(session.virtualenv.location, session.name)  # its last use, for pruning (harness.stack.environments.envs)
    writers = list(ws.options.rollback_from)
    names = [rollback.report_name(f.name) for f in writers] if len(writers) > 1 else [report_name]
    if install:
        install_entry(session, ws, entry, names)
    written = [report_path(ws.reports, entry, name) for name in names]
    path = written[0]
    found = project.load(ws)
    _tell_progress(ws.options, Phase.COLLECTING)  # pytest's start and JAX's import take seconds before the first check
    # From the project's root: nox itself runs in the noxfile's folder, which for a team's project is
    # the installed harness/stack/, whose modules (bisect.py) `python -m` would put before the stdlib's.
    if len(writers) > 1:
        part = parts.runs(found, ReportPart.ALL, rollback=True)
        env, _ = _environment(session, ws, entry, found, part, path, path, rollback_reads)
        with session.chdir(found.root), explained(entry, *written, progress_file=ws.options.progress,
                                                  run_id=ws.options.run_id):
            _run_rollbacks(session, entry, found, part, zip(writers, written), env, _basetemp(session, part),
                           pytest_args)
        return
    held = RunReports()  # the merges' reads and writes of the reports, for the ending's question

    def one(part: ReportPart, file: Path) -> None:
        _run_part(session, ws, entry, found, part, file, path, rollback_reads, pytest_args, held, main_args)

    with session.chdir(found.root):
        parts.run(path, parts.of_run(found, ws.options, whole), ws.options.reused_parts, entry_info(entry), one,
                  now(), held)


def _basetemp(session, part: ReportPart) -> str:
    """pytest's temporary files in the entry's environment (in /tmp/pytest-of-<user>/ entries cleaned up each
    other's), one folder a part."""
    return os.path.join(session.virtualenv.location, "pytest-tmp" + ("" if part == ReportPart.ALL else f"-{part}"))


def _environment(session, ws: Workspace, entry: Entry, found: project.Project, part: ReportPart, file: Path,
                 report: Path, rollback_reads: bool) -> tuple[dict[str, str], RunOptions]:
    """The part's pytest environment, its job written beside the entry's environment (the built-in tests kept
    named in it), and the options the job tells; only a part holding built-in contracts writes checkpoints a
    rollback may read."""
    venv = session.virtualenv.location
    options = ws.options if part == ReportPart.OWN else entry_jobs.with_builtin_tests(ws.options, found, venv,
                                                                                       file.stem)
    env = suite_environment(entry, str(file), venv, found.golden, ws.is_checkout,
                            rollback_reads and part != ReportPart.OWN, options,
                            entry_jobs.write_beside(venv, file.stem, entry, options), report)
    if ws.stage is not None and found.golden.is_relative_to(ws.stage):  # a recording's staged copy
        env[env_vars.GOLDEN_SHOWN_AS] = str(ws.root / found.golden.relative_to(ws.stage))
    if part == ReportPart.BUILTIN or not found.own_contracts:
        # The built-in contracts on the one CPU device their values were recorded on, whatever device count the
        # shell exported for the project's own (harness.devices); the data-parallel family's process sets its own.
        env["XLA_FLAGS"] = devices.without_device_count(boundary.variables().get("XLA_FLAGS", ""))
    return env, options


def _run_part(session, ws: Workspace, entry: Entry, found: project.Project, part: ReportPart, file: Path,
              report: Path, rollback_reads: bool, pytest_args, held: RunReports, main_args=()) -> None:
    """One part's pytest process writing `file` (the entry's `report` itself for ALL), and the multi-device
    family's beside it when the part holds the built-in contracts and the run selects the family."""
    part = parts.runs(found, part, bool(ws.options.rollback_from))
    env, options = _environment(session, ws, entry, found, part, file, report, rollback_reads)
    basetemp = _basetemp(session, part)
    # The platform as the workspace was given it: a golden session's --multi-device-platform is not in its env.
    family = (multi_device.planned(found, boundary.variables(), ws.options.multi_device_platform)
              if part != ReportPart.OWN and multi_device.wanted(ws.options.only) else None)
    with explained(entry, file, progress_file=ws.options.progress, run=held, run_id=ws.options.run_id):
        # The multi-device family's process starts first, beside the main run; its output follows the main run's.
        beside = None if family is None else multi_device.Beside(session, family, [
            *suite_arguments(found, contracts=False, part=part), f"--basetemp={basetemp}-{devices.FAMILY}",
            *pytest_args], {**env, env_vars.JOB: str(multi_device.job(session, file, entry, options))}, file)
        failed = None
        try:
            session.run("python", "-m", paths.SUITE_MAIN, *suite_arguments(found, part=part),
                        f"--junitxml={file.with_suffix('.junit.xml')}", f"--basetemp={basetemp}", "-o",
                        f"junit_suite_name={entry.name}", *pytest_args, *main_args, env=env)
        except Exception as exc:  # checks that failed still leave a report the family's results join
            if beside is None or getattr(exc, "return_code", None) != PYTEST_TESTS_FAILED:
                if beside is not None:
                    beside.wait()  # never merged: the main run ended early, as when the family ran after it
                raise
            failed = exc
        if beside is not None:
            beside.finish(held)
        if failed is not None:
            raise failed


def _run_rollbacks(session, entry: Entry, found: project.Project, part: ReportPart, writers, env: dict[str, str],
                   basetemp: str, pytest_args) -> None:
    """The baseline restoring several writers' checkpoints in one process (harness.contract.rollbacks):
    each writer's own report and JUnit file, as a process of its own per writer wrote them."""
    named = []
    for folder, report in writers:
        named += ["--writer", str(folder), str(report), str(report.with_suffix(".junit.xml"))]
    session.run("python", "-m", "harness.contract.rollbacks", *named, "--", *suite_arguments(found, part=part),
                f"--basetemp={basetemp}", "-o", f"junit_suite_name={entry.name}", *pytest_args, env=env)


@contextlib.contextmanager
def explained(entry: Entry, *reports: Path, progress_file: Path | None = None, run: RunReports | None = None,
              run_id: str | None = None):
    """When the suite's process ends early (killed, crashed, interrupted), say why in its reports (those not
    complete): a killed pytest leaves a partial report with no reason in it. nox's failure carries the
    return code; the entry's progress file (when an upgrade runs it) how far it got; `run_id`: the upgrade run
    a report written for a suite that left none belongs to."""
    started = now()
    try:
        yield
    except Exception as exc:
        code = getattr(exc, "return_code", None)  # nox.command.CommandFailed's
        if code is not None:
            state = progress.read(progress_file) if progress_file else None
            for report in reports:
                ending.record(report, entry_info(entry), ending.explain(code, state), started, run, run_id)
        raise


def suite_arguments(found: project.Project, contracts: bool = True, part: ReportPart = ReportPart.ALL) -> list[str]:
    """pytest's arguments for the project's contracts of `part`: the harness's own settings (not the project's
    pytest configuration), the plugin, the project's import path, then the contract directories (unless
    `contracts` is false: the multi-device family's process names its own module). The built-in part runs
    without the project's import path and conftest files (harness.stack.entry_side.parts says why)."""
    args = ["-c", str(paths.SUITE_INI), "--rootdir", str(found.root), "-q", "-p", "no:randomly",
            "-p", "harness.contract.plugin"]
    team = part != ReportPart.BUILTIN
    if found.pythonpath and team:
        # pytest reads a `paths` setting with shlex.split: a root with a space in it must be quoted.
        args += ["-o", "pythonpath=" + shlex.join(str(p) for p in found.pythonpath)]
    if found.own_contracts and team:  # the plugin tells a project's families from the built-in ones
        args += ["--harness-own-contracts", os.pathsep.join(str(p) for p in found.own_contracts)]
    else:
        # The built-in contracts, named by module, anchor pytest's conftest search at the working directory:
        # the project's own tests*/conftest.py would run inside the contracts' run.
        args += ["--noconftest"]
    return args + (found.suite_of(part) if contracts else [])
