"""A statement a release broke, recorded as that release's behaviour and judged against it afterwards.

A check's statements (`reference`, `agree`, `exact`, `identical`, `bound`: harness.contract.checks) say what a
value must be whatever the stack. When a new baseline breaks one, recording cannot write a golden value for
it: the statement is not a recording. With changes accepted (`nox -s golden -- --accept-changes`, which
`nox -s accept` runs), the values the release computed are recorded instead as a departure from the statement
(harness.model.departure: the values, the statement's label, how far they were from it, the stack), in the
family's golden file. Without accepting, a new departure is refused as any failing check is, and one recorded
already is recorded again (a change of its values then needs accepting, as a golden value's does). A
statement that holds where a departure was recorded drops it: a change to accept. A Hypothesis property is
never recorded: its inputs are random, so what one example computed is no fact to hold the next to.

A run that finds a departure for the statement judges the value against the values recorded then, at the
golden ulps of its dtype (exactly for an exact statement, bit for bit for identity), and its comparison carries
the departure for the report (a note in the verdict); where the statement holds again it fails as an
improvement, so a release that goes back to the formula is seen, never silent.
"""

from __future__ import annotations

import dataclasses
import enum
from collections import Counter
from collections.abc import Callable

import numpy as np

from harness.contract import encoding, environment, measure, precision
from harness.contract.families import Family
from harness.contract.golden import GoldenStore
from harness.contract.tolerances import is_float_dtype
from harness.model import departure as model
from harness.model.departure import Departure, DepartureSize
from harness.model.enums import ComparisonKind
from harness.model.report import EXACT, STACK_VERSION_KEYS, Comparison

GOLDEN = ComparisonKind.GOLDEN
NOT_A_FACT = ("a Hypothesis property's failure is not recorded as a departure from its statement: its inputs are "
              "random, so no recorded value could hold for the next example")


class Judged(enum.Enum):
    """How a value is held to the values a departure recorded: as a golden value (the golden ulps of its dtype),
    exactly (a stated literal), or bit for bit (an identity)."""

    CLOSE = "close"
    EXACT = "exact"
    IDENTICAL = "identical"


@dataclasses.dataclass(frozen=True)
class Statement:
    """One statement as a check made it: its comparison with the formula (`made`), the value it held, and how
    that value would be held to recorded values (scale/why: a cancellation's, as the statement was given)."""

    made: Comparison
    value: object
    judged: Judged
    scale: object = None
    why: str | None = None


Within = Callable[..., Comparison]  # Check._within: (kind, label, value, expected, scale, why) under the policy


class Departures:
    """One check's statements against the family's recorded departures."""

    def __init__(self, check_id: str, family: Family, store: GoldenStore | None, recording: bool, accepting: bool):
        self.check_id, self.family, self.store = check_id, family, store
        self.recording, self.accepting = recording, accepting
        self.seen: Counter[str] = Counter()  # statements made so far, by label: a repeat has its own key

    def judge(self, statement: Statement, within: Within, in_property: Callable[[], bool]) -> Comparison:
        """The comparison to note for `statement`: as made, or against (or recording) its departure."""
        __tracebackhide__ = True
        if self.store is None or (not self.recording and not self.store.departures(self.family)):
            return statement.made  # the usual case: the family records none (a Check without a store: none at all)
        label = statement.made.label
        self.seen[label] += 1
        key = model.key(self.check_id, label, self.seen[label])
        if self.recording:
            return self._recorded(key, statement, in_property)
        found = self.store.departures(self.family).get(key)
        if found is None:
            return statement.made
        if statement.made.passed:
            return _holds_again(statement.made, found)
        return _against(statement, found, self.store.get(self.family, key), within)

    def _recorded(self, key: str, statement: Statement, in_property: Callable[[], bool]) -> Comparison:
        made = statement.made
        before = self.store.departures(self.family, kept_only=True).get(key)
        if made.passed:
            if before is not None:
                self.store.drop(self.family, key)  # the statement holds again: the change lists it
            return made
        if in_property():
            return dataclasses.replace(made, message=f"{made.message}\n({NOT_A_FACT})")
        if not self.accepting and before is None:
            return made  # refused, as any failing check: accepting records it (golden_recording says how)
        recorded = _departure(self.check_id, made)
        entry = model.entry(recorded, _observed(statement))
        if before is not None and _same_values(self.store.get(self.family, key), entry):
            entry = self.store.get(self.family, key)  # as recorded: its stack stays the one it was first seen on
            recorded = before
        self.store.record(self.family, key, entry)
        return dataclasses.replace(made, passed=True, message="", departure=recorded)


