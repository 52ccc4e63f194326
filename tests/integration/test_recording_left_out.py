"""`golden` records on each emulated host only the checks the measured map says it moves, this commit's share of
the others and the new ones (harness.stack.entry_side.noise_runs, host_map): an emulated run leaves the rest out
with --harness-except, and its folder says which (host_emulation.LEFT_OUT). The recording then keeps the host noise
a left-out value's file held while the value is recorded the same, and counts those values apart; a value an
emulated run did not reach for another reason (its check deselected, failed or raised there) is still said to have
no host noise measured."""

from __future__ import annotations

import json

from harness.host_emulation import HOST_NOISE, LEFT_OUT


def _plant_host_noise(pytester, noise: dict) -> None:
    """As a previous recording measured it: `value`'s host noise in the family's file."""
    path = pytester.path / "golden" / "demo.json"
    doc = json.loads(path.read_text())
    doc["values"]["value"][HOST_NOISE] = noise
    path.write_text(json.dumps(doc))


def _host_noise(pytester) -> dict | None:
    return json.loads((pytester.path / "golden" / "demo.json").read_text())["values"]["value"].get(HOST_NOISE)


def test_a_value_the_map_left_out_keeps_its_host_noise_and_is_counted_apart(recorded_suite, pytester):
    _plant_host_noise(pytester, {"blas": 1e-6})
    emulated = pytester.mkdir("emulated-blas")
    (emulated / LEFT_OUT).write_text("demo/test_golden_value\n")
    result, _ = recorded_suite("--harness-record-golden", "--harness-observe-noise", f"--harness-golden-dir={emulated}",
                               f"--harness-except={emulated / LEFT_OUT}", report="emulated.json")
    assert result.ret == 0, result.stdout.str()
    assert "value" not in json.loads((emulated / "demo.json").read_text())["values"]  # left out there: not run
    result, _ = recorded_suite("--harness-record-golden", f"--harness-host-noise-from=blas={emulated}",
                               report="recording.json")
    said = result.stdout.str()
    assert result.ret == 0, said
    assert _host_noise(pytester) == {"blas": 1e-6}
    assert "1 values of checks the emulated hosts' runs left out" in said and "no host noise for" not in said


def test_a_value_an_emulated_run_did_not_reach_otherwise_is_said_to_have_none_measured(recorded_suite, pytester):
    _plant_host_noise(pytester, {"blas": 1e-6})
    emulated = pytester.mkdir("emulated-blas")
    result, _ = recorded_suite("--harness-record-golden", "--harness-observe-noise", f"--harness-golden-dir={emulated}",
                               "-k", "not test_golden_value", report="emulated.json")
    assert result.ret == 0, result.stdout.str()
    result, _ = recorded_suite("--harness-record-golden", f"--harness-host-noise-from=blas={emulated}",
                               report="recording.json")
    said = result.stdout.str()
    assert result.ret == 0, said
    assert "no host noise for 1 values (demo/value)" in said and "left out" not in said
