"""A failed check points at the contract's own line; a plain test names every golden key that differs,
while a Hypothesis property and the other comparison kinds still fail at once."""

import pytest

STEPS = '''
import os
import numpy as np
import pytest

pytestmark = pytest.mark.family("steps")
MOVED = {int(step) for step in os.environ.get("MOVED_STEPS", "").split(",") if step}


def test_steps(check):
    for step in range(4):
        loss = np.float32(1.0 / (step + 1)) * np.float32(1.5 if step in MOVED else 1.0)
        check.golden(f"loss/step{step}", loss)
'''

# Checks against the values test_steps recorded (loss/step0 is 1.0, loss/step1 is 0.5).
AGAINST_STEPS = '''
import numpy as np
import pytest
from hypothesis import given, strategies as st

pytestmark = pytest.mark.family("steps")


@given(x=st.integers(0, 3))
def test_property(check, x):
    check.golden("loss/step0", np.float32(1.0) + np.float32(x))


def test_inner_property(check):
    @given(x=st.integers(0, 3))
    def inner(x):
        check.golden("loss/step0", np.float32(1.0) + np.float32(x))

    inner()


def test_exact_first(check):
    check.exact("first", 1, 2)
    check.golden("loss/step0", np.float32(1.0))


def test_exact_after(check):
    check.golden("loss/step1", np.float32(7.0))
    check.exact("after", 1, 2)


def test_missing_after(check):
    check.golden("loss/step1", np.float32(7.0))
    check.golden("loss/step9", np.float32(1.0))


def test_bound(check):
    check.bound("x", np.float32(2.0), 1.0)
'''

TREE = '''
import os
import numpy as np
import pytest

pytestmark = pytest.mark.family("tree")


def test_tree(check):
    tree = {"a": np.zeros(2, np.float32)}
    if os.environ.get("GROWN"):
        tree["b"] = np.ones(1, np.float32)
    check.golden_tree("state", tree)
'''


@pytest.fixture
def steps(suite, pytester, monkeypatch):
    """The STEPS contract with its golden values recorded; returns the suite's runner."""
    monkeypatch.delenv("MOVED_STEPS", raising=False)
    pytester.makepyfile(test_steps=STEPS, test_against=AGAINST_STEPS)
    result, _ = suite("--harness-record-golden", "test_steps.py", report="recording.json")
    assert result.ret == 0, result.stdout.str()
    return suite


def _line(pytester, name: str, text: str) -> int:
    """The line number of the first line of a written test module that contains text."""
    lines = (pytester.path / name).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _check(doc, name: str) -> dict:
    return next(c for c in doc["checks"] if c["id"].endswith(f"/{name}"))


def test_every_golden_key_that_differs_is_named_at_its_contract_line(steps, pytester, monkeypatch):
    monkeypatch.setenv("MOVED_STEPS", "1,3")
    result, doc = steps("test_steps.py")
    check = _check(doc, "test_steps")
    assert check["outcome"] == "failed" and check["exception"] == "ContractFailure"
    first, *messages = check["message"].splitlines()
    assert first == "2 golden values differ from their recording:"
    assert [m.split(" [", 1)[0] for m in messages] == ["golden:loss/step1", "golden:loss/step3"]
    # every comparison is in the report, the ones that passed too
    assert {c["label"]: c["passed"] for c in check["comparisons"]} == {
        "golden:loss/step0": True, "golden:loss/step1": False, "golden:loss/step2": True, "golden:loss/step3": False}
    line = _line(pytester, "test_steps.py", "check.golden(")
    result.stdout.fnmatch_lines([
        "*2 golden values differ from their recording*",
        f"test_steps.py:{line}: in test_steps",
        '    check.golden(f"loss/step{step}", loss)',
        "E   golden:loss/step1 [[]float32*",
        f"test_steps.py:{line}: in test_steps",
        '    check.golden(f"loss/step{step}", loss)',
        "E   golden:loss/step3 [[]float32*",
    ])
    assert "checks.py" not in result.stdout.str() and "plugin.py" not in result.stdout.str()


