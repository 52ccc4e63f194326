"""Fixtures for the harness's own tests: synthetic contract suites run through the real plugin."""

import json
import textwrap

import numpy  # noqa: F401  imported once here: in-process pytester runs must not re-import C extensions
import pytest

import harness.contract.plugin  # noqa: F401
from harness.model import report_io
from harness.model.enums import BuiltinMode
from harness.verdict import compare

try:
    import jax  # noqa: F401  the report records the JAX backend when JAX is installed
except ImportError:
    pass

pytest_plugins = ["pytester"]

# A tiny contract suite that needs no JAX: every outcome the report must represent.
SYNTHETIC_SUITE = '''
import warnings
import numpy as np
import pytest
from hypothesis import given, strategies as st

pytestmark = pytest.mark.family("demo")


def test_golden_value(check):
    check.golden("value", np.array([0.1, 0.2], np.float32))


def test_golden_counter(check):
    check.golden_exact("counter", np.array([0, 1], np.int32))


def test_reference(check):
    check.reference("third", np.float32(1.0) / np.float32(3.0), 1.0 / 3.0)


@given(x=st.floats(-10, 10, width=32).filter(lambda v: v == 0 or abs(v) > 1e-15))  # no float32 underflow
def test_property(check, x):
    check.reference("square", np.float32(x) * np.float32(x), float(x) ** 2)


def test_error(check):
    check.error_contract("bad", lambda: np.ones(2) + np.ones(3))


def test_deprecation(check):
    warnings.warn("old API", DeprecationWarning)
    check.exact("two", 1 + 1, 2)
'''


@pytest.fixture
def suite(pytester):
    """Write the synthetic suite and a conftest loading the plugin; returns a runner."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_demo=SYNTHETIC_SUITE)
    pytester.mkdir("golden")

    def run(*args, report="report.json", subprocess=False):
        runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest_inprocess
        result = runner("-q", "-p", "no:randomly", f"--harness-report={report}", "--harness-golden-dir=golden", *args)
        path = pytester.path / report
        return result, (json.loads(path.read_text()) if path.exists() else None)

    return run


@pytest.fixture
def recorded_suite(suite, pytester):
    """The synthetic suite with its golden values recorded."""
    result, _ = suite("--harness-record-golden", report="recording.json")
    assert result.ret == 0, result.stdout.str()
    return suite


@pytest.fixture
def judge():
    """judge(base, *others, builtin=BuiltinMode.JUDGE): the verdict on report documents (JSON dicts, as a
    session writes them)."""
    def run(base: dict, *others: dict, builtin: BuiltinMode = BuiltinMode.JUDGE):
        return compare.judge(report_io.parse(base, "baseline"), [report_io.parse(o, "other") for o in others],
                             builtin=builtin)

    return run
