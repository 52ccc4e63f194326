"""--harness-phases: where one contract run's time goes, printed when the run ends.

  nox -s baseline -- --harness-phases        (or any pytest run of the contracts with the option)

Top-level phases, wall and CPU seconds: start-up (the interpreter, pytest and its plugins), the run's
set-up (the recorder and its first partial report, which imports JAX to describe the platform),
collection (the contract modules and what they import), the checks, and the end (the final report,
the terminal summary, temporary directories). The checks are split by wall time into: JAX tracing,
lowering and compiling, persistent-cache loads included (jax.monitoring's compile events, nested
traces counted once); Hypothesis drawing examples (its own per-draw timers); the rest of Hypothesis's
engine (everything a property spends outside its body, discarded examples included); and the contract
bodies (running the computations, the NumPy references, the comparisons). Report writing (every write
of the report) is shown apart; it falls within set-up, the checks and the end. Below the table, each
contract module's checks (setup, call and teardown) with their wall and CPU seconds and the JAX programs
they traced and compiled or loaded, costliest first: where to look when a module grows.

Registered by the plugin as a plugin of its own, only when asked for: a run without the option pays nothing.
An upgrade run with `--harness-phases` asks through its entries' jobs instead (their phases directory): the
same phases are then written there as data (harness.model.phase_times) for the upgrade's whole-run profile,
not printed.
"""

from __future__ import annotations

import functools
import math
import sys
import time

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

from harness import process_age
from harness.model import phase_times
from harness.model.enums import ReportPart
from harness.model.phase_times import Timing

if TYPE_CHECKING:
    from harness.contract.session import Recorder

_COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
                   "/jax/core/compile/backend_compile_duration")
_CACHE_LOAD_EVENT = "/jax/compilation_cache/cache_retrieval_time_sec"
_LISTENING: list[Phases] = []  # jax.monitoring keeps its listeners for the process: one forwards to these
_REGISTERED: list[bool] = []


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _process_age() -> float | None:
    """Seconds since this process started, for the start-up phase; None elsewhere than Linux."""
    return process_age.seconds()


def _union(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Seconds covered by the intervals within [start, end], overlaps (nested traces) counted once."""
    total, reach = 0.0, start
    for a, b in sorted(intervals):
        a, b = max(a, reach), min(b, end)
        if b > a:
            total, reach = total + b - a, b
    return total


def _cell(seconds: float | None) -> str:
    if seconds is None:
        return " " * 8
    return f" {'?':>7s}" if math.isnan(seconds) else f" {seconds:7.2f}"


def register(config, recorder: Callable[[], Recorder | None], directory: Path | None = None) -> None:
    """The run's Phases as a plugin: printed with --harness-phases, written as data into `directory` (an
    upgrade's --harness-phases: the entry's job names it), from the main suite's run or the multi-device
    family's."""
    source = phase_times.Source.MULTI_DEVICE if config.getoption("--harness-multi-device") else phase_times.Source.SUITE
    report = config.getoption("--harness-report")  # a part of the entry's report: its own file, beside the other's
    part = ReportPart.of_report(Path(report).name) if report else ReportPart.ALL
    config.pluginmanager.register(Phases(recorder, printed=config.getoption("--harness-phases"),
                                         directory=directory, source=source, part=part),
                                  "harness-phases")


def _known(timing: Timing) -> Timing:
    """`timing` with NaN (not known on this system) as None: JSON has no NaN."""
    def known(x: float | None) -> float | None:
        return None if x is None or math.isnan(x) else x

    return Timing(timing.name, known(timing.wall_s), known(timing.cpu_s), timing.note,
                  [_known(p) for p in timing.parts])


@dataclass
class ModuleCost:
    """One contract module's checks: how many, their seconds and the JAX programs they made."""
    checks: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    programs: int = 0  # compiled, or loaded from the persistent cache: each traced and lowered first

    def add(self, wall_s: float, cpu_s: float, programs: int) -> None:
        self.checks += 1
        self.wall_s += wall_s
        self.cpu_s += cpu_s
        self.programs += programs


