"""The `check` fixture's object: how a contract test states what it expects.

A test calls a few methods; each one compares, records the comparison for the report, and
raises ContractFailure (an AssertionError) with a one-paragraph message when it does not hold.

* ``golden(key, value)``: against the value recorded from the baseline (golden/<family>.json).
* ``golden_exact(key, value)``: the same, compared exactly (counters, emitted zeros).
* ``golden_fact(key, value)``: a JSON-able fact (a dtype name, a tree structure) compared with ==.
* ``error_contract(key, fn)``: calls fn; the exception type it raises (or "no error") is golden.
* ``reference(label, value, expected_f64)``: against an independent NumPy float64 formula.
* ``agree(label, value, other)``: two computations equal in exact arithmetic (rounding order only).
* ``exact(label, value, expected)``: against a literal the contract states (e.g. zeros).
* ``identical(label, value, other)``: bit-for-bit (a checkpoint restore, a rerun).
* ``bound(label, value, limit)``: value <= limit (+ tolerance): inequality contracts.
* ``series(name, x, y)``: a curve kept for the HTML report's plots (compares nothing).

In recording mode (``nox -s golden``) the golden methods store the observed value instead.
"""

from __future__ import annotations

import numpy as np

from harness.contract import tolerances
from harness.contract.golden import GoldenStore, encode_array
from harness.contract.measure import Comparison, compare_close, compare_exact, errors

NO_ERROR = None  # what an error contract records when the call succeeded


class ContractFailure(AssertionError):
    """A contract did not hold; the message says which value, by how much, against which tolerance."""


def _dtype_name(value) -> str:
    return str(np.asarray(value).dtype)


def _float_dtype(dtype: str) -> str:
    return dtype if dtype in ("float64", "float32", "bfloat16", "float16") else "float64"


