"""One pytest run of the contract suite: the checks recorded so far, and the report they make.

Imported by the plugin only in a harness run, or when a test first asks for the `check` or `timing`
fixture: this is where NumPy and Hypothesis come in.

The report is written when the run starts (partial), after checks at most every few seconds
(partial), and at the end (complete), so an interrupted or crashed run leaves a partial report.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path


from harness import __version__
from harness.contract import environment, families, hypothesis_profiles, job, options, replay, tolerances, workers
from harness.contract.golden import GoldenProblem, GoldenStore
from harness.contract.warning_log import WarningLog
from harness.model import report_io
from harness.model.enums import CheckKind, Status
from harness.model.report import (
    SCHEMA_VERSION, STACK_VERSION_KEYS, CheckRecord, EntryInfo, Environment, HypothesisSettings, JaxPlatform,
    PerformanceRecord, Report, Summary, Timings, now,
)
from harness.model.host import Host

# How often a running suite refreshes its partial report (what survives a crash). Each write encodes
# the whole report (about 0.2 s at the end of a run): every 3 s that was ~15% of a suite's time.
# Live progress goes through the small progress file instead (harness.contract.progress).
PROGRESS_INTERVAL_S = 30.0
# The JAX platform of a report written before the contracts were collected (JAX's backend not started yet).
NOT_ASKED = JaxPlatform(backend=None, error="not asked yet: the run ended before its contracts were collected")


class Recorder:
    """Everything one pytest run of the contract suite knows about its checks."""

    def __init__(self, config):
        self.config = config
        self.started = time.perf_counter()
        self.started_at = now()
        # A pytest-xdist worker writes no report: the controller writes one of every worker's checks (.workers).
        self.report_path = None if workers.is_worker(config) else config.getoption("--harness-report")
        self.root = root = Path(str(config.rootpath))
        self.store = GoldenStore(config.getoption("--harness-golden-dir") or root / "golden",
                                 config.getoption("--harness-builtin-golden-dir"),
                                 noise_from=config.getoption("--harness-noise-from") or (),
                                 host_noise_from=options.host_noise_from(config),
                                 shown_as=config.getoption("--harness-golden-shown-as"))
        self.recording = bool(config.getoption("--harness-record-golden"))
        # A recording that may change values: it records a statement the baseline breaks as a departure.
        self.accepting = self.recording and bool(config.getoption("--harness-accept-changes"))
        self.checks: dict[str, CheckRecord] = {}  # by pytest node id
        self.performance: dict[str, PerformanceRecord] = {}
        self.warnings = WarningLog()
        self.examples_run = 0
        self.last_write = 0.0
        self.writing_s = 0.0  # every write of the report, for --harness-phases
        self.exit_status: int | None = None
        self.own_contracts = options.own_contracts(config)
        self.own_families: set[str] = set()
        # Only a harness run loads the harness's Hypothesis profile; the plugin, installed beside a
        # team's own tests, leaves their other runs alone.
        self.harness_run = options.harness_run(config)
        self.hypothesis = hypothesis_profiles.activate(config) if self.harness_run else None
        self.environment: Environment | None = None
        self.contracts_collected = False  # every contract module imported: JAX's backend may start (_environment)
        self.selection = options.selection(config)
        self.replay = replay.examples(config)  # falsifying examples of another entry to replay, by check id
        self.job = job.current()  # None: a run by hand
        self.run_id = job.options(config).run_id  # the upgrade run this one belongs to

    def collected(self, items) -> None:
        """The project's own families among the items collected; the golden store told them (an earlier copy
        of a built-in family of one of their names is theirs now)."""
        self.own_families |= families.own(items, self.own_contracts,
                                          families.GoldenPlaces(self.store.directory, self.store.fallback))
        self.store.own_names = frozenset(self.own_families)
        self.contracts_collected = True

    def add(self, record: CheckRecord) -> None:
        self.checks[record.nodeid] = record
        if record.examples is not None:
            self.examples_run += record.examples
        self.write(Status.PARTIAL)

    def part(self) -> workers.WorkerPart:
        """What this process, an xdist worker, recorded: for the controller's report."""
        return workers.WorkerPart(checks=list(self.checks.values()), examples_run=self.examples_run,
                                  performance=self.performance, own_families=sorted(self.own_families),
                                  environment=self._environment() if self.contracts_collected else None)

    def merge(self, part: workers.WorkerPart) -> None:
        """A worker's part, in the controller: its checks among the others' in the order of their modules (each
        module runs whole in one worker, its checks in their own order), its counts added."""
        merged = {**self.checks, **{c.nodeid: c for c in part.checks}}
        self.checks = dict(sorted(merged.items(), key=lambda item: workers.module_of(item[0])))  # a stable sort
        self.examples_run += part.examples_run
        self.performance.update(part.performance)
        self.own_families |= set(part.own_families)
        if part.environment is not None and (self.environment is None or not self.contracts_collected):
            self.environment, self.contracts_collected = part.environment, True
        self.write(Status.PARTIAL)

    def ended(self) -> Status:
        """The status of a suite pytest finished: complete, unless some of its modules were never collected."""
        uncollected = any(c.kind == CheckKind.COLLECTION for c in self.checks.values())
        return Status.UNCOLLECTED if uncollected else Status.COMPLETE

    def _environment(self) -> Environment:
        """Measured once: the package list is slow to read. JAX's platform and the host only once the contracts
        are collected: asking JAX for its devices starts its backend, which reads XLA_FLAGS then and never again,
        and a project's training module sets them when its contracts import it (a data-parallel job's
        `--xla_force_host_platform_device_count=4`, before `import jax`). The report written at the start (partial)
        says it has not asked yet."""
        if self.environment is None:
            self.environment = Environment(versions=environment.versions(), packages=environment.packages(),
                                           machine=environment.machine(), jax=NOT_ASKED,
                                           preinstalled=environment.preinstalled() or None, host=None)
        if self.environment.jax is NOT_ASKED and self.contracts_collected:
            self.environment = dataclasses.replace(self.environment, jax=JaxPlatform(**environment.jax_platform()),
                                                   host=environment.host())
        return self.environment

    def _entry(self) -> EntryInfo:
        """The matrix entry, as its session's job describes it; a hand run: its name only."""
        if self.job is not None:
            return self.job.entry
        return EntryInfo(name=self.config.getoption("--harness-entry"), python=self._environment().versions["python"],
                         requested={}, locked=False)

    def report(self, status: Status) -> Report:
        checks = list(self.checks.values())
        return Report(
            schema_version=SCHEMA_VERSION, harness_version=__version__,
            entry=self._entry(),
            status=status, exit_status=self.exit_status, started_at=self.started_at,
            finished_at=now() if status.ran_to_end else None, environment=self._environment(),
            hypothesis=HypothesisSettings(**self.hypothesis, examples_run=self.examples_run),
            tolerances=tolerances.table(), checks=checks, warnings=self.warnings.records(),
            timings=Timings(total_s=round(time.perf_counter() - self.started, 3)),
            performance=dict(sorted(self.performance.items())), summary=Summary.of(checks),
            problem=None, selection=self.selection, own_families=sorted(self.own_families) or None,
            run_id=self.run_id, golden_stacks=self._golden_stacks() or None,
            golden_hosts=self._golden_hosts(checks) or None,
        )

    def _golden_stacks(self) -> dict[str, dict[str, str | None]]:
        """Each own family's recording stack, where its golden file says it."""
        found = {}
        for family in sorted(self.own_families):
            try:
                versions = self.store.provenance(families.Family(family, own=True)).get("versions")
            except GoldenProblem:
                continue
            if versions:
                found[family] = {k: versions.get(k) for k in STACK_VERSION_KEYS}
        return found

    def _golden_hosts(self, checks: list[CheckRecord]) -> dict[str, Host]:
        """Each family's recording host, where its golden file names one (a family of the project's own by its
        own file; read once a family, as its values are)."""
        found = {}
        for family in sorted({families.Family(c.family, bool(c.own)) for c in checks}, key=str):
            host = self.store.recording_host(family)
            if host is not None:
                found[family.name] = host
        return found

    def write(self, status: Status, force: bool = False) -> None:
        """Write the report; progress writes (at most every few seconds) skip schema validation,
        which costs ~0.3 s on a full report, and the final write validates."""
        if not self.report_path:
            return
        if not force and time.perf_counter() - self.last_write < PROGRESS_INTERVAL_S:
            return
        self._environment()  # measured once, the first time (it imports JAX): not report writing
        started = time.perf_counter()
        report_io.write(self.report_path, self.report(status), check=force)
        self.last_write = time.perf_counter()
        self.writing_s += self.last_write - started

