"""`golden --measure-host` (harness.contract.host_measure): a host that differs from the recording's in a dimension
no flag emulates (native 16-bit arithmetic) measures its move of every recorded value as that dimension's host
noise, no value changing; the check then holds there as host drift, and a later recording that cannot emulate the
dimension keeps the noise while the value is recorded the same (harness.contract.noise.unmeasured_host_noise)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness import golden_layout
from harness.contract import environment, host_measure
from harness.contract.checks import Check, ContractFailure
from harness.contract.encoding import encode_array
from harness.contract.families import Family
from harness.contract.golden import GoldenStore
from harness.errors import HarnessError
from harness.model.host import Host, provenance

FAM = Family("random")
RECORDING_HOST = Host(cpu="AMD EPYC", machine="x86_64", numerics_features=["avx512_bf16", "fma"], vector="AVX512",
                      fma=True, blas="SkylakeX")
# A Xeon with native float16 arithmetic (avx512_fp16, AMX): it computes float16 draws otherwise.
FP16_HOST = Host(**{**provenance(RECORDING_HOST), "cpu": "Intel Xeon",
                    "numerics_features": ["amx_bf16", "avx512_bf16", "avx512_fp16", "fma"]})
RECORDED = np.array([1.78515625, -0.3330078125, 0.0003058910369873047], np.float16)
ON_FP16 = np.array([1.78125, -0.3330078125, 0.00029277801513671875], np.float16)  # as such a host drew them
UNMOVED = np.array([0.5, 0.25], np.float32)


def _store(folder, host: Host, draws, emulated=None) -> GoldenStore:
    store = GoldenStore(folder, host_noise_from=emulated)
    check = Check("random/test_draws", "random", store, recording=True)
    check.golden("draws", draws)
    check.golden("unmoved", UNMOVED)
    provenance_here = {"entry": "baseline", "host": provenance(host)}
    if emulated:
        provenance_here["host_noise_from"] = {d: [str(f) for f in fs] for d, fs in emulated.items()}
    store.write(provenance_here)
    return store


def _move() -> float:
    return float(np.max(np.abs(ON_FP16.astype(np.float64) - RECORDED.astype(np.float64))))


def _judged_on(golden, monkeypatch, host: Host, observed) -> Check:
    monkeypatch.setattr(environment, "host", lambda: host)
    check = Check("random/test_draws", "random", GoldenStore(golden))
    check.defer_golden = True
    check.golden("draws", observed)
    check.golden("unmoved", UNMOVED)
    return check


def test_a_host_with_native_float16_measures_its_move_and_no_value_changes(tmp_path, monkeypatch):
    _store(tmp_path / "golden", RECORDING_HOST, RECORDED)
    before = json.loads((tmp_path / "golden" / "random.json").read_text())
    with pytest.raises(ContractFailure, match=r"golden:draws .*2 of 3 elements outside 2 ulp"):  # no noise yet
        _judged_on(tmp_path / "golden", monkeypatch, FP16_HOST, ON_FP16).raise_mismatches()
    _store(tmp_path / "here", FP16_HOST, ON_FP16)
    found = host_measure.measure(tmp_path / "golden", tmp_path / "here")
    assert [(m.dimension.value, m.moved, m.values) for m in found] == [("numerics16", 1, 2)]
    after = json.loads((tmp_path / "golden" / "random.json").read_text())
    assert after["values"]["draws"]["host_noise"] == {"numerics16": _move()} and _move() > 0
    assert "host_noise" not in after["values"]["unmoved"]
    assert golden_layout.values_digest(after["values"]) == before["provenance"]["values_digest"]  # no value moved
    assert after["provenance"]["host_noise_from"] == {"numerics16": [FP16_HOST.text()]}
    assert after["provenance"]["host"] == before["provenance"]["host"]  # still the recording's statement
    _judged_on(tmp_path / "golden", monkeypatch, FP16_HOST, ON_FP16).raise_mismatches()  # host drift now
    with pytest.raises(ContractFailure):  # on the recording's own host no noise applies
        _judged_on(tmp_path / "golden", monkeypatch, RECORDING_HOST, ON_FP16).raise_mismatches()


def test_a_later_recording_keeps_the_noise_it_cannot_measure_while_the_value_is_the_same(tmp_path):
    _store(tmp_path / "golden", RECORDING_HOST, RECORDED)
    _store(tmp_path / "here", FP16_HOST, ON_FP16)
    host_measure.measure(tmp_path / "golden", tmp_path / "here")
    blas = tmp_path / "blas-haswell"
    _store(blas, RECORDING_HOST, RECORDED)  # an emulated kernel: float16 draws do not move with it
    _store(tmp_path / "golden", RECORDING_HOST, RECORDED, emulated={"blas": [blas]})  # recorded again, the same
    doc = json.loads((tmp_path / "golden" / "random.json").read_text())
    assert doc["values"]["draws"]["host_noise"] == {"numerics16": _move()}
    assert doc["provenance"]["host_noise_from"] == {"blas": [str(blas)], "numerics16": [FP16_HOST.text()]}
    moved = RECORDED.copy()
    moved[1] = np.float16(-0.33)  # the value itself changed: what was measured of the old one is not its noise
    store = GoldenStore(tmp_path / "golden", host_noise_from={"blas": [blas]})
    check = Check("random/test_draws", "random", store, recording=True, accepting=True)
    check.golden("draws", moved)
    check.golden("unmoved", UNMOVED)
    store.write({"entry": "baseline", "host": provenance(RECORDING_HOST), "host_noise_from": {"blas": [str(blas)]}})
    entry = json.loads((tmp_path / "golden" / "random.json").read_text())["values"]["draws"]
    assert "numerics16" not in entry.get("host_noise", {})


def test_a_host_that_differs_in_two_dimensions_is_refused_and_an_emulated_one_adds_nothing(tmp_path):
    _store(tmp_path / "golden", RECORDING_HOST, RECORDED)
    two = Host(**{**provenance(FP16_HOST), "blas": "Haswell"})
    _store(tmp_path / "here", two, ON_FP16)
    with pytest.raises(HarnessError, match=r"differs from the recording's .* in blas, numerics16 .*cannot be put "
                                           r"down to one of them.*OPENBLAS_CORETYPE=SkylakeX"):
        host_measure.measure(tmp_path / "golden", tmp_path / "here")
    before = (tmp_path / "golden" / "random.json").read_text()
    _store(tmp_path / "golden", RECORDING_HOST, RECORDED, emulated={"blas": [tmp_path / "here"]})
    kernel = Host(**{**provenance(RECORDING_HOST), "blas": "Haswell"})
    _store(tmp_path / "here2", kernel, RECORDED)
    found = host_measure.measure(tmp_path / "golden", tmp_path / "here2")
    assert [(m.written, m.moved) for m in found] == [(False, 0)] and "measured by the recording" in found[0].said
    assert before != (tmp_path / "golden" / "random.json").read_text()  # (the emulated recording rewrote it)


def test_measuring_again_keeps_the_largest_move_and_both_hosts(tmp_path):
    """A second host with native float16 (or the same one after a value changed) measures again, not refused as
    measured: the largest move of the two stays, and the file names both hosts."""
    _store(tmp_path / "golden", RECORDING_HOST, RECORDED)
    _store(tmp_path / "here", FP16_HOST, ON_FP16)
    host_measure.measure(tmp_path / "golden", tmp_path / "here")
    other = Host(**{**provenance(FP16_HOST), "cpu": "Intel Xeon 2"})
    smaller = RECORDED.copy()
    smaller[0] = np.float16(1.7841796875)  # a smaller move than the first host's
    _store(tmp_path / "here2", other, smaller)
    found = host_measure.measure(tmp_path / "golden", tmp_path / "here2")
    assert [(m.written, m.moved) for m in found] == [(True, 1)]
    doc = json.loads((tmp_path / "golden" / "random.json").read_text())
    assert doc["values"]["draws"]["host_noise"] == {"numerics16": _move()}
    assert doc["provenance"]["host_noise_from"] == {"numerics16": sorted([FP16_HOST.text(), other.text()])}