def _departure(check_id: str, made: Comparison) -> Departure:
    """What a failing statement's comparison says of the release's values, with this stack's versions."""
    versions = environment.versions()
    worst = made.worst.ulps if made.worst is not None else None
    size = DepartureSize(outside=made.mismatched, elements=made.size, allowed=_allowed(made),
                         max_abs_err=made.max_abs_err if made.size else None, max_ulps=worst)
    return Departure(check=check_id, statement=made.label, kind=made.kind,
                     recorded_on={k: versions.get(k) for k in STACK_VERSION_KEYS}, size=size)


def _allowed(made: Comparison) -> str:
    if made.tolerance == EXACT:
        return "exact"
    of = f" of {made.tolerance.ulp_dtype}" if made.tolerance.ulp_dtype else ""
    return f"{made.tolerance.ulps:g} ulp{of}" + (" (a named allowance)" if made.override else "")


def _is_array(value) -> bool:
    arr = np.asarray(value) if not isinstance(value, (dict, str)) and value is not None else None
    return arr is not None and arr.dtype != object and (is_float_dtype(arr.dtype) or arr.dtype.kind in "iub")


def _observed(statement: Statement) -> dict:
    """The golden form of the value the release computed: an array's exact values, else the fact itself."""
    value = statement.value
    return encoding.encode_array(value) if _is_array(value) else {"fact": encoding.jsonable(value)}


def _same_values(before: dict, now: dict) -> bool:
    return {k: v for k, v in before.items() if k != model.FIELD} == {k: v for k, v in now.items() if k != model.FIELD}


def _holds_again(made: Comparison, found: Departure) -> Comparison:
    """The statement holds on this run where a departure was recorded: a change (an improvement) to see."""
    message = (f"{made.label}: holds again on this stack: its departure recorded on "
               f"{model.stack_text(found.recorded_on)} ({model.size_text(found.size)}) is no longer observed. "
               "An improvement: accepting this stack's recording drops the departure")
    return dataclasses.replace(made, passed=False, message=message,
                               departure=dataclasses.replace(found, holds_again=True))


def _against(statement: Statement, found: Departure, entry: dict, within: Within) -> Comparison:
    """The value against the values the departure recorded: the golden ulps of its dtype, or exactly."""
    __tracebackhide__ = True
    made, value = statement.made, statement.value
    if "fact" in entry:
        judged = measure.compare_exact(GOLDEN, made.label, encoding.jsonable(value), entry["fact"])
    else:
        recorded = encoding.decode_array(entry)
        if statement.judged == Judged.IDENTICAL:
            recorded = recorded.astype(precision.numpy_dtype(entry["dtype"]))  # decoded wide: its own bits again
            judged = measure.compare_identical(made.label, value, recorded, made.values is not None)
        elif statement.judged == Judged.EXACT:
            judged = measure.compare_exact(GOLDEN, made.label, encoding.jsonable(value), recorded,
                                           made.values is not None)
        else:
            judged = within(GOLDEN, made.label, value, recorded, statement.scale, statement.why)
    judged = dataclasses.replace(judged, kind=GOLDEN, departure=dataclasses.replace(found, holds_again=False))
    if judged.passed:
        return judged
    return dataclasses.replace(judged, message=f"{judged.message} (against the values its departure recorded: "
                                               f"{model.note(found)})")
