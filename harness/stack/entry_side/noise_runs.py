"""Before `golden` records: the same contracts recorded again under each compilation that rounds differently
(harness.numerical_noise.PERTURBATIONS: the project's own contracts, for their numerical noise) and on each host
this machine can emulate (harness.host_emulation.EMULATIONS: every contract the recording records, for its host
noise), each into a folder of its own, so that the recording can keep every value's noise beside it.

The perturbations run the project's own contracts only: the built-in ones are judged at their golden ulps on
every stack (their values are a few operations each, where a stack's rounding moves nothing beyond them). A run
that fails, or that the stack's XLA refuses (a flag it does not know), records nothing for the values it did not
reach: those are then judged at their golden ulps on every stack (every host), and the recording says which. The
data-parallel family's process is not emulated (its values held on every emulated host: docs/tolerances.md), and
nothing is on an accelerator (`--platform tpu`): a chip's values do not pass through what the emulations change.

The runs are independent processes, each reading and writing its own folder: they run side by side, one a core
(record_noise), on an accelerator one at a time (the chip is one process's).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import os
import shutil
from pathlib import Path

from harness import golden_layout, numerical_noise, platforms, run_options
from harness.errors import HarnessError
from harness.host_emulation import LEFT_OUT
from harness.model import report_io
from harness.model.enums import BuiltinMode, Status
from harness.stack import boundary, paths, project
from harness.stack.entry_side import emulated, entry as stack_entry, host_map, multi_device
from harness.stack.pins.matrix import Entry
from harness.stack.workspace import Workspace

FOLDER = "golden-noise"  # in the entry's environment: each perturbation's recording, made anew each time
HOST_FOLDER = "golden-host-noise"  # ... each emulated host's
LOG = "run.log"  # in each run's folder: what its pytest printed
HERE_FOLDER = "golden-this-host"  # `golden --measure-host`: this host's own recording, to measure against


def folders(venv: str) -> dict[str, Path]:
    """Each perturbation's recording folder in the environment `venv`."""
    return {p.name: Path(venv) / FOLDER / p.name for p in numerical_noise.PERTURBATIONS}


def _environment(session, ws: Workspace, entry: Entry, folder: Path) -> dict[str, str]:
    """A run's variables recording into `folder` (its report there too), on this host as it is."""
    return stack_entry.suite_environment(entry, str(folder / "report.json"), session.virtualenv.location, folder,
                                         ws.is_checkout, rollback_reads=False, options=ws.options)


def _run_into(session, found: project.Project, folder: Path, env: dict[str, str], *flags: str) -> None:
    """The contracts of `found` recorded into `folder` under `env`, their output in folder/run.log (LOG); nox's
    failure raised when one does not pass (a run whose map left every check out has none to pass). From the
    project's root, where the caller has gone (once for runs side by side: a chdir is the whole process's)."""
    leaves_out = any(flag.startswith("--harness-except=") for flag in flags)
    with open(folder / LOG, "w") as out:
        session.run("python", "-m", paths.SUITE_MAIN, *stack_entry.suite_arguments(found),
                    f"--basetemp={Path(session.virtualenv.location) / 'pytest-tmp'}-{folder.name}",
                    "--harness-record-golden", *flags, "-p", "no:cacheprovider", env=env, stdout=out, stderr=out,
                    success_codes=[0, multi_device.NO_CHECKS] if leaves_out else [0])


def _record(session, found: project.Project, folder: Path, env: dict[str, str], label: str, *flags: str) -> bool:
    """The contracts of `found` recorded into `folder` (made anew) under `env`; whether it holds a recording. A run
    that fails keeps what its checks recorded before failing, and says so."""
    log = folder / LOG
    try:
        _run_into(session, found, folder, env, "--harness-observe-noise", *flags)
    except Exception as exc:  # nox's CommandFailed: what the checks recorded before failing is kept
        session.log(f"golden: {label}: the contracts did not all pass ({getattr(exc, 'reason', exc)}); values they "
                    f"did not reach get none (log: {log})")
    recorded = any(folder.glob("*.json"))
    if not recorded and (folder / LEFT_OUT).is_file():
        session.log(f"golden: {label}: nothing to record, the measured map left every check out")
    return recorded


