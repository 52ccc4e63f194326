"""The closed vocabularies of reports and verdicts. Each word is spelled once, here; JSON holds the value."""

from __future__ import annotations

import enum


class Status(enum.StrEnum):
    """How far a session got."""

    COMPLETE = "complete"
    # Ran to its end, but some contract modules could not be imported or collected (or a family's own
    # process could not start): their checks were never observed. Judged (an import failure is a finding),
    # never kept for reuse, never read as "changed" by a bisection probe.
    UNCOLLECTED = "uncollected"
    PARTIAL = "partial"  # interrupted or crashed before the end
    UNRESOLVABLE = "unresolvable"  # the stack could not be installed

    @property
    def ran_to_end(self) -> bool:
        """pytest finished the suite: what it observed can be judged (all of it, when COMPLETE)."""
        return self in (Status.COMPLETE, Status.UNCOLLECTED)


class ReportPart(enum.StrEnum):
    """A part of an entry's report: run in a pytest process of its own and kept for reuse under a key of its own
    (harness.stack.entry_side.parts), so that one part's inputs changing re-runs that part alone."""

    ALL = "all"  # every contract the run takes, in one process (a project with one kind of contracts)
    OWN = "own"  # the project's own contracts: its code, its contracts, its golden values
    BUILTIN = "builtin"  # the built-in contracts its selection takes, without its code (and the data-parallel family)

    @property
    def label(self) -> str:
        """The part in the verdict's words."""
        return {ReportPart.OWN: "your contracts", ReportPart.BUILTIN: "the built-in contracts"}.get(self, "all")

    @classmethod
    def of_report(cls, name: str) -> ReportPart:
        """The part a report file holds, by its name: `<entry>.<part>.json` for a part of an entry's report
        (harness.stack.entry_side.parts.part_file), ALL for the entry's whole report."""
        stem, _, suffix = name.removesuffix(".json").rpartition(".")
        return next((p for p in (cls.OWN, cls.BUILTIN) if stem and p.value == suffix), cls.ALL)


class Outcome(enum.StrEnum):
    """What one check came to."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # could not be judged: golden value missing, harness fault
    SKIPPED = "skipped"


class CheckKind(enum.StrEnum):
    """What sort of contract a check is (the main comparison it makes, or property / collection)."""

    GOLDEN = "golden"
    PROPERTY = "property"
    ERROR_CONTRACT = "error-contract"
    REFERENCE = "reference"
    EXACT = "exact"
    COLLECTION = "collection"  # the module failed to import, so none of its checks ran


class ComparisonKind(enum.StrEnum):
    """What one comparison holds a value against; the tolerance policy is keyed by it."""

    GOLDEN = "golden"  # the baseline's recording
    REFERENCE = "reference"  # an independent NumPy float64 formula
    EQUIVALENCE = "equivalence"  # another library path equal in exact arithmetic (jit vs eager, ...)
    EXACT = "exact"  # a literal the contract states
    BOUND = "bound"  # an inequality
    ERROR_CONTRACT = "error-contract"  # the exception type a call raises


class Mark(enum.StrEnum):
    """How a check changed on an entry, against the baseline. Declared in the order of danger: what a
    reviewer must read first (bad input now accepted without a word) comes first."""

    NOW_SILENT = "now silent"  # an error contract's bad input is now accepted: no exception
    STATE_CHANGED = "dtype/state changed"  # a dtype, or the layout of a state or result, changed
    VALUE_CHANGED = "value changed"  # a value out of its tolerance, a fact that differs, a property failing
    ERROR_TYPE_CHANGED = "error type changed"  # bad input raises another exception type
    API_MISSING = "API missing"  # AttributeError/ImportError: a function or module it uses is gone
    MISSING = "check missing"  # ran on the baseline, not here
    IMPROVED = "improved"  # NaN/inf gone, or bad input that passed silently now raises: still a change
    NOT_JUDGED = "not judged"
    FAILING_BOTH = "failing in both"
    FIXED = "fixed"
    # Fails on the baseline and passes here because the project's golden values were recorded on this entry's
    # stack: a change accepted on the branch (`upgrade-harness accept`), shown against the base: informational.
    ACCEPTED = "accepted"
    # Passes on both: a golden value moved beyond its ulps on another stack, within the numerical noise the
    # baseline measured for it (harness.numerical_noise): informational.
    NOISE = "moved within noise"
    BITS_CHANGED = "bits changed"  # passes on both, but observed values moved: informational
    # The baseline's stack lacks what the check calls (harness.not_on_stack): nothing to judge it against.
    NOT_ON_STACK = "not on the baseline's stack"
    NEW_CHECK = "new check"
    UNCHANGED = "unchanged"

    @property
    def changes_contract(self) -> bool:
        """A mark that makes the verdict CHANGED (exit status 1): the golden values no longer hold."""
        return self in _CONTRACT_CHANGES

    @property
    def informational(self) -> bool:
        """Shown, never deciding: accepted on the branch, moved within noise, or within tolerance."""
        return self == Mark.ACCEPTED or self.moved_only

    @property
    def moved_only(self) -> bool:
        """Passes on both entries, its values moved (within noise, or within tolerance): shown, never deciding."""
        return self in (Mark.NOISE, Mark.BITS_CHANGED)

    @property
    def rank(self) -> int:
        return list(Mark).index(self)


_CONTRACT_CHANGES = frozenset({Mark.NOW_SILENT, Mark.STATE_CHANGED, Mark.VALUE_CHANGED, Mark.ERROR_TYPE_CHANGED,
                               Mark.API_MISSING, Mark.MISSING, Mark.IMPROVED})


class BuiltinMode(enum.StrEnum):
    """What the built-in contracts count for in a project ([tool.upgrade-harness] builtin, --builtin,
    --no-builtin). A team's own contracts always decide; this says whether the built-in ones do too."""

    JUDGE = "judge"  # run, and their changes decide the exit status (this checkout; `builtin = true`)
    REPORT = "report"  # run and shown after the team's own, but only the team's own decide
    OFF = "off"  # not run (`builtin = false`, `--no-builtin`)
