"""A built-in check that raises inside a library on a team's baseline, kept as that baseline's departure.

Every built-in check states, before anything else, that its calls run to their end. On an older stack some do
not: flax 0.11's `nnx.Optimizer.update` returned nothing, optax 0.2.5's `add_decayed_weights` took no schedule.
That is the baseline's behaviour, not a lack (harness.contract.stack_lacks: a callable, keyword or module that
is not there), so it is recorded as any broken statement is (harness.contract.departures): only when the
recording accepts changes (`golden --record-builtin --accept-changes`), as the departure "raises TypeError"
with the exception's first line, in the family's golden file. Later runs of the check pass where it raises
the same exception type (the departure noted in the report), fail where it raises another (error type
changed), and fail as an improvement where it runs to its end: a release that makes it work is seen, never
silent. A team's own contracts and Hypothesis properties are never recorded so (their raise is their failure).
"""

from __future__ import annotations

import dataclasses

from harness.contract import environment
from harness.contract.checks import Check, ContractFailure
from harness.contract.golden import GoldenProblem
from harness.model import departure as model
from harness.model.departure import Departure, DepartureSize
from harness.model.enums import ComparisonKind
from harness.model.report import EXACT, STACK_VERSION_KEYS, Comparison

LABEL = "runs to its end"  # the statement every check makes by running: its departure's label
KIND = ComparisonKind.ERROR_CONTRACT


def _key(check: Check) -> str:
    return model.key(check.check_id, LABEL)


def _what(exc: BaseException) -> dict:
    return {"raises": type(exc).__name__, "message": (str(exc).strip().splitlines() or [""])[0][:300]}


def _comparison(passed: bool, expected, observed, message: str, found: Departure | None) -> Comparison:
    return Comparison(LABEL, KIND, passed, EXACT, "exception", [], expected=expected, observed=observed,
                      message=message, departure=found)


def recorded(check: Check) -> Departure | None:
    """The raise departure the check's family records for it, if any (none where its file cannot be read: that
    problem is the check's own to report)."""
    if check.store is None or check.recording:
        return None
    try:
        return check.store.departures(check.family).get(_key(check))
    except GoldenProblem:
        return None


def departs(check: Check, exc: BaseException) -> bool:
    """Whether exc, ending a built-in check, is its baseline's departure: recorded now (a recording that accepts
    changes) or before (the same exception type): the check then passes, the departure noted. False: exc stands
    (raised another type: a ContractFailure saying so is raised instead)."""
    __tracebackhide__ = True
    if isinstance(exc, ContractFailure) or check.store is None:
        return False
    what = _what(exc)
    if check.recording:
        before = check.store.departures(check.family, kept_only=True).get(_key(check))
        if not check.departures.accepting and (before is None or _fact(check)["raises"] != what["raises"]):
            return False  # refused, as any failing check: accepting records it (golden_recording says how)
        versions = environment.versions()
        found = before if before is not None and _fact(check) == what else Departure(
            check=check.check_id, statement=LABEL, kind=KIND, recorded_on={k: versions.get(k) for k in STACK_VERSION_KEYS},
            size=DepartureSize(outside=1, elements=0, allowed=f"raises {what['raises']}"))
        check.store.record(check.family, _key(check), model.entry(found, {"fact": what}))
        check._add_kind(KIND)
        check.comparisons[LABEL] = _comparison(True, None, what["raises"], "", found)
        return True
    found = recorded(check)
    if found is None:
        return False
    if isinstance(exc, GoldenProblem):  # it went past where the baseline raised, to values never recorded
        holds_again(check)
    before = _fact(check)
    check._add_kind(KIND)
    if before["raises"] == what["raises"]:
        check.comparisons[LABEL] = _comparison(True, before["raises"], what["raises"], "", found)
        return True
    check.comparisons[LABEL] = _comparison(
        False, before["raises"], what["raises"], f"{LABEL}: the baseline raised {before['raises']} here (its "
        f"departure, recorded on {model.stack_text(found.recorded_on)}), {what['raises']} now ({what['message']})",
        found)
    raise ContractFailure(check.comparisons[LABEL].message) from exc


def _fact(check: Check) -> dict:
    """What the recorded departure says was raised: {"raises": type, "message": its first line}."""
    return check.store.get(check.family, _key(check))["fact"]


def holds_again(check: Check) -> None:
    """The check ran to its end where its baseline's raise was recorded: an improvement, a change to see (a
    recording drops the departure, which the recording's changes then list)."""
    __tracebackhide__ = True
    if check.store is None:
        return
    if check.recording:
        if check.store.departures(check.family, kept_only=True).get(_key(check)) is not None:
            check.store.drop(check.family, _key(check))
        return
    found = recorded(check)
    if found is None:
        return
    before = _fact(check)
    message = (f"{LABEL}: holds again on this stack: the baseline raised {before['raises']} here ({before['message']}; "
               f"its departure recorded on {model.stack_text(found.recorded_on)}). An improvement: accepting this "
               "stack's recording drops the departure")
    check._add_kind(KIND)
    check.comparisons[LABEL] = _comparison(False, before["raises"], None, message,
                                           dataclasses.replace(found, holds_again=True))
    raise ContractFailure(message)