def _fresh(folder: Path) -> Path:
    """The folder a run records into, made anew (nothing of an earlier recording read as this one's)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


QUICK_FOLDER = "golden-quick-pass"  # a team's own contracts recorded once, before any noise is measured
_LOG_TAIL = 40  # lines of a failed quick pass's log said


def quick_pass(session, ws: Workspace, entry: Entry) -> None:
    """A team's own contracts recorded once, natively, before the runs that measure their noise: one that fails
    stops the recording here (HarnessError with its log's tail), not after every perturbed and emulated run has
    failed the same way. Nothing without contracts of the project's own (its contracts/ folder may hold none)."""
    if not project.load(ws).has_own_tests:
        return
    found = project.load(ws.with_options(run_options.RunOptions(builtin=BuiltinMode.OFF.value)))
    folder = _fresh(Path(session.virtualenv.location) / QUICK_FOLDER)
    log = folder / LOG
    session.log("golden: your contracts once, before their noise is measured")
    try:
        with session.chdir(found.root):
            _run_into(session, found, folder, _environment(session, ws, entry, folder))
    except Exception as exc:  # nox's CommandFailed
        tail = "\n  ".join(log.read_text(errors="replace").splitlines()[-_LOG_TAIL:]) if log.is_file() else ""
        raise HarnessError(f"golden: your contracts do not all pass on the baseline "
                           f"({getattr(exc, 'reason', exc)}; the whole log: {log}); fix them and record again. "
                           f"Nothing was recorded, and no noise measured:\n  {tail}") from None


@dataclasses.dataclass(frozen=True)
class NoiseRun:
    """One recording that measures noise (a perturbation's or an emulated host's), into a folder of its own under
    variables of its own; `argument`: what the real recording is told of it, when it recorded something."""

    label: str  # in the log: "under --xla_cpu_...", "on blas-haswell"
    found: project.Project  # the contracts it runs
    folder: Path
    env: dict[str, str]
    flags: tuple[str, ...]
    argument: str
    compiles: bool = True  # XLA's flags differ from the native run's (they are in the compilation cache's key)
    size: float = 0.0  # the checks it runs, for the order: an emulated host's selection (every check: inf); a
    # perturbation's 0, its project's own contracts being a part of every emulated run's


def perturbed_runs(session, ws: Workspace, entry: Entry) -> list[NoiseRun]:
    """The project's own contracts under each perturbation (its environment already installed). None without
    contracts of the project's own (this checkout, or a team recording only the built-in ones)."""
    if not project.load(ws).has_own_tests:
        return []
    found = project.load(ws.with_options(run_options.RunOptions(builtin=BuiltinMode.OFF.value)))
    runs = []
    for perturbation in numerical_noise.PERTURBATIONS:
        folder = _fresh(folders(session.virtualenv.location)[perturbation.name])
        env = _environment(session, ws, entry, folder)
        env["XLA_FLAGS"] = numerical_noise.with_flag(boundary.variables().get("XLA_FLAGS", ""), perturbation)
        session.log(f"golden: measuring numerical noise: your contracts compiled with {perturbation.xla_flag}")
        runs.append(NoiseRun(f"under {perturbation.xla_flag}", found, folder, env, (),
                             f"--harness-noise-from={folder}"))
    return runs


def side_by_side(ws: Workspace) -> int:
    """How many noise runs at once: one a core on the CPU (each is a process of its own, reading and writing only
    its folder); as many as an upgrade's entries elsewhere: one on an accelerator (platforms.entries_at_once), one
    on a TPU host whose JAX may take the chip (boundary.one_process_at_a_time)."""
    platform = ws.options.platform
    if platform is None and boundary.one_process_at_a_time():
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return platforms.entries_at_once(platform, cores)


def _chains(runs: list[NoiseRun]) -> list[list[NoiseRun]]:
    """The runs as chains, each run in turn: one chain of the runs that keep the native run's XLA flags (the BLAS
    kernels: the same compilation cache keys, so the first compiles and the others load, where side by side each
    would compile the same programs, and JAX writes a cache file in place), one chain a run of its own flags;
    those that compile anew first, the larger first (so the last to end is not a long one started late), the
    plan's order within a chain and among equals."""
    shared = [run for run in runs if not run.compiles]
    chains = [[run] for run in runs if run.compiles] + ([shared] if shared else [])
    return sorted(chains, key=lambda chain: (not chain[0].compiles, -sum(run.size for run in chain)))


def record(session, runs: list[NoiseRun], at_once: int) -> list[str]:
    """The runs, `at_once` chains of them side by side (_chains; each chain as soon as one ends), from the
    project's root; the arguments of those that recorded, in the runs' order."""
    if not runs:
        return []
    chains = _chains(runs)
    at_once = max(1, min(at_once, len(chains)))
    if at_once > 1:
        session.log(f"golden: the {len(runs)} noise runs {at_once} at a time (this machine's cores; those that "
                    "share the native run's compiled programs one after another)")
    roots = {run.found.root for run in runs}
    if len(roots) != 1:
        raise ValueError(f"the noise runs of one recording are of one project, not of {sorted(map(str, roots))}")

    def one_chain(chain: list[NoiseRun]) -> list[bool]:
        return [_record(session, run.found, run.folder, run.env, run.label, *run.flags) for run in chain]

    with session.chdir(roots.pop()), concurrent.futures.ThreadPoolExecutor(at_once) as pool:
        ended = list(pool.map(one_chain, chains))
    recorded = {id(run): held for chain, held_each in zip(chains, ended) for run, held in zip(chain, held_each)}
    return [run.argument for run in runs if recorded[id(run)]]


def record_noise(session, ws: Workspace, entry: Entry) -> list[str]:
    """Each perturbation's and each emulated host's recording, side by side up to the cores (side_by_side); the
    real recording's --harness-noise-from and --harness-host-noise-from arguments for those that recorded."""
    return record(session, perturbed_runs(session, ws, entry) + emulated_runs(session, ws, entry), side_by_side(ws))


# The baseline's judging runs, whose checks name the golden values they compared (a recording's do not): the
# upgrade's (reports/<entry>.json, name None) and `nox -s tests`' (reports/tests-baseline.json).
JUDGED_REPORTS = (None, "tests-baseline")


def _judged(ws: Workspace, entry: Entry):
    """The newest complete report of a baseline run that judged golden values (each read only until one is); None
    when there is none."""
    candidates = [stack_entry.report_path(ws.reports, entry, name) for name in JUDGED_REPORTS]
    for path in sorted((p for p in candidates if p.is_file()), key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            report = report_io.load(path)
        except (OSError, ValueError, HarnessError):
            continue  # unreadable: the map is taken from another, or none
        if report.status == Status.COMPLETE and any(
                c.label.startswith(host_map.GOLDEN_LABEL) for check in report.checks for c in check.comparisons):
            return report
    return None


def _measured_map(ws: Workspace, entry: Entry, found: project.Project) -> tuple[list, dict, int] | None:
    """The checks of the baseline's last judging run, the dimensions each one's values moved when recorded
    (harness.stack.entry_side.host_map: the project's golden values, its copies of the built-in families and the
    tool's own) and this commit's turn; None without such a report (every check runs on every emulated host)."""
    last = _judged(ws, entry)
    if last is None:
        return None
    checks = host_map.emulable(last.checks)
    directories = [found.golden, found.golden / golden_layout.BUILTIN_COPIES]
    if not ws.is_checkout:
        directories.append(paths.builtin_golden(ws.options.platform))
    return checks, host_map.sensitive(checks, *directories), host_map.turn(found.root)


def emulated_runs(session, ws: Workspace, entry: Entry) -> list[NoiseRun]:
    """The contracts the recording records, on each host this machine can emulate (its environment installed). With
    a report of the baseline's last judging run, each host records the checks the measured map says it moves, this
    commit's share of the others and every check the report does not hold (a new one); the rest are left out
    (host_emulation.LEFT_OUT in its folder, which the recording reads)."""
    found = project.load(ws)
    platform = ws.options.platform or platforms.CPU
    if platform != platforms.CPU:
        session.log(f"golden: no host noise measured on {platform}: a chip's values pass through neither OpenBLAS "
                    "nor XLA's CPU code, which the emulated hosts change")
        return []
    emulations = emulated.applicable(session)
    mapped = _measured_map(ws, entry, found) if emulations else None
    runs = []
    for emulation in emulations:
        folder = _fresh(Path(session.virtualenv.location) / HOST_FOLDER / emulation.name)
        env = emulated.environment(session, ws, entry, emulation, folder / "report.json", folder)
        session.log(f"golden: measuring host noise: {emulation.name} ({emulation.why})")
        flags, size = (), math.inf
        if mapped is not None:
            checks, moved, turn = mapped
            selection = host_map.select(checks, moved, emulation.dimension.value, turn)
            session.log(f"golden: {emulation.name}: {selection.said()}, and any check the baseline's last run did "
                        "not hold")
            flags = (f"--harness-except={host_map.write_ids(host_map.left_out(checks, selection), folder / LEFT_OUT)}",)
            size = len(selection.checks)
        runs.append(NoiseRun(f"on {emulation.name}", found, folder, env, flags,
                             f"--harness-host-noise-from={emulation.dimension}={folder}",
                             compiles=emulation.blas is None, size=size))  # a BLAS kernel loads the native programs
    return runs


def record_here(session, ws: Workspace, entry: Entry) -> Path:
    """`golden --measure-host`: the contracts the recording records, recorded natively on this host into a folder
    of their own (made anew), to measure against the golden values (harness.contract.host_measure)."""
    found = project.load(ws)
    folder = _fresh(Path(session.virtualenv.location) / HERE_FOLDER)
    session.log("golden --measure-host: the contracts recorded on this host, to measure against the golden values")
    with session.chdir(found.root):
        recorded = _record(session, found, folder, _environment(session, ws, entry, folder), "on this host")
    if not recorded:
        raise HarnessError("golden --measure-host: this host recorded no value (see the log above); nothing was "
                           "measured.")
    return folder
