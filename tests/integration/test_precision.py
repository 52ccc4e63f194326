"""A golden value is judged in the precision it was computed in: `float(loss)` of a float32 loss is a
float64 holding a float32 value, and a one-float32-ulp move of it is bits changed, not 2**29 float64 ulps.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/contract/test_precision.py."""

import json

import numpy as np
import pytest

from harness.verdict.classify import comparison_mark
from harness.model.enums import Mark
from harness.model import report_io
from unit.contract.test_precision import LOSS32, LOSSES32  # noqa: F401 (fixtures and helpers shared with it)


def _up(value, ulps: int, dtype=np.float32):
    """value moved up by `ulps` ulps of dtype, as a Python float."""
    x = np.asarray(value, dtype)
    for _ in range(ulps):
        x = np.nextafter(x, np.asarray(np.inf, dtype))
    return float(x)


STATED_CONTRACT = '''
import json
import pytest

pytestmark = pytest.mark.family("team")


def test_loss(check):
    check.golden("loss", json.load(open("losses.json"))[0], dtype="bfloat16")
'''


def test_a_stated_precision_the_candidate_no_longer_fits_is_a_dtype_change(suite, pytester):
    """Not a TypeError blaming the contract: the contract's statement held at the baseline."""
    pytester.makepyfile(test_team=STATED_CONTRACT)
    (pytester.path / "losses.json").write_text(json.dumps([0.69140625]))  # a bfloat16 value
    result, _ = suite("test_team.py", "--harness-record-golden", report="recording.json")
    assert result.ret == 0, result.stdout.str()
    (pytester.path / "losses.json").write_text(json.dumps([float(LOSS32)]))  # computed in float32 now
    result, doc = suite("test_team.py")
    assert result.ret == 1 and doc["checks"][0]["outcome"] == "failed"
    message = doc["checks"][0]["message"]
    assert "computed in float32 now" in message and "in bfloat16 at baseline" in message


LOSS_CONTRACT = '''
import json
import pytest

pytestmark = pytest.mark.family("team")


def test_loss(check):
    for step, loss in enumerate(json.load(open("losses.json"))):
        check.golden(f"loss/step{step}", loss)
'''


@pytest.fixture
def loss_suite(suite, pytester):
    pytester.makepyfile(test_team=LOSS_CONTRACT)

    def run(losses, *args, report="report.json"):
        (pytester.path / "losses.json").write_text(json.dumps(losses))
        return suite("test_team.py", *args, report=report)

    return run


def test_float_losses_record_their_precision_and_a_one_ulp_move_passes(loss_suite, pytester):
    recorded = [float(v) for v in LOSSES32]
    result, _ = loss_suite(recorded, "--harness-record-golden", report="recording.json")
    assert result.ret == 0, result.stdout.str()
    entry = json.loads((pytester.path / "golden" / "team.json").read_text())["values"]["loss/step0"]
    assert entry["dtype"] == "float64" and entry["precision"] == "float32" and "float(x)" in entry["why"]

    result, doc = loss_suite([_up(v, 1) for v in LOSSES32])
    assert result.ret == 0, result.stdout.str()
    comparison = doc["checks"][0]["comparisons"][0]
    assert comparison["dtype"] == "float32"  # the report speaks in the recorded precision
    assert comparison["values"]["dtype"] == "float32"

    result, doc = loss_suite([_up(v, 16) for v in LOSSES32])
    assert result.ret == 1
    assert "outside 8 ulp" in doc["checks"][0]["message"] and "[float32" in doc["checks"][0]["message"]


def test_a_value_now_computed_wider_is_a_dtype_change(loss_suite):
    loss_suite([float(v) for v in LOSSES32], "--harness-record-golden", report="recording.json")
    wider = [float(v) + 1e-12 for v in LOSSES32]  # no longer a float32 value: computed in float64 now
    result, doc = loss_suite(wider)
    check = doc["checks"][0]
    assert result.ret == 1 and "computed in float64 now" in check["message"]
    failed = next(c for c in report_io.parse(doc, "x").checks[0].comparisons if not c.passed)
    assert comparison_mark(failed) == Mark.STATE_CHANGED


def test_re_recording_says_when_only_the_precision_changed(loss_suite, pytester):
    loss_suite([float(v) for v in LOSSES32], "--harness-record-golden", report="recording.json")
    golden = pytester.path / "golden" / "team.json"
    old = json.loads(golden.read_text())
    for entry in old["values"].values():  # as recorded before precisions were kept
        del entry["precision"], entry["why"]
    golden.write_text(json.dumps(old))
    result, _ = loss_suite([float(v) for v in LOSSES32], "--harness-record-golden", report="again.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*changed team/loss/step0: values unchanged; precision float64 -> float32*"])
