"""The (rtol, atol) each comparison records: numpy.testing.assert_allclose with it passes on every value
the ulps comparison accepts, and fails on a value one representable step outside the allowance at the
elements that set the pair, in float64/float32/bfloat16/float16 and near zero.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/contract/test_allclose.py."""

import json

import numpy as np
import pytest

from harness.contract.encoding import decode_array


def _recheck(report_path, golden_dir, check_id, label):
    """docs/reading-the-verdict.md's re-check of a golden comparison, as a user runs it on a report."""
    report = json.load(open(report_path))
    check = next(c for c in report["checks"] if c["id"] == check_id)
    comparison = next(c for c in check["comparisons"] if c["label"] == label)
    family, key = check["family"], label.split(":", 1)[1]
    expected = decode_array(json.load(open(f"{golden_dir}/{family}.json"))["values"][key])
    observed = decode_array(comparison["values"])
    np.testing.assert_allclose(observed, expected, **comparison["allclose"])
    return comparison


def test_the_readme_recheck_runs_on_a_report_the_plugin_wrote(recorded_suite, pytester):
    recorded_suite()
    comparison = _recheck(pytester.path / "report.json", pytester.path / "golden", "demo/test_golden_value",
                          "golden:value")
    golden = np.float32([0.1, 0.2])
    assert comparison["allclose"] == {"rtol": pytest.approx(float((8 * np.spacing(golden) / golden).max())), "atol": 0.0}
    counter = _recheck(pytester.path / "report.json", pytester.path / "golden", "demo/test_golden_counter",
                       "golden:counter")
    assert counter["allclose"] == {"rtol": 0.0, "atol": 0.0}
