"""The golden values a branch changed, read from two golden files as the host reads them (plain Python): every
differing key, its move in ulps of its dtype at the base branch's value and relative to it, checked against an
independent NumPy float64 computation; the value shown in numbers that parse back to the exact values."""

from __future__ import annotations

import dataclasses
import json

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harness.contract.encoding import encode_array
from harness.contract.golden import dumps
from harness.model.golden_changes import GoldenChanges, Policy, ValueChangeKind, Writer
from harness.stack.run.golden_changes import file_changes


def _doc(values: dict, provenance: dict | None = None) -> dict:
    """A golden file as the store writes it, read back."""
    return json.loads(dumps({"format": 1, "family": "mine", "own": True, "provenance": provenance or {"entry": "b"},
                             "values": values}))


# Below the top binade: NumPy's float32 spacing there overflows to inf (the reference, not the code, cannot say it).
finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-2.0 ** 126, max_value=2.0 ** 126)


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=2, max_side=5), elements=finite32),
       st.data())
def test_a_changed_array_is_measured_in_ulps_at_the_base_value_as_numpy_measures_it(before, data):
    after = before.copy().reshape(-1)
    moved = data.draw(st.lists(st.integers(0, after.size - 1), min_size=1, max_size=after.size, unique=True))
    for i in moved:
        after[i] = data.draw(finite32.filter(lambda x, old=after[i]: np.float32(x) != old))
    after = after.reshape(before.shape)
    (change,) = file_changes("golden/mine.json", _doc({"k": encode_array(before)}),
                             _doc({"k": encode_array(after)}, {"entry": "b", "accepted": {"command": "c",
                                                                                         "reason": None}}))
    a, b = before.astype(np.float64).ravel(), after.astype(np.float64).ravel()
    differs = a != b
    ulps = np.abs(b - a)[differs] / np.spacing(np.abs(before.ravel()[differs])).astype(np.float64)
    assert change.kind == ValueChangeKind.CHANGED and change.dtype == "float32"
    assert (change.differing, change.size) == (int(differs.sum()), before.size)
    np.testing.assert_allclose(change.max_ulps, ulps.max(), rtol=1e-12)
    nonzero = differs & (a != 0)
    if nonzero.any():
        np.testing.assert_allclose(change.max_rel, (np.abs(b - a)[nonzero] / np.abs(a[nonzero])).max(), rtol=1e-12)
    worst = np.flatnonzero(differs)[np.argmax(ulps)]
    shown_before, shown_after = change.before, change.after
    if before.size > 4:  # the element that moved most, at its index: numbers whole, never cut
        index = "[" + ", ".join(map(str, np.unravel_index(worst, before.shape))) + "] "
        assert shown_before.startswith(index) and shown_after.startswith(index), (shown_before, index)
        assert np.float32(float(shown_before[len(index):])) == before.ravel()[worst]
        assert np.float32(float(shown_after[len(index):])) == after.ravel()[worst]
    else:  # small values whole
        texts = shown_before.strip("[]").split(", ")
        assert [np.float32(float(t)) for t in texts] == list(before.ravel())


def test_facts_errors_and_low_precision_values_are_shown_as_they_are():
    old = {"f": {"fact": {"lr": "0.1"}}, "e": {"error": None}, "h": encode_array(np.array([1.0], ml_dtypes.bfloat16)),
           "gone": {"fact": 1}}
    new = {"f": {"fact": {"lr": "0.2"}}, "e": {"error": "ValueError"},
           "h": encode_array(np.array([1.0078125], ml_dtypes.bfloat16)), "new": {"fact": 2}}
    found = {c.key: c for c in file_changes("golden/mine.json", _doc(old), _doc(new))}
    assert (found["f"].before, found["f"].after) == ('{"lr": "0.1"}', '{"lr": "0.2"}')
    assert (found["e"].before, found["e"].after) == ("no error", "ValueError")
    assert found["h"].max_ulps == 1.0 and found["h"].dtype == "bfloat16"  # bfloat16 keeps 7 bits: 1 → 1 + 2**-7
    assert (found["gone"].kind, found["new"].kind) == (ValueChangeKind.REMOVED, ValueChangeKind.ADDED)
    assert all(c.writer.by_hand for c in found.values())  # the same provenance on both sides: not recorded


