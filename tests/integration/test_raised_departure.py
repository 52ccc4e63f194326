"""A built-in check that raises inside a library on a team's baseline (an older stack than the built-ins were
written for) is that baseline's departure (harness.contract.raised): refused by a plain recording with the way
to accept it named, recorded with --harness-accept-changes, then judged in sequence: the same exception passes,
another exception or none at all is a change (an improvement, never silent)."""

import json

import pytest

SUITE = '''
import jax.numpy as jnp
import optax
import pytest

pytestmark = pytest.mark.family("demo")


def test_applies(check):
    check.golden("before", jnp.ones(2, jnp.float32))
    params = {{"a": jnp.ones(2)}}
    check.golden("after", optax.apply_updates(params, {updates})["a"])


def test_value(check):
    check.golden("twos", jnp.full(2, 2.0, jnp.float32))
'''
RAISES = '{"b": jnp.ones(2)}'  # another tree than the params': optax's own ValueError, inside the library
WORKS = '{"a": jnp.ones(2)}'
RAISES_OTHER = '{"a": "text"}'  # a TypeError inside jax


def _suite(pytester, updates):
    pytester.makepyfile(test_demo=SUITE.format(updates=updates))


def _run(pytester, *args):
    result = pytester.runpytest_subprocess("-q", "-p", "no:randomly", "--harness-golden-dir=golden", *args)
    path = pytester.path / "report.json"
    checks = {c["id"]: c for c in json.loads(path.read_text())["checks"]} if "--harness-report=report.json" in args \
        else None
    return result, checks


@pytest.fixture
def recorded(pytester):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.mkdir("golden")
    _suite(pytester, RAISES)
    result, _ = _run(pytester, "--harness-record-golden")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*golden: NOT written: 1 checks did not pass while recording: demo/test_applies*",
                                 "*golden: 1 of them raise on this baseline*--accept-changes*records each raise "
                                 "as the baseline's departure*"])
    assert not (pytester.path / "golden" / "demo.json").exists()
    result, _ = _run(pytester, "--harness-record-golden", "--harness-accept-changes")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*golden: departs demo/test_applies: runs to its end: added as this baseline's "
                                 "departure from its stated run to its end without an exception (raises ValueError)*"])
    values = json.loads((pytester.path / "golden" / "demo.json").read_text())["values"]
    assert "before" in values  # what the baseline computed before it raised is its own: judged from then on
    assert values["departure/demo/test_applies/runs to its end"]["fact"]["raises"] == "ValueError"
    return pytester


def test_the_same_exception_passes_as_the_departure(recorded):
    result, checks = _run(recorded, "--harness-report=report.json")
    assert result.ret == 0, result.stdout.str()
    applies = checks["demo/test_applies"]
    assert applies["outcome"] == "passed"
    assert [c["departure"]["statement"] for c in applies["comparisons"] if c.get("departure")] == ["runs to its end"]


def test_running_to_the_end_is_an_improvement_to_accept(recorded):
    _suite(recorded, WORKS)
    result, checks = _run(recorded, "--harness-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    failed = checks["demo/test_applies"]
    assert failed["outcome"] == "failed"
    assert "holds again on this stack: the baseline raised ValueError here" in failed["message"]
    assert [c["departure"]["holds_again"] for c in failed["comparisons"] if c.get("departure")] == [True]


def test_another_exception_is_a_change(recorded):
    _suite(recorded, RAISES_OTHER)
    result, checks = _run(recorded, "--harness-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "the baseline raised ValueError here" in checks["demo/test_applies"]["message"]
    assert "TypeError now" in checks["demo/test_applies"]["message"]
