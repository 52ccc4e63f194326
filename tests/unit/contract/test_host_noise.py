"""A golden value's host noise (harness.contract.noise, harness.host_emulation): recorded per dimension from what
the emulated hosts recorded, allowed only on a host that differs from the recording's in that dimension, never
beyond FACTOR times it, and a value judged so kept exactly for the verdict's judgement of the other entries."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness import host_emulation
from harness.contract import environment
from harness.contract.checks import Check, ContractFailure
from harness.contract.encoding import encode_array
from harness.contract.families import Family
from harness.contract.golden import GoldenStore
from harness.model.host import Dimension, Host, provenance

FAM = Family("initializers")
RECORDING_HOST = Host(cpu="AMD EPYC", machine="x86_64", numerics_features=["avx512_bf16", "fma"], vector="AVX512",
                      fma=True, blas="SkylakeX")
OTHER_KERNEL = Host(**{**provenance(RECORDING_HOST), "blas": "Haswell"})  # OPENBLAS_CORETYPE=Haswell
NO_AVX512 = Host(**{**provenance(RECORDING_HOST), "vector": "AVX2"})
# A QR factor's elements as the recording host computed them, and as two other kernels did (the small one moves).
RECORDED = np.array([0.0201833, -0.9374888, 0.3481067], np.float32)
KERNELS = {"blas-haswell": np.array([0.02018342, -0.9374888, 0.3481067], np.float32),
           "blas-prescott": np.array([0.02018318, -0.9374888, 0.34810673], np.float32)}
LARGE = np.linspace(-1.0, 1.0, 300, dtype=np.float32)  # beyond what a report keeps exactly unless asked


def _emulated(tmp_path) -> dict[str, list]:
    folders = []
    for name, values in KERNELS.items():
        folder = tmp_path / name
        observed = GoldenStore(folder)
        observed.record(FAM, "q", encode_array(values))
        observed.record(FAM, "large", encode_array(LARGE + np.float32(1e-7)))
        observed.record(FAM, "still", encode_array(np.float32(0.5)))
        observed.write({"observed": "noise"})
        folders.append(str(folder))
    return {"blas": folders}


def _recorded(tmp_path, host_noise_from=None) -> GoldenStore:
    store = GoldenStore(tmp_path / "golden", host_noise_from=host_noise_from)
    check = Check("initializers/test_q", "initializers", store, recording=True)
    check.golden("q", RECORDED)
    check.golden("large", LARGE)
    check.golden("still", np.float32(0.5))
    store.write({"entry": "baseline", "host": provenance(RECORDING_HOST)})
    return store


def _noise() -> float:
    return max(float(np.max(np.abs(v.astype(np.float64) - RECORDED.astype(np.float64)))) for v in KERNELS.values())


def _judged_on(tmp_path, monkeypatch, host: Host, observed, key="q") -> Check:
    monkeypatch.setattr(environment, "host", lambda: host)
    check = Check("initializers/test_q", "initializers", GoldenStore(tmp_path / "golden"))
    check.defer_golden = True
    check.golden(key, observed)
    return check


def test_a_recording_keeps_each_values_largest_move_per_dimension_and_only_moves(tmp_path):
    _recorded(tmp_path, _emulated(tmp_path))
    doc = json.loads((tmp_path / "golden" / "initializers.json").read_text())
    assert doc["values"]["q"]["host_noise"] == {"blas": _noise()} and _noise() > 0
    assert "host_noise" not in doc["values"]["still"]  # reached, never moved: nothing written
    assert doc["provenance"]["host"]["blas"] == "SkylakeX"


def test_a_move_within_the_host_noise_on_a_host_that_differs_there_is_host_drift(tmp_path, monkeypatch):
    _recorded(tmp_path, _emulated(tmp_path))
    moved = RECORDED.copy()
    moved[0] = np.float32(0.0201835)  # 107 ulp at the value (the kernels moved it 65): within 4x their move
    check = _judged_on(tmp_path, monkeypatch, OTHER_KERNEL, moved)
    check.raise_mismatches()  # nothing kept: it held, as host drift
    judged = check.comparisons["golden:q"]
    assert judged.passed and judged.host is not None and judged.host.within
    assert judged.host.dimensions == [Dimension.BLAS]
    assert judged.host.measured == _noise() and judged.host.allowed == host_emulation.FACTOR * _noise()
    assert judged.values.values == [float(x) for x in moved]  # kept exactly: the verdict judges the others on it


def test_the_recording_host_and_a_dimension_without_noise_are_judged_at_the_golden_ulps(tmp_path, monkeypatch):
    """The recording's own host: nothing may drift; another vector width: the kernels' noise says nothing of it."""
    _recorded(tmp_path, _emulated(tmp_path))
    moved = RECORDED.copy()
    moved[0] = np.float32(0.0201835)
    for host in (RECORDING_HOST, NO_AVX512):
        check = _judged_on(tmp_path, monkeypatch, host, moved)
        with pytest.raises(ContractFailure, match="golden:q"):
            check.raise_mismatches()
        assert check.comparisons["golden:q"].host is None


def test_a_move_beyond_the_host_noise_fails_with_its_judgement(tmp_path, monkeypatch):
    _recorded(tmp_path, _emulated(tmp_path))
    moved = RECORDED.copy()
    moved[2] = np.float32(0.3481067 * 1.001)  # a formula's change: far beyond the kernels' move
    check = _judged_on(tmp_path, monkeypatch, OTHER_KERNEL, moved)
    with pytest.raises(ContractFailure, match="golden:q"):
        check.raise_mismatches()
    judged = check.comparisons["golden:q"]
    assert not judged.passed and not judged.host.within and judged.host.used > 1


def test_a_large_value_with_host_noise_is_kept_exactly_on_another_host_even_when_it_holds(tmp_path, monkeypatch):
    _recorded(tmp_path, _emulated(tmp_path))
    here = _judged_on(tmp_path, monkeypatch, OTHER_KERNEL, LARGE, key="large").comparisons["golden:large"]
    assert here.passed and not here.host.drifted and here.values.values is not None and len(here.values.values) == 300
    home = _judged_on(tmp_path, monkeypatch, RECORDING_HOST, LARGE, key="large").comparisons["golden:large"]
    assert home.values.values is None  # on the recording's host: a digest, as always


def _store(tmp_path, host_noise_from=None) -> GoldenStore:
    """The recording's store, its values recorded and not yet written (what a recording's end reads)."""
    store = GoldenStore(tmp_path / "golden", host_noise_from=host_noise_from)
    check = Check("initializers/test_q", "initializers", store, recording=True)
    for key, value in (("q", RECORDED), ("large", LARGE), ("still", np.float32(0.5))):
        check.golden(key, value)
    return store


def test_measuring_again_replaces_the_host_noise_and_a_recording_without_emulations_keeps_it(tmp_path):
    _recorded(tmp_path, _emulated(tmp_path))
    path = tmp_path / "golden" / "initializers.json"
    plain = _store(tmp_path)  # no emulated hosts: nothing to write, the file's host noise stays
    assert plain.changes() == [] and plain.noise_updates() == []
    still = tmp_path / "still"
    observed = GoldenStore(still)
    for key, value in (("q", RECORDED), ("large", LARGE), ("still", np.float32(0.5))):
        observed.record(FAM, key, encode_array(value))
    observed.write({"observed": "noise"})
    again = _store(tmp_path, {"blas": [str(still)]})  # measured anew: no kernel moved it now
    assert again.changes() == []  # the values themselves never changed: nothing to accept
    assert again.noise_updates() == [(FAM, "large"), (FAM, "q")]  # their host noise is gone: written
    again.write({"entry": "baseline", "host": provenance(RECORDING_HOST), "host_noise_from": {"blas": ["still"]}})
    assert "host_noise" not in json.loads(path.read_text())["values"]["q"]
