"""The `check` fixture's object: how a contract test states what it expects (the public API).

A test calls a few methods; each one compares, records the comparison for the report, and
raises ContractFailure (an AssertionError) with a one-paragraph message when it does not hold.

* ``golden(key, value)``: against the value recorded from the baseline (golden/<family>.json).
* ``golden_exact(key, value)``: the same, compared exactly (counters, emitted zeros).
* ``golden_fact(key, value)``: a JSON-able fact (a dtype name, a tree structure) compared with ==.
* ``golden_tree(key, tree)``: a whole pytree: its layout as a fact, every leaf as a golden value.
* ``error_contract(key, fn)``: calls fn; the exception type it raises (or "no error") is golden.
* ``reference(label, value, expected_f64)``: against an independent NumPy float64 formula.
* ``agree(label, value, other)``: two library paths equal in exact arithmetic (jit vs eager, k
  microbatches vs their mean): a relation between two computations of the library, not a reference.
* ``exact(label, value, expected)``: against a literal the contract states (e.g. zeros).
* ``recorded(label, value, expected)``: against a value another entry of the run wrote (golden ulps).
* ``identical(label, value, other)``: bit-for-bit (a checkpoint restore, a rerun).
* ``bound(label, value, limit)``: value <= limit (+ tolerance): inequality contracts.
* ``series(name, x, y)``: a curve kept for the HTML report's plots (compares nothing).
* ``devices(count)``: the devices a contract's mesh needs, or an error saying how to give them (compares nothing).

In recording mode (``nox -s golden``) the golden methods store the observed value instead; a statement
(reference, agree, exact, identical, bound) a release broke, its departure (harness.contract.departures).

A golden value that differs does not stop a plain test: the check goes on and fails at the end of
the test call naming every golden key that differs (harness.contract.mismatches); inside a Hypothesis
property it raises at once, as every other comparison does. The methods hide their frames
(``__tracebackhide__``), so a failure's traceback ends at the contract's own line.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from harness.contract import (
    departures, encoding, mismatches, noise, platform_needs, precision, project_devices, stack_lacks, tolerances,
    trees,
)
from harness.contract.departures import Judged, Statement
from harness.contract.encoding import encode_array
from harness.contract.families import Family
from harness.contract.golden import GoldenStore
from harness.contract.measure import compare_bound, compare_close, compare_exact, compare_identical, kept
from harness.model.enums import ComparisonKind
from harness.model.report import EXACT, Comparison, ErrorObserved, Series

GOLDEN, ERROR_CONTRACT = ComparisonKind.GOLDEN, ComparisonKind.ERROR_CONTRACT
NO_ERROR = None  # what an error contract records when the call succeeded


class ContractFailure(AssertionError):
    """A contract did not hold; the message says which value, by how much, against which tolerance."""


class RaisedAfterMismatches(ContractFailure):
    """Golden values differed, then the check raised: its failure is more than its comparisons (the verdict never
    reads it as theirs alone, harness.verdict.host_drift)."""


def _dtype_name(value) -> str:
    return _name(np.asarray(value).dtype)


_name = functools.cache(str)  # of a NumPy dtype: str() is slow, and every comparison asks


class Check:
    """Collects the comparisons one contract check makes."""

    def __init__(self, check_id: str, family: str, store: GoldenStore, recording: bool = False, own: bool = False,
                 accepting: bool = False):
        self.check_id, self.store = check_id, store
        self.family = Family(family, own)  # whose golden values it reads and records (own: the project's family)
        self.recording = recording  # accepting: a recording that may change values (and record departures)
        self.departures = departures.Departures(check_id, self.family, store, recording, accepting)
        self.kinds: list[ComparisonKind] = []  # every kind of comparison made (or recorded)
        self.comparisons: dict[str, Comparison] = {}
        self.errors_observed: dict[str, ErrorObserved] = {}
        self.curves: dict[str, Series] = {}
        self.input: str | None = None  # the input in user terms, for the verdict (describe_input)
        # Set by the plugin while a plain (non-Hypothesis) test runs: golden mismatches are kept, not raised.
        self.defer_golden = False
        self.mismatches: list[mismatches.Mismatch] = []

    # -- bookkeeping -------------------------------------------------------------------------
    def _add_kind(self, kind: ComparisonKind) -> None:
        if kind not in self.kinds:
            self.kinds.append(kind)

    def _note(self, comparison: Comparison) -> None:
        """Keep the comparison (for a repeated label, a Hypothesis example, the worst) and fail if it failed."""
        __tracebackhide__ = True
        self._add_kind(comparison.kind)
        self.comparisons[comparison.label] = kept(self.comparisons.get(comparison.label), comparison)
        if not comparison.passed:
            self._fail(comparison)

    def _fail(self, comparison: Comparison) -> None:
        __tracebackhide__ = True
        recorded = comparison.kind == GOLDEN or comparison.departure is not None  # against a recording
        if recorded and self.defer_golden and not mismatches.in_hypothesis():
            self.mismatches.append(mismatches.Mismatch.here(comparison.message, mismatches.in_ulps(comparison)))
            return
        note = mismatches.host_note(self.store, self.family, mismatches.in_ulps(comparison))
        raise ContractFailure(comparison.message + (f"\n{note}" if note else ""))

    def raise_mismatches(self, after: BaseException | None = None) -> None:
        """At the test call's end: fail with every golden mismatch kept (``after``: what ended it, chained)."""
        __tracebackhide__ = True
        if self.mismatches:
            note = mismatches.host_note(self.store, self.family, any(m.in_ulps for m in self.mismatches))
            failure = ContractFailure if after is None else RaisedAfterMismatches
            raise failure(mismatches.summary(self.mismatches, after, note)) from after

    def _statement(self, statement: Statement) -> None:
        """A statement the contract makes, judged as made unless the baseline departs from it (departures)."""
        __tracebackhide__ = True
        self._note(self.departures.judge(statement, self._within, mismatches.in_hypothesis))

    def _first(self, label: str) -> bool:
        """Whether it is the label's first comparison: only those keep values (not a property's repeats)."""
        return label not in self.comparisons

    def _rule(self, kind: ComparisonKind, label: str, dtype: str, scale, why) -> tuple[tolerances.Rule, str | None]:
        """The policy's rule for the dtype (or this check's override) and the reasons the comparison
        records: the rule's, when it is named, and the call's cancellation `why` (a `scale` needs one)."""
        __tracebackhide__ = True
        if (scale is None) != (why is None):
            raise TypeError(f"{label}: a cancellation scale is an override of the tolerance policy: "
                            "pass scale= and why= together (why: the operands that cancel)")
        rule = tolerances.lookup(kind, tolerances.policy_dtype(dtype), self.check_id, platform_needs.running_on())
        return rule, "; ".join(r for r in (rule.why if rule.named else None, why) if r) or None

    def _within(self, kind: ComparisonKind, label: str, value, expected, scale=None, why=None) -> Comparison:
        """compare_close under the rule for value's dtype."""
        __tracebackhide__ = True
        value = np.asarray(value)
        dtype = _dtype_name(value)
        rule, reasons = self._rule(kind, label, dtype, scale, why)
        return compare_close(kind, label, value, np.asarray(expected), rule.tolerance, dtype, scale, reasons,
                             keep_values=self._first(label))

    # -- golden ------------------------------------------------------------------------------
    def golden(self, key: str, value, *, exact: bool = False, scale=None, why: str | None = None,
               dtype: str | None = None) -> None:
        """The value equals the baseline's recording, within the golden ulps of the precision it was
        computed in (harness.contract.precision: a Python float holding float32 values is judged as
        float32); ``dtype`` states it outright, e.g. ``check.golden("loss", float(loss), dtype="float32")``.
        ``scale``/``why``: as for reference(), where the value is a cancellation of larger operands.
        """
        __tracebackhide__ = True
        arr = np.asarray(value)
        if dtype is not None:
            precision.check_stated(dtype)
        asked, exact = exact, exact or not tolerances.is_float_dtype(arr.dtype)  # a counter or a flag has no ulps
        if self.recording:
            if asked:  # only what the contract states exactly is recorded to be compared exactly
                precision.refuse_exact_formula(key, arr, str(arr.dtype))
            entry = {**encode_array(arr), **precision.noted(value, arr, dtype, exact)}
            self.store.record(self.family, key, entry if exact else noise.with_noise(self.store, self.family, key,
                                                                                     entry, arr, self.check_id))
            self._add_kind(GOLDEN)
            return
        expected, entry = self.store.get_array(self.family, key)
        if asked:
            precision.refuse_exact_formula(key, expected, entry["dtype"])
        label, observed_dtype = f"golden:{key}", _dtype_name(arr)
        recorded = dtype or entry.get("precision") or entry["dtype"]
        changed = None
        if observed_dtype != entry["dtype"]:
            changed = precision.dtype_changed(label, arr, entry["dtype"])
        elif not exact and recorded != observed_dtype:
            changed = precision.no_longer_fits(label, arr, recorded)
        if changed is not None:  # the key's failure: its values are not compared across precisions
            self._note(changed)
        elif exact:
            self._note(compare_exact(GOLDEN, label, arr, expected, self._first(label)))
        else:  # in the recorded precision: lossless, since the values fit it
            arr = arr.astype(precision.numpy_dtype(recorded)) if recorded != observed_dtype else arr
            found = self._within(GOLDEN, label, arr, expected, scale, why)  # on another stack: within its noise?
            found = noise.judged(self.store, self.family, entry, found, arr, expected, scale)
            # On another host: within the host noise measured for it? (harness.host_emulation)
            self._note(noise.host_judged(self.store, self.family, entry, found, arr, expected, scale))

    def golden_exact(self, key: str, value) -> None:
        """The recording exactly: counters, flags, and the literal zeros (NaN, inf) a contract states."""
        __tracebackhide__ = True
        self.golden(key, value, exact=True)

    def golden_fact(self, key: str, fact) -> None:
        """A JSON-able fact (dtype names, a tree structure, a flag) equals the baseline's."""
        __tracebackhide__ = True
        if self.recording:
            self.store.record(self.family, key, {"fact": encoding.jsonable(fact)})  # as the file holds it
            self._add_kind(GOLDEN)
            return
        entry = self.store.get(self.family, key)
        self._note(compare_exact(GOLDEN, f"golden:{key}", encoding.jsonable(fact), entry.get("fact")))

    def golden_tree(self, key: str, tree, *, scales: dict | None = None, why: str | None = None) -> None:
        """A whole result: its layout (paths, dtypes, shapes) as a fact, and every leaf as a golden value.
        ``scales`` (leaf path -> operand magnitude) with ``why``: leaves that are cancellations."""
        __tracebackhide__ = True
        kept = len(self.mismatches)
        self.layout(f"{key}/layout", tree)
        if len(self.mismatches) > kept:
            return  # another layout: its leaves have no baseline to compare with, the layout's message says why
        for path, leaf in trees.leaves(tree).items():
            scale = None if scales is None else scales.get(path)
            self.golden(f"{key}/{path}", leaf, scale=scale, why=None if scale is None else why)

    def layout(self, key: str, tree) -> None:
        """Every leaf's path, dtype and shape as one golden fact (what an optimizer state's checkpoint needs)."""
        self.golden_fact(key, trees.layout(tree))

    def devices(self, count: int) -> list:
        """The first `count` of JAX's devices, for a contract whose mesh needs them (`Mesh(np.array(check.devices(4)),
        ("data",))`); with fewer, it raises TooFewDevices saying how many it needed and found and how to give them,
        so the contract is not judged (never a mesh of the devices there happen to be, judged as sharded)."""
        __tracebackhide__ = True
        return project_devices.needed(count)

    def describe_input(self, text: str) -> None:
        """Say in user terms what input this check gives, e.g. "grads['bias'] of shape (1,) for params
        ['bias'] of shape (3,)": the verdict shows it beside a change, so a reviewer need not open the test."""
        self.input = text

    def error_contract(self, key: str, fn, *args, **kwargs):
        """Call fn; the exception type it raises, or NO_ERROR, must match the baseline's.

        Returns the exception (or the result) so the test may check more.
        """
        __tracebackhide__ = True
        try:
            result = fn(*args, **kwargs)
            observed = NO_ERROR
        except Exception as exc:  # the type is the contract, whatever it is: but a built-in's call of a callable
            if not self.family.own:  # or module the stack lacks is no error of the callable's: not applicable here
                stack_lacks.skip_if_lacking(exc, self, keywords=False)
            result, observed = exc, type(exc).__name__
        seen = ErrorObserved(
            observed=observed,
            message="" if observed is None else (str(result).splitlines() or [""])[0][:300],
            # When the call succeeds, say what it produced: a "now silent" change is then readable.
            result=trees.describe(result) if observed is None else None,
        )
        self.errors_observed[key] = seen
        if self.recording:
            self.store.record(self.family, key, {"error": observed})
            self._add_kind(ERROR_CONTRACT)
            return result
        expected = self.store.get(self.family, key).get("error")
        label = f"error:{key}"
        message = ""
        if observed != expected:
            message = f"{label}: {expected or 'no error'} at baseline, {observed or 'no error'} now"
            message += f" ({seen.message})" if observed is not None else f"; the call returned {seen.result}"
        self._note(Comparison(label, ERROR_CONTRACT, observed == expected, EXACT, "exception", [],
                              expected=expected, observed=observed, message=message))
        return result

    # -- independent references, relations between library paths, literal contracts ----------
    def reference(self, label: str, value, expected_f64, *, scale=None, why: str | None = None) -> None:
        """The value agrees with an independent float64 NumPy formula, within the reference ulps.

        ``scale`` is the magnitude of the operands (a number, or one per element) when the result is a
        sum or difference of them that may cancel: rounding error is relative to the operands, not to
        a result that cancelled to near zero, so the ulps are taken at max(|expected|, scale),
        elementwise. ``why`` names the cancellation; the report keeps it with the allowance.
        """
        __tracebackhide__ = True
        made = self._within(ComparisonKind.REFERENCE, f"reference:{label}", value, expected_f64, scale, why)
        self._statement(Statement(made, value, Judged.CLOSE, scale, why))

    def agree(self, label: str, value, other, *, scale=None, why: str | None = None) -> None:
        """Two library paths that are equal in exact arithmetic agree within the equivalence ulps."""
        __tracebackhide__ = True
        made = self._within(ComparisonKind.EQUIVALENCE, f"equivalence:{label}", value, other, scale, why)
        self._statement(Statement(made, value, Judged.CLOSE, scale, why))

    def exact(self, label: str, value, expected, *, message: str | None = None) -> None:
        """The value equals what the contract states, exactly (counters, zeros, dtypes); ``message``: a
        failure in the contract's own words (which leaves, what the team can do)."""
        __tracebackhide__ = True
        found = compare_exact(ComparisonKind.EXACT, f"exact:{label}", encoding.jsonable(value), encoding.jsonable(expected),
                              self._first(f"exact:{label}"))
        made = found if found.passed or message is None else dataclasses.replace(found, message=message)
        self._statement(Statement(made, value, Judged.EXACT))

    def recorded(self, label: str, value, expected, *, scale=None, why: str | None = None) -> None:
        """The value equals what another entry recorded in this run (a checkpoint's continuation), within the
        golden ulps (the same computation on another stack, as a golden value is); scale/why: as for golden."""
        __tracebackhide__ = True
        self._note(self._within(GOLDEN, f"recorded:{label}", value, expected, scale, why))

    def identical(self, label: str, value, other) -> None:
        """Bit-for-bit identity (dtype, shape and every bit: -0.0 differs from 0.0), e.g. after a restore."""
        __tracebackhide__ = True
        made = compare_identical(f"identical:{label}", value, other, self._first(f"identical:{label}"))
        self._statement(Statement(made, value, Judged.IDENTICAL))

    def bound(self, label: str, value, limit, *, scale=None, why: str | None = None) -> None:
        """Every element of value is <= limit, allowing the bound ulps of value's dtype at the limit
        (at the operands' `scale` where the value is a difference of larger operands: say `why`)."""
        __tracebackhide__ = True
        label, dtype = f"bound:{label}", _dtype_name(value)
        rule, reasons = self._rule(ComparisonKind.BOUND, label, dtype, scale, why)
        made = dataclasses.replace(compare_bound(label, value, limit, rule.tolerance, dtype, scale, self._first(label)),
                                   override=reasons)
        self._statement(Statement(made, value, Judged.CLOSE, scale, why))

    def series(self, name: str, x, y) -> None:
        """Keep a curve (a schedule, a loss trajectory) in the report for plots; compares nothing."""
        self.curves[name] = Series(x=[float(v) for v in np.asarray(x, np.float64).ravel()],
                                   y=[float(v) for v in np.asarray(y, np.float64).ravel()])
