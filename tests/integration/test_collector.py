"""A harness run collects Python's young generation less often (harness.contract.collector) and gives
the thresholds back when it ends; any other pytest run keeps Python's."""

import gc
import json

import pytest

from harness.contract import collector

PROBE = '''
import gc
import json

from _pytest.unraisableexception import gc_collect_iterations_key


def test_probe(request):
    print("\\nTHRESHOLDS " + json.dumps(gc.get_threshold()))
    print("FINAL_COLLECTIONS " + json.dumps(request.config.stash.get(gc_collect_iterations_key, None)))
'''


@pytest.fixture
def run(pytester, monkeypatch):
    """run(*args) -> the thresholds the probe test saw, in a pytest run inside this process."""
    for name in ("HARNESS_REPORT", "HARNESS_PROFILE", "HARNESS_ONLY", "CI"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_probe=PROBE)

    def probe(*args):
        return tuple(_seen(pytester.runpytest_inprocess("-s", "-p", "no:cacheprovider", *args))["THRESHOLDS"])

    return probe


def _seen(result) -> dict:
    """What the probe printed (JSON), by its line's first word."""
    result.assert_outcomes(passed=1)
    printed = (line.split(" ", 1) for line in result.outlines if line.startswith(("THRESHOLDS ", "FINAL_COLLECTIONS ")))
    return {word: json.loads(value) for word, value in printed}


def test_a_harness_run_relaxes_the_thresholds_and_restores_them(run, tmp_path):
    before = gc.get_threshold()
    seen = run("--harness-profile", "dev", "--harness-report", str(tmp_path / "report.json"))
    assert seen == collector.THRESHOLDS != before
    assert gc.get_threshold() == before


def test_a_plain_run_keeps_pythons_thresholds(run):
    before = gc.get_threshold()
    assert run() == before
    assert gc.get_threshold() == before


def test_a_harness_run_skips_pytests_collections_after_its_report(pytester, monkeypatch, tmp_path):
    """pytest's unraisable-exception plugin runs a full collection when the run ends (~0.4 s a pass with a
    contract run's heap), after the report is written: a harness run asks for none; a plain run keeps it.
    Subprocesses: pytester's in-process runs turn that collection off themselves."""
    for name in ("HARNESS_REPORT", "HARNESS_PROFILE", "HARNESS_ONLY", "CI"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_probe=PROBE)
    args = ("-s", "-p", "no:cacheprovider", "-p", "harness.contract.plugin")
    harness = _seen(pytester.runpytest_subprocess(*args, "--harness-profile", "dev",
                                                  "--harness-report", str(tmp_path / "report.json")))
    plain = _seen(pytester.runpytest_subprocess(*args))
    assert harness["FINAL_COLLECTIONS"] == 0
    assert plain["FINAL_COLLECTIONS"] is None