def test_one_golden_key_that_differs_reads_as_its_comparison(steps, monkeypatch):
    monkeypatch.setenv("MOVED_STEPS", "2")
    _, doc = steps("test_steps.py")
    check = _check(doc, "test_steps")
    failed = [c for c in check["comparisons"] if not c["passed"]]
    assert [c["label"] for c in failed] == ["golden:loss/step2"]
    assert check["outcome"] == "failed" and check["message"] == failed[0]["message"]


def test_a_property_still_fails_at_once_so_hypothesis_shrinks(steps):
    _, doc = steps("test_against.py::test_property")
    check = _check(doc, "test_property")
    assert check["outcome"] == "failed" and "x=1" in check["falsifying_example"]
    assert check["message"].startswith("golden:loss/step0") and "observed 2.0" in check["message"]


def test_a_property_inside_a_plain_test_still_fails_at_once(steps):
    _, doc = steps("test_against.py::test_inner_property")
    check = _check(doc, "test_inner_property")
    assert check["outcome"] == "failed"
    assert check["message"].startswith("golden:loss/step0") and "observed 2.0" in check["message"]  # shrunk: x=1


def test_other_comparisons_still_fail_at_once(steps):
    _, doc = steps("test_against.py::test_exact_first")
    check = _check(doc, "test_exact_first")
    assert check["message"].startswith("exact:first")
    assert [c["label"] for c in check["comparisons"]] == ["exact:first"]  # the golden value after it never ran


def test_what_ends_the_test_after_a_golden_mismatch_is_named_too(steps, pytester):
    result, doc = steps("test_against.py::test_exact_after")
    check = _check(doc, "test_exact_after")
    golden, after = check["message"].splitlines()
    assert check["outcome"] == "failed" and golden.startswith("golden:loss/step1 [float32")
    assert after.startswith("after it, the check raised ContractFailure: exact:after")
    result.stdout.fnmatch_lines([
        f"test_against.py:{_line(pytester, 'test_against.py', 'check.golden(\"loss/step1\"')}: in test_exact_after",
        "after it, the check raised:",
        '>       check.exact("after", 1, 2)',
    ])
    assert "checks.py" not in result.stdout.str()


def test_a_missing_golden_value_after_a_mismatch_does_not_hide_it(steps):
    _, doc = steps("test_against.py::test_missing_after")
    check = _check(doc, "test_missing_after")
    assert check["outcome"] == "failed"  # a value that differs is a finding, not "cannot judge"
    assert check["message"].startswith("golden:loss/step1 [float32")
    assert "after it, the check raised GoldenProblem: golden entry 'loss/step9' is missing" in check["message"]


def test_a_changed_tree_layout_fails_on_the_layout_alone(suite, pytester, monkeypatch):
    monkeypatch.delenv("GROWN", raising=False)
    pytester.makepyfile(test_tree=TREE)
    result, _ = suite("--harness-record-golden", "test_tree.py", report="recording.json")
    assert result.ret == 0, result.stdout.str()
    monkeypatch.setenv("GROWN", "1")
    _, doc = suite("test_tree.py")
    check = _check(doc, "test_tree")
    assert check["outcome"] == "failed"  # not "error": the new leaf has no golden value, and is not looked up
    assert check["message"].startswith("golden:state/layout: changed from the baseline")
    assert [c["label"] for c in check["comparisons"]] == ["golden:state/layout"]


def test_a_failed_check_points_at_the_contract_line_not_the_harness(steps, pytester):
    result, _ = steps("test_against.py::test_bound")
    result.stdout.fnmatch_lines([
        '>       check.bound("x", np.float32(2.0), 1.0)',
        "E       harness.contract.checks.ContractFailure: bound:x*",
        f"test_against.py:{_line(pytester, 'test_against.py', 'check.bound(')}: ContractFailure",
    ])
    assert "checks.py" not in result.stdout.str()