def _on_duration(event: str, duration: float, **_) -> None:
    for phases in _LISTENING:
        phases.jax_event(event, duration)


class Phases:
    """The marks of one run and what happened between them; prints the table at unconfigure."""

    def __init__(self, recorder: Callable[[], Recorder | None], printed: bool = True, directory: Path | None = None,
                 source: phase_times.Source = phase_times.Source.SUITE, part: ReportPart = ReportPart.ALL):
        self.recorder = recorder  # the run's recorder, when it has one: its report writing is shown
        self.printed = printed  # --harness-phases: the table at the end of the run
        self.directory, self.source = directory, source  # the job's phases directory: the phases as data, for an upgrade
        self.part = part  # the part of the entry's report this run writes (its phases file is the part's)
        age = _process_age()
        self.started_at = time.time() - age if age is not None else None
        self.marks: dict[str, tuple[float, float]] = {}
        self.mark("configured")
        # CPU time counts from the process's start; its wall start is known on Linux only.
        self.marks["start"] = (self.marks["configured"][0] - age if age is not None else math.nan, 0.0)
        self.compiling: list[tuple[float, float]] = []
        self.compiles = self.cache_loads = self.examples = self.items = 0
        self.property_s = self.bodies_s = self.draws_s = self.drawn_in_bodies_s = 0.0
        self.draw_timers = True  # Hypothesis's per-draw timers were readable
        self.modules: dict[str, ModuleCost] = {}  # by contract module file name
        self.listening = False

    def mark(self, name: str) -> None:
        self.marks[name] = _now()

    # -- JAX ------------------------------------------------------------------------------------------
    def listen(self) -> None:
        """Follow JAX's compile events once JAX is imported (the run's set-up imports it)."""
        if self.listening or "jax" not in sys.modules:
            return
        import jax.monitoring

        if not _REGISTERED:
            jax.monitoring.register_event_duration_secs_listener(_on_duration)
            _REGISTERED.append(True)
        _LISTENING.append(self)
        self.listening = True

    def jax_event(self, event: str, duration: float) -> None:
        if event in _COMPILE_EVENTS:
            end = time.perf_counter()
            self.compiling.append((end - duration, end))
            self.compiles += event == _COMPILE_EVENTS[2]
        elif event == _CACHE_LOAD_EVENT:
            self.cache_loads += 1

    # -- hooks ----------------------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionstart(self, session):
        try:
            return (yield)
        finally:
            self.listen()
            self.mark("set up")

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session):
        self.listen()
        self.items = len(session.items)
        self.mark("collected")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        programs, (wall, cpu) = self.compiles, _now()
        try:
            return (yield)
        finally:
            now_wall, now_cpu = _now()
            self.modules.setdefault(Path(str(item.path)).name, ModuleCost()).add(
                now_wall - wall, now_cpu - cpu, self.compiles - programs)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        handle = getattr(getattr(item, "obj", None), "hypothesis", None)
        if handle is None:
            return (yield)
        inner = handle.inner_test
        handle.inner_test = self._timed(inner)
        started = time.perf_counter()
        try:
            return (yield)
        finally:
            self.property_s += time.perf_counter() - started
            handle.inner_test = inner

    def _timed(self, inner):
        @functools.wraps(inner)
        def timed(*args, **kwargs):
            before, started = self._drawn(), time.perf_counter()
            self.examples += 1
            try:
                return inner(*args, **kwargs)
            finally:
                self.bodies_s += time.perf_counter() - started
                after = self._drawn()
                self.draws_s += after
                self.drawn_in_bodies_s += after - before
        return timed

    def _drawn(self) -> float:
        """Seconds this example has spent drawing so far (Hypothesis's own timers; 0 when unreadable)."""
        try:
            from hypothesis.control import current_build_context

            return math.fsum(current_build_context().data.draw_times.values())
        except Exception:  # an internal of Hypothesis: the table then says the split is unknown
            self.draw_timers = False
            return 0.0

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        self.mark("checked")

    def pytest_unconfigure(self, config):
        self.mark("ended")
        if self in _LISTENING:
            _LISTENING.remove(self)
        if self.printed:
            print("\n" + "\n".join(self.table() + self.module_table()), flush=True)
        if self.directory:
            self.write(self.directory)

    def write(self, directory: Path) -> None:
        """The phases as data, for the upgrade's profile (an unknown wall time, NaN in the table, as None)."""
        rows = [_known(t) for t in self.timings()]
        total = next(t for t in rows if t.name == "total")
        phase_times.write(directory, phase_times.ProcessPhases(self.source, self.started_at, time.time(),
                                                               total.cpu_s or 0.0, rows, part=self.part))

    # -- the table ------------------------------------------------------------------------------------
    def _span(self, start: str, end: str) -> tuple[float, float]:
        (w0, c0), (w1, c1) = self.marks[start], self.marks[end]
        return w1 - w0, c1 - c0

    def timings(self) -> list[Timing]:
        """The run's phases in order, the checks split into their parts, then the total and report writing."""
        rows: list[Timing] = []
        steps = [("start-up (Python, pytest, plugins)", "start", "configured"),
                 ("set-up (recorder, first report, JAX import)", "configured", "set up"),
                 ("collection (contract modules and their imports)", "set up", "collected"),
                 (f"checks ({self.items} items)", "collected", "checked"),
                 ("end (final report, summary, temporary files)", "checked", "ended")]
        for label, start, end in steps:
            wall, cpu = self._span(start, end)
            rows.append(Timing(label, wall, cpu, parts=self._checks(wall) if start == "collected" else []))
        wall, cpu = self._span("start", "ended")
        rows.append(Timing("total", wall, cpu))
        recorder = self.recorder()
        if recorder is not None:
            rows.append(Timing("report writing (every write, within the phases above)", recorder.writing_s))
        return rows

    def table(self) -> list[str]:
        lines = ["upgrade-harness: where this contract run's time went (--harness-phases; seconds)",
                 f"{'phase':58s} {'wall':>7s} {'cpu':>7s}"]
        for row in self.timings():
            for shown in (row, *row.parts):
                label = shown.name if shown is row else f"  {shown.name}"
                lines.append(f"{label:58s}{_cell(shown.wall_s)}{_cell(shown.cpu_s)}  {shown.note}".rstrip())
        return lines

    def module_table(self) -> list[str]:
        """Each contract module's checks, costliest (CPU) first; nothing when no check ran."""
        if not self.modules:
            return []
        lines = ["", f"{'per contract module (its checks: setup, call, teardown)':58s} {'wall':>7s} {'cpu':>7s}"]
        for name, cost in sorted(self.modules.items(), key=lambda kv: (-kv[1].cpu_s, kv[0])):
            lines.append(f"{name:58s}{_cell(cost.wall_s)}{_cell(cost.cpu_s)}  "
                         f"checks: {cost.checks}, JAX programs: {cost.programs}")
        return lines

    def _checks(self, checks_wall: float) -> list[Timing]:
        start, end = self.marks["collected"][0], self.marks["checked"][0]
        compiling = _union(self.compiling, start, end)
        outside = max(0.0, self.property_s - self.bodies_s)  # a property's time outside its body
        drawn_outside = self.draws_s - self.drawn_in_bodies_s
        engine = max(0.0, outside - drawn_outside)
        bodies = max(0.0, checks_wall - compiling - self.draws_s - engine)
        draws = self.draws_s if self.draw_timers else None
        return [
            Timing("JAX tracing, lowering, compiling", compiling,
                   note=f"{self.compiles} compiles, {self.cache_loads} loaded from the persistent cache"),
            Timing("Hypothesis: drawing examples", draws,
                   note=f"{self.examples} examples" if self.draw_timers else "unknown: Hypothesis's draw timers unreadable"),
            Timing("Hypothesis: the rest of its engine", engine),
            Timing("contract bodies (computations, references, comparisons)", bodies),
        ]
