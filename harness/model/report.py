"""The session report: what one run of the contract suite in one matrix entry found.

Every field of reports/<entry>.json, in the order the file holds it; report.schema.json beside this module
is the published contract of the same format (tests/unit/model/test_model.py keeps them equal; JSON: codec).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt

from harness import __version__
from harness.model.allclose import AllClose
from harness.model.departure import Departure, DepartureSize  # noqa: F401 (part of the report)
from harness.model.enums import CheckKind, ComparisonKind, Outcome, Status
from harness.model.fields import Json, optional
from harness.model.reuse import ReusedFrom
from harness.model.host import Host
from harness.model.values import HostDrift, NoiseJudgement, ObservedValues, ValuesSummary, WorstElement  # noqa: F401 (part of the report)

SCHEMA_VERSION = 3

STACK_VERSION_KEYS = ("python", "jax", "jaxlib", "optax", "flax", "numpy")  # a verdict names these, in order
# Every version a report records (distribution names with '-' spelled '_').
VERSION_KEYS = (*STACK_VERSION_KEYS, "ml_dtypes", "hypothesis", "pytest", "orbax_checkpoint")
# Packages whose code may issue a warning worth keeping; the first that owns the file is the origin.
WARNING_ORIGINS = ("optax", "flax", "jax", "jaxlib", "orbax", "numpy", "hypothesis")
# Origins whose new warnings are upgrade signals in a verdict (hypothesis's are about the tests).
LIBRARY_ORIGINS = ("jax", "jaxlib", "optax", "flax", "orbax", "numpy")

# The golden fact of the steps at which a schedule returns NaN is named "<key>/nan_at": fewer NaN
# steps is an improvement, not a regression (harness.verdict.classify).
NAN_STEPS_FACT = "nan_at"
EXACT = "exact"  # the tolerance of a comparison that allows no difference


_optional = optional

@dataclasses.dataclass(frozen=True)
class Tolerance:
    """Each element may differ from its expected value by `ulps` ulps of its dtype (or of ulp_dtype),
    taken at max(|expected|, the comparison's cancellation scale if any); below the smallest normal,
    at the smallest normal (harness/contract/tolerances.py)."""

    ulps: float
    ulp_dtype: str | None = _optional()  # counted in another dtype's ulps (a named override)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """One comparison a check made; for repeated ones (Hypothesis examples) the worst is kept."""

    label: str  # "<kind>:<key>", e.g. golden:cosine/steps
    kind: ComparisonKind
    passed: bool
    tolerance: Tolerance | str  # a Tolerance, or EXACT
    dtype: str
    shape: list[int]
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatched: int = 0
    size: int = 0
    tolerance_used: float | None = None  # max over elements of error / allowed error (<= 1 passes)
    allowed_ulps: float | None = None  # the loosest element's allowance, in ulps of the dtype at its value
    allowed_rel: float | None = None  # the loosest element's allowance relative to its value
    override: str | None = None  # why this comparison may allow more than the policy's plain row
    allclose: AllClose | None = _optional()  # assert_allclose's (rtol, atol) reproducing it (not bounds, facts)
    expected: Json = None  # small arrays whole, facts and error types as they are
    observed: Json = None
    message: str = ""
    count: int = 1  # how many times the check made this comparison
    values: ObservedValues | None = None  # every observed value (numeric comparisons); None for facts
    worst: WorstElement | None = _optional()  # a failing numeric comparison's element furthest outside
    # A golden value outside its ulps on another stack than the recording's, judged against its measured noise.
    noise: NoiseJudgement | None = _optional()
    # A statement the baseline departs from (recorded by an accepted recording): judged against the values
    # recorded then, or failing because it holds again (harness.model.departure).
    departure: Departure | None = _optional()
    # A golden value outside its ulps on a host that differs from its recording's, judged against the host noise
    # measured for it (harness.host_emulation): within it, host drift.
    host: HostDrift | None = _optional()


@dataclasses.dataclass(frozen=True)
class ErrorObserved:
    """What the call of an error contract did."""

    observed: str | None  # the exception type name, None for "no error"
    message: str  # the exception's first line
    result: Json  # when the call succeeded: the layout of what it returned


@dataclasses.dataclass(frozen=True)
class Series:
    """A curve a check kept for plots (a schedule, a loss trajectory)."""

    x: list[float]
    y: list[float]


@dataclasses.dataclass(frozen=True)
class CheckRecord:
    """One contract check (one pytest item) and everything it compared."""

    id: str  # family/test name[parameters]: stable across versions
    nodeid: str
    family: str
    kind: CheckKind
    outcome: Outcome
    duration_s: float
    exception: str | None  # type of the exception that ended the check, if any
    message: str
    falsifying_example: str | None
    examples: int | None  # Hypothesis examples run, for properties
    max_abs_err: float | None
    max_rel_err: float | None
    comparisons: list[Comparison]
    errors_observed: dict[str, ErrorObserved]
    series: dict[str, Series]
    reproduce_failure: str | None = None  # a failing property's @reproduce_failure arguments (replays it)
    about: str = ""  # what the contract pins, in user terms: the test's docstring, first sentence
    input: str | None = None  # the input it gives, in user terms (check.describe_input)
    # A module that failed to import: the installed libraries' frames, outermost first ("optax/x.py:39").
    library_frames: list[str] = dataclasses.field(default_factory=list)
    # One of the project's own contracts (--contracts); absent: a built-in one. Not its family's name: a team's
    # family may take a built-in family's name and stay another family.
    own: bool | None = _optional()
    # An own check ended by an exception its code raised (not a contract that failed: no AssertionError): the
    # innermost frame in the project's own files, "path:line" from its root. It cannot be judged there.
    raised_at: str | None = _optional()


@dataclasses.dataclass(frozen=True)
class EntryInfo:
    """The matrix entry a session ran."""

    name: str
    python: str
    requested: dict[str, str]  # the pins asked for
    locked: bool  # installed from a committed lock file
    resolved_at: str | None = _optional()  # when the pins were resolved (ad-hoc and `latest` candidates)
    # Why pins differ from what was asked: "flax 0.12.12 → 0.12.6: 0.12.12 does not resolve with jax==0.9.2".
    notes: list[str] | None = _optional()


@dataclasses.dataclass(frozen=True)
class JaxPlatform:
    """The JAX backend and the switches that change numerics."""

    backend: str | None
    device_kinds: list[str] | None = _optional()
    device_count: int | None = _optional()
    jax_enable_x64: bool | None = _optional()
    default_matmul_precision: str | None = _optional()
    xla_flags: str | None = _optional()
    compilation_cache_dir: str | None = _optional()
    error: str | None = _optional()  # JAX failed to import


@dataclasses.dataclass(frozen=True)
class Environment:
    versions: dict[str, str | None]  # VERSION_KEYS -> installed version (None: not installed)
    packages: dict[str, str]  # every installed distribution
    machine: dict[str, Json]  # os, processor, cpu count, interpreter
    jax: JaxPlatform
    family_platforms: dict[str, JaxPlatform] | None = _optional()  # families run in a process of their own
    # In a report of two parts (harness.stack.entry_side.parts), the JAX platform the project's own contracts' process
    # saw (its training module may set its device count); `jax` is then the built-in contracts' process's.
    own_jax: JaxPlatform | None = _optional()
    # Of the stack's packages, those imported from outside the entry's environment (name -> the folder): a host's
    # own JAX on PYTHONPATH (a TPU host's), judged as given.
    preinstalled: dict[str, str] | None = _optional()
    # The host the entry ran on: its CPU, what XLA compiled for, the BLAS kernel (harness.model.host).
    host: Host | None = _optional()


@dataclasses.dataclass(frozen=True)
class HypothesisSettings:
    version: str | None
    profile: str | None
    derandomize: bool | None
    seed: int | str | None  # the seed of a random run, to replay it
    max_examples: int | None
    examples_run: int


@dataclasses.dataclass(frozen=True)
class ToleranceRule:
    """One row of the tolerance policy: by comparison kind and dtype, or an override for one check."""

    kind: ComparisonKind
    ulps: float
    why: str
    dtype: str | None = _optional()
    check: str | None = _optional()


@dataclasses.dataclass(frozen=True)
class WarningRecord:
    """One distinct warning and the checks that raised it."""

    category: str
    message: str
    origin: str  # one of WARNING_ORIGINS, or "other"
    filename: str
    lineno: int
    count: int
    checks: list[str]


@dataclasses.dataclass(frozen=True)
class Timings:
    total_s: float


@dataclasses.dataclass(frozen=True)
class PerformanceRecord:
    """Informational timing of one fixed operation (harness.contract.timing)."""

    compile_s: float
    steady_s: float  # median of the steady-state calls
    steady_min_s: float  # the fastest call: least disturbed by the other entry on the cores
    repeats: int


@dataclasses.dataclass(frozen=True)
class OutcomeCounts:
    passed: int = 0
    failed: int = 0
    error: int = 0
    skipped: int = 0

    @classmethod
    def of(cls, checks: list[CheckRecord]) -> OutcomeCounts:
        return cls(**{o.value: sum(c.outcome == o for c in checks) for o in Outcome})


@dataclasses.dataclass(frozen=True)
class Summary:
    total: int
    passed: int
    failed: int
    error: int
    skipped: int
    by_family: dict[str, OutcomeCounts]

    @classmethod
    def of(cls, checks: list[CheckRecord]) -> Summary:
        families = sorted({c.family for c in checks}, key=[c.family for c in checks].index)
        return cls(total=len(checks), **dataclasses.asdict(OutcomeCounts.of(checks)),
                   by_family={f: OutcomeCounts.of([c for c in checks if c.family == f]) for f in families})


@dataclasses.dataclass(frozen=True)
class Report:
    """reports/<entry>.json. schema_version changes when a field changes meaning."""

    schema_version: int
    harness_version: str
    entry: EntryInfo
    status: Status
    exit_status: int | None  # pytest's
    started_at: str
    finished_at: str | None
    environment: Environment
    hypothesis: HypothesisSettings
    tolerances: list[ToleranceRule]  # the whole policy in force
    checks: list[CheckRecord]
    warnings: list[WarningRecord]
    timings: Timings
    performance: dict[str, PerformanceRecord]
    summary: Summary
    problem: str | None  # why the entry could not be judged, when it could not
    selection: list[str] | None  # the check ids an attribution run was limited to; None for all
    # The families that are the project's own contracts (--contracts DIR), not the built-in ones (a built-in
    # family may have one of these names too: each own check says it is, CheckRecord.own).
    own_families: list[str] | None = _optional()
    # The upgrade run that wrote it (HARNESS_RUN_ID): a verdict never judges reports of two runs together.
    run_id: str | None = _optional()
    # Set when this run reused an earlier run's report instead of running the entry again.
    reused: ReusedFrom | None = _optional()
    # The stack (STACK_VERSION_KEYS) each own family's golden values were recorded on, as its golden file says:
    # values accepted from a branch's candidate make the baseline differ by design (harness.verdict.own).
    golden_stacks: dict[str, dict[str, str | None]] | None = _optional()
    # Each family's recording host, where its golden file names one (harness.model.host).
    golden_hosts: dict[str, Host] | None = _optional()
    # The parts of the report an earlier run computed, by part (ReportPart: "own", "builtin"), when the entry ran
    # only its other part (harness.stack.entry_side.parts): a change of your code re-runs your contracts alone.
    reused_parts: dict[str, ReusedFrom] | None = _optional()

    def check(self, check_id: str) -> CheckRecord | None:
        return next((c for c in self.checks if c.id == check_id), None)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def unresolvable(entry: EntryInfo, problem: str, started_at: str) -> Report:
    """The report of an entry whose stack could not be installed: it says so, and why."""
    return Report(
        schema_version=SCHEMA_VERSION, harness_version=__version__, entry=entry, status=Status.UNRESOLVABLE,
        exit_status=None, started_at=started_at, finished_at=now(),
        environment=Environment(dict.fromkeys(VERSION_KEYS), {}, {}, JaxPlatform(backend=None)),
        hypothesis=HypothesisSettings(None, None, None, None, None, 0),
        tolerances=[], checks=[], warnings=[], timings=Timings(0.0), performance={},
        summary=Summary.of([]), problem=problem, selection=None,
    )
