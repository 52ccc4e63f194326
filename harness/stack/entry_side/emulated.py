"""The contracts run on hosts this machine emulates (harness.host_emulation): which ones, and a run on each.

`golden` records on every applicable emulation, for each value's host noise (harness.stack.entry_side.noise_runs);
`nox -s tests` runs the built-in suite on one emulation of each dimension besides the native run (`tested`), so
that a golden value that holds on one CPU only, or a statement that does not hold on another, fails in CI and
not on a user's machine: the checks the recording measured that host moving, and a rotating share of the others
(harness.stack.entry_side.host_map).
"""

from __future__ import annotations

import platform
from pathlib import Path

from harness import host_emulation
from harness.model import host as hosts, report_io
from harness.stack import boundary, paths, project
from harness.stack.entry_side import entry as stack_entry, host_map
from harness.stack.pins.matrix import Entry
from harness.stack.workspace import Workspace

# What the entry's Python says of this machine: the BLAS kernel it runs (an emulation of that kernel is no other host).
_BLAS = "from harness.contract.environment import blas_kernel; print(blas_kernel() or '')"


def this_host(session) -> tuple[hosts.Host, frozenset[str]]:
    """This machine as the entry's contracts will name it (the BLAS kernel read in the entry's Python, under the
    user's own OPENBLAS_CORETYPE), and its CPU's flags: which emulations are other hosts it can run."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:  # not Linux: no flags, no emulation
        cpuinfo = ""
    kernel = (session.run("python", "-c", _BLAS, silent=True, log=False) or "").strip() or None
    flags = hosts.cpu_fields(cpuinfo).get("flags", "")
    return (hosts.describe(cpuinfo, platform.machine(), boundary.variables().get("XLA_FLAGS", ""), kernel),
            frozenset(flags.split()))


def applicable(session) -> list[host_emulation.Emulation]:
    """The emulations this machine can run that are another host than its own."""
    return host_emulation.applicable(*this_host(session))


def tested(session) -> list[host_emulation.Emulation]:
    """One emulation of each dimension this machine can emulate (the first of each): what `nox -s tests` runs."""
    chosen: dict[hosts.Dimension, host_emulation.Emulation] = {}
    for emulation in applicable(session):
        chosen.setdefault(emulation.dimension, emulation)
    return list(chosen.values())


def environment(session, ws: Workspace, entry: Entry, emulation: host_emulation.Emulation, report: Path,
                golden: Path) -> dict[str, str]:
    """A suite run's variables on `emulation`, writing `report` and reading (or recording into) `golden`."""
    env = stack_entry.suite_environment(entry, str(report), session.virtualenv.location, golden, ws.is_checkout,
                                        rollback_reads=False, options=ws.options)
    return {**env, **emulation.environment({**boundary.variables(), **env})}


def run_tested(session, ws: Workspace, entry: Entry, native: Path, spread=()) -> None:
    """The project's contracts on each host `tested` names, each writing reports/tests-<emulation>.json: of the
    checks the native run's report (`native`) holds, those the host can change and this turn's share of the others
    (harness.stack.entry_side.host_map), the report and the golden files read once for all of them. `spread`: pytest
    arguments that spread each run over the cores (stack_entry.SPREAD_OVER_CORES)."""
    found = project.load(ws)
    checks = host_map.emulable(report_io.load(native).checks)
    measured, turn = host_map.sensitive(checks, found.golden), host_map.turn(found.root)
    for emulation in tested(session):
        selection = host_map.select(checks, measured, emulation.dimension.value, turn)
        run_on(session, ws, entry, emulation, stack_entry.report_path(ws.reports, entry, f"tests-{emulation.name}"),
               selection, spread)


def run_on(session, ws: Workspace, entry: Entry, emulation: host_emulation.Emulation, report: Path,
           selection: host_map.Selection | None = None, spread=()) -> None:
    """The project's contracts (the data-parallel family's process aside) judged on `emulation`, writing
    `report`; fails the session where a check fails, as the native run does. Given a `selection`, only its checks."""
    found = project.load(ws)
    env = environment(session, ws, entry, emulation, report, found.golden)
    session.log(f"the contracts on another host: {emulation.name} ({emulation.why})")
    only = []
    if selection is not None:
        session.log(f"{emulation.name}: {selection.said()}")
        chosen = host_map.write(selection, Path(session.virtualenv.location) / "host-map" / f"{emulation.name}.txt")
        only = [f"--harness-only={chosen}"]
    with session.chdir(found.root):
        session.run("python", "-m", paths.SUITE_MAIN, *stack_entry.suite_arguments(found),
                    f"--basetemp={Path(session.virtualenv.location) / 'pytest-tmp'}-{emulation.name}",
                    "-p", "no:cacheprovider", *only, *spread, env=env)
