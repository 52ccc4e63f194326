"""The verdict judged from reports: per entry, how each check changed against the baseline.

Built by harness.verdict.compare; shown by the views (text, Markdown, HTML); written for tools as
reports/upgrade-summary.json through harness.model.codec.
"""

from __future__ import annotations

import dataclasses

from harness.model.api_diff import ApiDiff
from harness.model.enums import BuiltinMode, CheckKind, Mark, Status
from harness.model.golden_changes import GoldenChanges
from harness.model.report import CheckRecord, JaxPlatform, Report, ReusedFrom, Tolerance, WarningRecord

# A steady-state time this many times the baseline's is flagged "slower". Informational only:
# entries share two cores during `nox -s upgrade`, so ratios below ~1.5 are mostly noise.
SLOWER_THRESHOLD = 1.5


@dataclasses.dataclass(frozen=True)
class BitsMoved:
    """How a check's observed values moved against the baseline's (harness.verdict.bits)."""

    values: int  # values whose bits changed, among those kept exactly
    compared: int  # values compared bit for bit
    max_ulps: int | None  # the largest move of a finite value, in ulps of its own dtype
    largest: str  # the comparison that holds it
    sign_flips: int  # zeros whose sign flipped
    nonfinite_appeared: int  # NaN or inf where the baseline had a finite value
    nonfinite_vanished: int  # a finite value where the baseline had NaN or inf
    digests_changed: int  # large arrays (values not kept) whose exact values differ
    paths_now_identical: list[str] = dataclasses.field(default_factory=list)  # two library paths (check.agree)
    paths_now_differ: list[str] = dataclasses.field(default_factory=list)  # ... that now differ bit for bit


@dataclasses.dataclass(frozen=True)
class Change:
    """One check on one entry, judged against the same check on the baseline."""

    check_id: str
    family: str
    kind: CheckKind
    mark: Mark
    detail: str  # the failure message, the bits that moved, or why it was not judged
    max_abs_err: float | None
    max_rel_err: float | None
    tolerances: list[Tolerance | str]  # each distinct tolerance its comparisons used (or EXACT)
    bits: BitsMoved | None = None  # observed values that moved, when both entries ran the check
    about: str = ""  # what the contract pins, in user terms
    input: str | None = None  # the input the check gives, in user terms
    before: str = ""  # what the baseline did (harness.verdict.explain)
    after: str = ""  # what this entry does
    size: str = ""  # how far apart, in ulps or percent, where numeric
    own: bool = False  # one of the project's own contracts (its family may share a built-in family's name)


@dataclasses.dataclass(frozen=True)
class Timing:
    """One operation's timing on an entry relative to the baseline's, measured in the same run."""

    name: str
    steady_ratio: float | None  # fastest steady-state call / the baseline's
    compile_ratio: float | None
    steady_s: float | None
    baseline_steady_s: float | None

    @property
    def slower(self) -> bool:
        return self.steady_ratio is not None and self.steady_ratio > SLOWER_THRESHOLD


@dataclasses.dataclass(frozen=True)
class EntryVerdict:
    """What changed on one entry."""

    name: str
    versions: dict[str, str | None]
    status: Status
    problem: str | None
    changes: list[Change]  # every check, unchanged ones included
    new_warnings: list[WarningRecord]  # library warnings the baseline did not raise
    counts: dict[Mark, int]
    requested: dict[str, str]
    requested_python: str
    timings: list[Timing]
    resolution_notes: list[str] = dataclasses.field(default_factory=list)  # why pins differ from the request
    reused: ReusedFrom | None = None  # its report came from an earlier run (nothing that determines it changed)
    # The parts of its report an earlier run computed ("builtin", "own": harness.model.enums.ReportPart), the
    # entry having run only its other part.
    reused_parts: dict[str, ReusedFrom] | None = None
    # The JAX platform of its main process ("main") and of each family run in a process of its own.
    platforms: dict[str, JaxPlatform] = dataclasses.field(default_factory=dict)
    # Its stack's packages imported from outside its environment (a host's own JAX): name -> the folder.
    preinstalled: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def contract_changes(self) -> list[Change]:
        """The checks whose contract changed (what makes the verdict CHANGED)."""
        return [c for c in self.changes if c.mark.changes_contract]

    @property
    def changed(self) -> list[Change]:
        return [c for c in self.changes if c.mark != Mark.UNCHANGED]