class Check:
    """Collects the comparisons one contract check makes."""

    def __init__(self, check_id: str, family: str, store: GoldenStore, recording: bool = False):
        self.check_id = check_id
        self.family = family
        self.store = store
        self.recording = recording
        self.kinds: list[str] = []
        self.comparisons: dict[str, dict] = {}
        self.error_observed: dict[str, dict] = {}
        self.curves: dict[str, dict] = {}

    # -- bookkeeping -------------------------------------------------------------------------
    def _add_kind(self, kind: str) -> None:
        if kind not in self.kinds:
            self.kinds.append(kind)

    def _note(self, kind: str, comparison: Comparison) -> None:
        self._add_kind(kind)
        row = comparison.as_dict()
        row["kind"] = kind
        previous = self.comparisons.get(comparison.label)
        if previous is None:
            row["count"] = 1
            self.comparisons[comparison.label] = row
        else:  # the same comparison again (a Hypothesis example): keep the worst
            row["count"] = previous["count"] + 1
            worse = (row["max_abs_err"] or 0) > (previous["max_abs_err"] or 0) or not row["passed"]
            if previous["passed"] and worse:
                self.comparisons[comparison.label] = row
            else:
                previous["count"] = row["count"]
        if not comparison.passed:
            raise ContractFailure(comparison.message)

    # -- golden ------------------------------------------------------------------------------
    def golden(self, key: str, value, *, exact: bool = False, scale=1.0) -> None:
        """The value equals the baseline's recording, within the golden tolerance of its dtype.

        ``scale`` (a number or one per element) multiplies the absolute floor, for values far from
        1 in magnitude: tiny values get a floor relative to their own size.
        """
        value = np.asarray(value)
        if self.recording:
            self.store.record(self.family, key, encode_array(value))
            self._add_kind("golden")
            return
        expected, entry = self.store.get_array(self.family, key)
        label = f"golden:{key}"
        observed_dtype = _dtype_name(value)
        if observed_dtype != entry["dtype"]:
            self._note("golden", Comparison(
                label, False, "exact", observed_dtype, list(value.shape),
                expected=entry["dtype"], observed=observed_dtype,
                message=f"{label}: dtype {observed_dtype} observed, {entry['dtype']} recorded at baseline",
            ))
        if exact:
            self._note("golden", compare_exact(label, value, expected))
        else:
            self._note("golden", self._within("golden", label, value, expected, scale))

    def golden_exact(self, key: str, value) -> None:
        self.golden(key, value, exact=True)

    def golden_fact(self, key: str, fact) -> None:
        """A JSON-able fact (dtype names, a tree structure, a flag) equals the baseline's."""
        if self.recording:
            self.store.record(self.family, key, {"fact": fact})
            self._add_kind("golden")
            return
        entry = self.store.get(self.family, key)
        self._note("golden", compare_exact(f"golden:{key}", _jsonable(fact), entry.get("fact")))

    def error_contract(self, key: str, fn, *args, **kwargs):
        """Call fn; the exception type it raises, or NO_ERROR, must match the baseline's.

        Returns the exception (or the result) so the test may check more.
        """
        try:
            result = fn(*args, **kwargs)
            observed = NO_ERROR
        except Exception as exc:  # the type is the contract, whatever it is
            result = exc
            observed = type(exc).__name__
        self.error_observed[key] = {
            "observed": observed,
            "message": "" if observed is None else (str(result).splitlines() or [""])[0][:300],
            # When the call succeeds, say what it produced: a "now silent" change is then readable.
            "result": _layout(result) if observed is None else None,
        }
        if self.recording:
            self.store.record(self.family, key, {"error": observed})
            self._add_kind("error-contract")
            return result
        entry = self.store.get(self.family, key)
        expected = entry.get("error")
        label = f"error:{key}"
        passed = observed == expected
        message = ""
        if not passed:
            message = f"{label}: {_describe_error(expected)} at baseline, {_describe_error(observed)} now"
            if observed is not None:
                message += f" ({self.error_observed[key]['message']})"
            else:
                message += f"; the call returned {self.error_observed[key]['result']}"
        self._note("error-contract", Comparison(
            label, passed, "exact", "exception", [], expected=expected, observed=observed, message=message,
        ))
        return result

    # -- independent references and literal contracts ------------------------------------------
    def reference(self, label: str, value, expected_f64, *, scale=1.0) -> None:
        """The value agrees with an independent float64 NumPy formula, within the reference tolerance.

        ``scale`` is the magnitude of the operands (a number, or one per element) when the result is a
        sum or difference of them: rounding error is relative to the operands, not to a result that
        cancelled to near zero, so the absolute floor is multiplied by it, elementwise (a scale below
        1 tightens it). The report records the largest floor used.
        """
        self._note("reference", self._within("reference", f"reference:{label}", value, expected_f64, scale))

    def agree(self, label: str, value, other) -> None:
        """Two computations that are equal in exact arithmetic agree within the equivalence tolerance."""
        self._note("reference", self._within("equivalence", f"equivalence:{label}", value, other))

    def _within(self, policy: str, label: str, value, expected, scale=1.0) -> Comparison:
        """compare_close under the policy's tolerance for value's dtype, the floor times `scale`."""
        value = np.asarray(value)
        dtype = _dtype_name(value)
        tol = tolerances.lookup(policy, _float_dtype(dtype), self.check_id)
        atol = tol.atol * np.asarray(scale, dtype=np.float64)
        return compare_close(label, value, np.asarray(expected), tol.rtol, atol, dtype)

    def exact(self, label: str, value, expected) -> None:
        """The value equals what the contract states, exactly (counters, zeros, dtypes)."""
        self._note("exact", compare_exact(f"exact:{label}", _jsonable(value), _jsonable(expected)))

    def identical(self, label: str, value, other) -> None:
        """Bit-for-bit identity (dtype, shape and every bit: -0.0 differs from 0.0), e.g. after a restore."""
        a, b = np.asarray(value), np.asarray(other)
        same = a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        comparison = Comparison(f"identical:{label}", same, "exact", str(a.dtype), list(a.shape), size=int(a.size))
        if not same:
            comparison.message = (f"identical:{label}: not bit-identical: {a.dtype}{list(a.shape)} observed, "
                                  f"{b.dtype}{list(b.shape)} expected")
            if a.shape == b.shape and a.dtype == b.dtype:
                a_bytes = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.itemsize)
                b_bytes = np.ascontiguousarray(b).reshape(-1).view(np.uint8).reshape(b.size, b.itemsize)
                comparison.mismatched = int((a_bytes != b_bytes).any(axis=1).sum())
                abs_err, rel_err = errors(a, b)
                comparison.max_abs_err, comparison.max_rel_err = float(abs_err.max()), float(rel_err.max())
                comparison.message += f"; max abs err {comparison.max_abs_err:.3g}"
        self._note("exact", comparison)

    def bound(self, label: str, value, limit, *, kind: str = "reference") -> None:
        """Every element of value is <= limit, allowing the tolerance of value's dtype above it."""
        value = np.asarray(value)
        dtype = _dtype_name(value)
        tol = tolerances.lookup(kind, _float_dtype(dtype), self.check_id)
        limit_arr = np.broadcast_to(np.asarray(limit, dtype=np.float64), value.shape)
        excess = np.maximum(value.astype(np.float64) - limit_arr, 0.0)
        allowed = tol.atol + tol.rtol * np.abs(limit_arr)
        bad = ~(excess <= allowed)
        comparison = Comparison(
            f"bound:{label}", not bad.any(), tol.as_dict(), dtype, list(value.shape),
            max_abs_err=float(excess.max()) if excess.size else 0.0,
            max_rel_err=float((excess / np.maximum(np.abs(limit_arr), 1e-300)).max()) if excess.size else 0.0,
            mismatched=int(bad.sum()), size=int(value.size),
        )
        if bad.any():
            comparison.message = (
                f"bound:{label} [{dtype}]: {comparison.mismatched} of {comparison.size} elements exceed "
                f"the limit by up to {comparison.max_abs_err:.3g} (allowed {float(allowed.max()):.3g})"
            )
        self._note("bound", comparison)

    def series(self, name: str, x, y) -> None:
        """Keep a curve (a schedule, a loss trajectory) in the report for plots; compares nothing."""
        self.curves[name] = {"x": [float(v) for v in np.asarray(x, np.float64).ravel()],
                             "y": [float(v) for v in np.asarray(y, np.float64).ravel()]}

    # -- for the plugin ------------------------------------------------------------------------
    def summary(self) -> dict:
        rows = list(self.comparisons.values())
        abs_errs = [r["max_abs_err"] for r in rows if r.get("max_abs_err") is not None]
        rel_errs = [r["max_rel_err"] for r in rows if r.get("max_rel_err") is not None]
        return {
            "comparisons": rows,
            "max_abs_err": max(abs_errs) if abs_errs else None,
            "max_rel_err": max(rel_errs) if rel_errs else None,
            "errors_observed": self.error_observed,
            "series": self.curves,
        }


def _layout(value) -> list | str:
    """Paths, shapes and dtypes of a result's array leaves (a pytree when JAX is installed)."""
    try:
        from jax import tree_util

        leaves = tree_util.tree_flatten_with_path(value)[0]
        return [[tree_util.keystr(path), str(getattr(leaf, "dtype", type(leaf).__name__)),
                 list(getattr(leaf, "shape", []))] for path, leaf in leaves][:50]
    except Exception:  # not a pytree of arrays: a short description is enough
        return repr(value)[:300]


def _describe_error(name) -> str:
    return "no error" if name is None else name


def _jsonable(value):
    if isinstance(value, (str, bool, int, float, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value