def test_measured_noise_alone_is_no_change():
    value = encode_array(np.float32(0.5))
    assert file_changes("g.json", _doc({"k": value}), _doc({"k": {**value, "noise": 1e-8,
                                                                    "host_noise": {"fma": 1e-8}}})) == []


def test_what_fails_the_check_under_each_policy():
    accepted = Writer("golden --accept-changes", None)
    (change,) = file_changes("g.json", _doc({"k": {"fact": 1}}), _doc({"k": {"fact": 2}}, {"accepted": {
        "command": accepted.command, "reason": None}}))
    assert change.writer == accepted and change.needs_reason
    added = file_changes("g.json", _doc({}), _doc({"k": {"fact": 2}}, {"accepted": {"command": "x", "reason": None}}))
    assert not added[0].needs_reason  # a new contract's value replaces nothing
    assert GoldenChanges("main", "golden", Policy.FAIL, (change, *added)).fails
    assert not GoldenChanges("main", "golden", Policy.REPORT, (change,)).fails
    assert not GoldenChanges("main", "golden", Policy.FAIL, tuple(added)).fails


def test_what_needs_a_reason_is_what_a_check_would_otherwise_pass_on():
    """A changed value, and a recorded departure (a statement the branch now keeps as broken), need a reason; a
    removed value does not (a check that still reads it fails: its golden value is missing), nor a new contract's."""
    writer = {"accepted": {"command": "golden --accept-changes", "reason": None}}
    removed, = file_changes("g.json", _doc({"k": {"fact": 1}}), _doc({}, writer))
    departed, = file_changes("g.json", _doc({}), _doc({"departure/mine/test_x/reference:step": {"fact": 1}}, writer))
    added, = file_changes("g.json", _doc({}), _doc({"new": {"fact": 1}}, writer))
    assert (removed.kind, departed.kind, added.kind) == (ValueChangeKind.REMOVED, ValueChangeKind.ADDED,
                                                         ValueChangeKind.ADDED)
    assert (removed.needs_reason, departed.needs_reason, added.needs_reason) == (False, True, False)
    gone, = file_changes("g.json", _doc({"k": {"fact": 1}}), None)  # a contract deleted with its golden file
    assert not gone.needs_reason


def test_each_side_is_shown_in_its_own_precision_and_a_non_finite_move_has_no_ulps():
    before = {**encode_array(np.float64(1.0)), "precision": "float32"}
    after = {**encode_array(np.float64(1.0 + 2.0 ** -40)), "precision": "float64"}
    (change,) = file_changes("g.json", _doc({"k": before}), _doc({"k": after}))
    assert float(change.after) == 1.0 + 2.0 ** -40 and change.before != change.after
    (nan,) = file_changes("g.json", _doc({"k": encode_array(np.float32(1.0))}),
                          _doc({"k": encode_array(np.float32("nan"))}))
    assert nan.max_ulps is None and "nan" in nan.size_text
    json.dumps(dataclasses.asdict(nan), allow_nan=False)  # standard JSON: no Infinity
    (count,) = file_changes("g.json", _doc({"k": encode_array(np.int64(4))}), _doc({"k": encode_array(np.int64(6))}))
    assert count.size_text == "0.5 relative, 1 of 1 elements"


def test_a_value_edited_after_a_recording_with_a_reason_is_said_edited_by_hand():
    """The file's last recording gave a reason for its changes; a value edited after it does not inherit that
    reason: the digest the recording wrote no longer matches the values."""
    from harness import golden_layout

    recorded = {"k": {"fact": 2}, "other": {"fact": 1}}
    provenance = {"accepted": {"command": "golden --accept-changes", "reason": "decay doubled"},
                  golden_layout.VALUES_DIGEST: golden_layout.values_digest(recorded)}
    base = _doc({"k": {"fact": 1}, "other": {"fact": 1}})
    as_recorded = file_changes("g.json", base, _doc(recorded, provenance))
    assert [(c.key, c.writer.reason, c.needs_reason) for c in as_recorded] == [("k", "decay doubled", False)]
    edited = file_changes("g.json", base, _doc(dict(recorded, other={"fact": 9}), provenance))
    assert {c.key: c.writer.by_hand for c in edited} == {"k": True, "other": True}
    assert all(c.needs_reason for c in edited)