@dataclasses.dataclass(frozen=True)
class ImportFailure:
    """The candidate's stack cannot import a package: one finding, not a missing row per check."""

    package: str  # the package whose import fails, e.g. optax
    version: str | None
    alongside: dict[str, str | None]  # the packages its failing frames call into, with their versions
    exception: str  # "AttributeError: Unrecognized config option: jax_pmap_shmap_merge"
    raised_at: str  # the package's own frame that failed, e.g. optax/contrib/_complex_valued.py:39
    frames: list[str]  # every library frame, outermost first
    checks_not_run: list[str]  # ids of the baseline's checks in the modules that failed to import
    modules: list[str]  # the test modules that failed to import

    def folds(self, change: Change) -> bool:
        """Whether a change row is a consequence of this failure (shown as this one finding)."""
        return change.check_id in self.checks_not_run or change.kind == CheckKind.COLLECTION

    @property
    def text(self) -> str:
        with_part = ", ".join(f"{k} {v}" for k, v in self.alongside.items())
        return (f"{self.package} {self.version} cannot be imported" + (f" with {with_part}" if with_part else "")
                + f": {self.exception} ({self.raised_at}); {len(self.checks_not_run)} checks could not run")


@dataclasses.dataclass(frozen=True)
class OwnFamily:
    """One family of the project's own contracts (--contracts DIR), summed apart: for a team, the
    contracts of its own training come first."""

    name: str
    checks: int  # on the baseline
    changed: list[str]  # ids of checks whose contract changed on the candidate
    bits_changed: int  # checks whose values moved within tolerance on the candidate (informational)
    failing_on_baseline: list[str]  # ids that fail on the baseline itself: the project's code (or its
    # golden values) changed since recording, not the stack
    # ids that error on the baseline itself (a golden value never recorded, a fixture that fails): they
    # cannot be judged, so neither can the run
    not_judged_on_baseline: list[str] = dataclasses.field(default_factory=list)
    within_noise: int = 0  # checks whose golden values moved within their measured noise on the candidate
    # ids that fail on the baseline because the golden values were recorded on the candidate's stack: accepted
    # on the branch (`upgrade-harness accept`), not the project's code
    accepted: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class KeyMove:
    """One value of a check that differs from what it states (its golden value, most often): the key, before →
    after in numbers (an array at its element furthest outside its tolerance, with the index), and the size."""

    key: str
    before: str
    after: str
    size: str


@dataclasses.dataclass(frozen=True)
class OwnChange:
    """One of the project's own checks that moved on the candidate, shown first: a team reads its own
    training's changes before the built-in contracts' (bits-only moves too, as information)."""

    change: Change  # its mark, before → after and size (harness.verdict.explain)
    cause: str  # which single-package bump moves it, "optax 0.2.6 → 0.2.8" (harness.verdict.cause)
    keys: list[KeyMove] = dataclasses.field(default_factory=list)  # every value that differs, on the candidate


@dataclasses.dataclass(frozen=True)
class TeamCall:
    """A library callable the team's code calls, at its first call site, and the built-in tests covering it
    (harness.stack.selection): a built-in change in those tests is marked with the site, so that a reviewer
    sees which of them concern the team's code."""

    callable: str  # as the coverage ledger names it: "optax.MultiSteps"
    where: str  # its first call site, relative to the project's root: "trainer/optim.py:8"
    tests: tuple[str, ...]  # test ids ("accumulation/test_guide_case") and check ids ("...[optax.MultiSteps]")

    def covers(self, check_id: str) -> bool:
        """Whether the check is one of its tests, or a parametrization of one."""
        return check_id in self.tests or check_id.split("[", 1)[0] in self.tests


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The judgement over all entries; the exit status follows the candidate (the first entry)."""

    baseline: Report
    entries: list[EntryVerdict]
    baseline_failures: list[CheckRecord]
    exit_status: int
    headline: str
    bits_line: str | None = None  # informational: values that changed bits on the candidate
    cause: str | None = None  # which bump caused the candidate's changes (harness.verdict.cause)
    import_failure: ImportFailure | None = None
    # check id -> the release that first changed it ("optax 0.2.7"), from `upgrade -- --bisect`
    first_changed: dict[str, str] = dataclasses.field(default_factory=dict)
    own_families: list[OwnFamily] = dataclasses.field(default_factory=list)  # the project's own contracts
    own_changes: list[OwnChange] = dataclasses.field(default_factory=list)  # contract changes first, then bits
    # What the built-in contracts counted for in this verdict: REPORT only when there are own contracts.
    builtin: BuiltinMode = BuiltinMode.JUDGE
    mode_note: str | None = None  # why the mode asked for was not the one applied
    # Which built-in families a team's run took and why ("built-in contracts run for what your code calls: ...").
    builtin_note: str | None = None
    api_diff: ApiDiff | None = None  # the candidate's public API against the baseline's (harness.stack.api)
    # The same pins judged on another platform: what only one of them shows (harness.verdict.across_platforms).
    across_platforms: list = dataclasses.field(default_factory=list)
    # Golden values the baseline computed otherwise on this host within their host noise, and how the other
    # entries were judged there (harness.verdict.host_drift); informational.
    host_line: str | None = None
    # The project's golden values this branch changed against its base branch's (the pull-request check's).
    golden_changes: GoldenChanges | None = None
    # The callables a team's code calls and the built-in tests they take, in the order the code first calls them
    # (empty: this checkout, or a run that takes every built-in family).
    team_calls: list[TeamCall] = dataclasses.field(default_factory=list)
