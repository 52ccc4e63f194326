"""A golden value's numerical noise (harness.contract.noise, harness.numerical_noise): recorded from what the
perturbed compilations recorded, allowed only on another stack than the recording's, and never beyond it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness import numerical_noise
from harness.contract import environment
from harness.contract.checks import Check, ContractFailure
from harness.contract.encoding import encode_array
from harness.contract.families import Family
from harness.contract.golden import GoldenStore

RECORDED_ON = {"python": "3.12.1", "jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.12",
               "numpy": "2.5.5"}
FAM = Family("fam", own=True)  # one of the team's own families
BUMPED = {**RECORDED_ON, "jax": "0.12.0.1", "jaxlib": "0.12.0.1"}
# A small element of a trained tree beside a large one, and what the perturbed compilations made of them.
BASELINE = np.array([5.2312389e-06, 0.25], np.float32)
PERTURBED = (np.array([5.2331e-06, 0.25000003], np.float32), np.array([5.2301e-06, 0.25], np.float32))


def _recorded(tmp_path, noise_from=()) -> GoldenStore:
    """The team's `params` recorded on RECORDED_ON, with the perturbed folders' values as its noise."""
    store = GoldenStore(tmp_path / "golden", noise_from=noise_from)
    check = Check("fam/test_params", "fam", store, recording=True, own=True)
    check.golden("params", BASELINE)
    store.write({"entry": "baseline", "versions": RECORDED_ON})
    return store


def _perturbed(tmp_path) -> list:
    folders = []
    for i, values in enumerate(PERTURBED):
        folder = tmp_path / f"perturbed{i}"
        observed = GoldenStore(folder)
        observed.record(FAM, "params", encode_array(values))
        observed.write({"observed": "numerical noise"})
        folders.append(folder)
    return folders


def _noise() -> float:
    """The largest move, computed here in float64 from the arrays above."""
    return max(float(np.max(np.abs(p.astype(np.float64) - BASELINE.astype(np.float64)))) for p in PERTURBED)


def _judged_on(tmp_path, monkeypatch, versions: dict, observed) -> Check:
    monkeypatch.setattr(environment, "versions", lambda: versions)
    check = Check("fam/test_params", "fam", GoldenStore(tmp_path / "golden"), own=True)
    check.defer_golden = True
    check.golden("params", observed)
    return check


def test_a_recording_keeps_each_values_largest_move_under_the_perturbed_compilations(tmp_path):
    _recorded(tmp_path, _perturbed(tmp_path))
    entry = json.loads((tmp_path / "golden" / "fam.json").read_text())["values"]["params"]
    assert entry["noise"] == _noise() and _noise() > 0


def test_a_move_within_the_noise_on_another_stack_passes_as_noise(tmp_path, monkeypatch):
    _recorded(tmp_path, _perturbed(tmp_path))
    moved = BASELINE.copy()
    moved[0] = np.float32(5.23321796e-06)  # 4.35e3 ulp of float32 at its value, less than the noise
    check = _judged_on(tmp_path, monkeypatch, BUMPED, moved)
    check.raise_mismatches()  # nothing kept: it held
    judged = check.comparisons["golden:params"]
    assert judged.passed and judged.noise is not None and judged.noise.within
    assert judged.noise.measured == _noise() and judged.noise.allowed == numerical_noise.FACTOR * _noise()
    assert judged.noise.used == pytest.approx(float(abs(np.float64(moved[0]) - np.float64(BASELINE[0])))
                                              / (numerical_noise.FACTOR * _noise()))
    assert judged.worst is not None and judged.worst.index == [0]  # what moved, for the verdict


def test_the_recording_stack_is_judged_at_its_golden_ulps_alone(tmp_path, monkeypatch):
    """The same stack as the recording's: the team's code changed, not the stack; no noise is allowed."""
    _recorded(tmp_path, _perturbed(tmp_path))
    moved = BASELINE.copy()
    moved[0] = np.float32(5.23321796e-06)
    check = _judged_on(tmp_path, monkeypatch, RECORDED_ON, moved)
    with pytest.raises(ContractFailure, match="golden:params"):
        check.raise_mismatches()
    assert check.comparisons["golden:params"].noise is None


def test_a_move_beyond_the_noise_is_a_change_with_its_size(tmp_path, monkeypatch):
    _recorded(tmp_path, _perturbed(tmp_path))
    moved = BASELINE.copy()
    moved[1] = np.float32(0.25 * 1.0001)  # a formula's change: far beyond the measured noise
    check = _judged_on(tmp_path, monkeypatch, BUMPED, moved)
    with pytest.raises(ContractFailure, match="golden:params"):
        check.raise_mismatches()
    judged = check.comparisons["golden:params"]
    assert not judged.passed and not judged.noise.within and judged.noise.used > 1


def test_a_value_recorded_without_noise_is_judged_at_its_ulps_on_every_stack(tmp_path, monkeypatch):
    _recorded(tmp_path)
    moved = BASELINE.copy()
    moved[0] = np.float32(5.23321796e-06)
    check = _judged_on(tmp_path, monkeypatch, BUMPED, moved)
    with pytest.raises(ContractFailure):
        check.raise_mismatches()


def test_a_file_that_does_not_say_its_stack_allows_no_noise(tmp_path, monkeypatch):
    store = GoldenStore(tmp_path / "golden", noise_from=_perturbed(tmp_path))
    Check("fam/test_params", "fam", store, recording=True, own=True).golden("params", BASELINE)
    store.write({"entry": "baseline"})  # written before files said which stack recorded them
    moved = BASELINE.copy()
    moved[0] = np.float32(5.23321796e-06)
    with pytest.raises(ContractFailure):
        _judged_on(tmp_path, monkeypatch, BUMPED, moved).raise_mismatches()


def test_noise_measured_anew_is_written_without_accepting_and_kept_when_not_measured(tmp_path, monkeypatch):
    monkeypatch.setattr(environment, "versions", lambda: RECORDED_ON)
    _recorded(tmp_path)  # first without noise
    again = _recorded(tmp_path, _perturbed(tmp_path))  # the same values, now with their noise
    assert again.changes() == []  # not a change to accept
    file = tmp_path / "golden" / "fam.json"
    assert json.loads(file.read_text())["values"]["params"]["noise"] == _noise()
    _recorded(tmp_path)  # recorded again without perturbed runs: the noise the file holds stays
    assert json.loads(file.read_text())["values"]["params"]["noise"] == _noise()


def test_values_recorded_the_same_on_a_new_stack_are_written_as_that_stacks(tmp_path, monkeypatch):
    """accept on a bump that moves none of a family's bits: its file now says the new stack recorded it."""
    _recorded(tmp_path)
    monkeypatch.setattr(environment, "versions", lambda: BUMPED)
    store = GoldenStore(tmp_path / "golden")
    Check("fam/test_params", "fam", store, recording=True, own=True).golden("params", BASELINE)
    assert store.changes() == [] and store.write({"entry": "baseline", "versions": BUMPED})
    assert json.loads((tmp_path / "golden" / "fam.json").read_text())["provenance"]["versions"] == BUMPED
