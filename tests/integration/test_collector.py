"""A harness run collects Python's young generation less often (harness.contract.collector) and gives
the thresholds back when it ends; any other pytest run keeps Python's."""

import gc
import json

import pytest

from harness.contract import collector

PROBE = '''
import gc
import json


def test_probe():
    print("\\nTHRESHOLDS " + json.dumps(gc.get_threshold()))
'''


@pytest.fixture
def run(pytester, monkeypatch):
    """run(*args) -> the thresholds the probe test saw, in a pytest run inside this process."""
    for name in ("HARNESS_REPORT", "HARNESS_PROFILE", "HARNESS_ONLY", "CI"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_probe=PROBE)

    def probe(*args):
        result = pytester.runpytest_inprocess("-s", "-p", "no:cacheprovider", *args)
        result.assert_outcomes(passed=1)
        line = next(line for line in result.outlines if line.startswith("THRESHOLDS "))
        return tuple(json.loads(line.removeprefix("THRESHOLDS ")))

    return probe


def test_a_harness_run_relaxes_the_thresholds_and_restores_them(run, tmp_path):
    before = gc.get_threshold()
    seen = run("--harness-profile", "dev", "--harness-report", str(tmp_path / "report.json"))
    assert seen == collector.THRESHOLDS != before
    assert gc.get_threshold() == before


def test_a_plain_run_keeps_pythons_thresholds(run):
    before = gc.get_threshold()
    assert run() == before
    assert gc.get_threshold() == before
