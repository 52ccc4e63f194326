"""A built-in check calling what the stack lacks (a callable, a keyword, a module) is not applicable there:
skipped "not on this stack: ...", counted by a recording, never a failure that stops it, and marked in the
golden file, so a judging run of that stack skips it too (harness.contract.stack_lacks). A run against a
recording that ran the check (a candidate that lost the API, a mutated library) fails as it always did. What a
library raises once running, and an error contract's deliberate bad keyword, stay what they were. Measured: jax 0.7.1 / optax 0.2.5 / flax 0.11.0 recorded the built-in suite
with 82 checks failing before, among them whole modules and optimizer tables taken down by one callable."""

import json

import pytest

SUITE = '''
import jax.numpy as jnp
import optax
import pytest

pytestmark = pytest.mark.family("demo")


def test_missing_callable(check):
    optax.no_such_transform_anywhere(0.1)
    check.golden("never", jnp.ones(2, jnp.float32))


def test_missing_callable_after_a_value(check):
    check.golden("ones", jnp.ones(2, jnp.float32))
    optax.no_such_transform_anywhere(0.1)


def test_missing_keyword(check):
    optax.sgd(0.1, no_such_keyword_anywhere=1)


def test_missing_module(check):
    import optax.no_such_module_anywhere  # noqa: F401


def test_raised_inside_the_library(check):
    optax.apply_updates({"a": jnp.ones(2)}, {"b": jnp.ones(2)})  # a tree mismatch: optax's own ValueError


def test_bad_keyword_is_the_contract(check):
    check.error_contract("bad_keyword", optax.sgd, 0.1, no_such_keyword_anywhere=1)


def test_missing_callable_in_an_error_contract(check):
    check.error_contract("missing", lambda: optax.no_such_transform_anywhere(0.1))


def test_value(check):
    check.golden("twos", jnp.full(2, 2.0, jnp.float32))
'''


@pytest.fixture
def suite(pytester):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_demo=SUITE)
    pytester.mkdir("golden")
    return pytester


def _report(pytester, *args):
    result = pytester.runpytest_subprocess("-q", "-p", "no:randomly", "--harness-golden-dir=golden", "-rs", *args)
    path = pytester.path / "report.json"
    return result, ({c["id"]: c for c in json.loads(path.read_text())["checks"]} if path.exists() else None)


def test_what_the_stack_lacks_is_not_applicable_and_the_rest_is_judged(suite):
    result, checks = _report(suite, "--harness-record-golden", "-k", "not inside")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([
        "*golden: 5 checks not applicable on this stack (not recorded; they call what it lacks):*",
        "*golden:   optax * has no optax.no_such_transform_anywhere: 3 checks*",
        "*golden:   optax *'s sgd takes no parameter 'no_such_keyword_anywhere': 1 check*",
        "*golden:   optax * has no module optax.no_such_module_anywhere: 1 check*",
    ])
    recorded = json.loads((suite.path / "golden" / "demo.json").read_text())
    assert "twos" in json.dumps(recorded)
    assert "ones" in json.dumps(recorded)  # what a not-applicable check computed before its call is the stack's own
    assert "bad_keyword" in json.dumps(recorded)  # its TypeError is the fact it records
    assert recorded["values"]["not_on_stack/demo/test_missing_keyword"]["fact"].startswith("not on this stack")
    result, checks = _report(suite, "--harness-report=report.json", "-k", "not inside")
    assert result.ret == 0, result.stdout.str()
    skipped = {i: c["message"] for i, c in checks.items() if c["outcome"] == "skipped"}
    assert sorted(skipped) == ["demo/test_missing_callable", "demo/test_missing_callable_after_a_value",
                               "demo/test_missing_callable_in_an_error_contract", "demo/test_missing_keyword",
                               "demo/test_missing_module"]
    assert all("not on this stack: optax " in m for m in skipped.values()), skipped
    assert checks["demo/test_bad_keyword_is_the_contract"]["outcome"] == "passed"
    assert checks["demo/test_value"]["outcome"] == "passed"


def test_what_a_library_raises_once_running_still_stops_a_recording(suite):
    result, _ = _report(suite, "--harness-record-golden", "-k", "inside")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*golden: NOT written: 1 checks did not pass while recording: "
                                 "demo/test_raised_inside_the_library*"])


def test_a_projects_own_contract_calling_what_the_stack_lacks_fails(suite):
    """Only the built-in contracts are written for another stack: a team's own call of a missing API is its bug."""
    own = suite.mkdir("contracts")
    (own / "test_own.py").write_text(SUITE.replace('family("demo")', 'family("mine")'))
    result = suite.runpytest_subprocess("-q", "-p", "no:randomly", "--harness-golden-dir=golden",
                                        "--harness-report=report.json", "--harness-own-contracts=contracts",
                                        "contracts/test_own.py", "-k", "missing_callable and not error")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*AttributeError*no_such_transform_anywhere*"])


def test_a_run_against_a_recording_that_ran_the_check_fails_as_before(suite):
    """The recording's stack had the callable (here: the check called one that exists); a run where it is gone
    is the API going away: a failure (AttributeError), not a skip."""
    suite.makepyfile(test_demo=SUITE.replace("optax.no_such_transform_anywhere(0.1)", "optax.sgd(0.1)"))
    result, _ = _report(suite, "--harness-record-golden", "-k", "test_missing_callable and not after and not error")
    assert result.ret == 0, result.stdout.str()
    suite.makepyfile(test_demo=SUITE)
    result, checks = _report(suite, "--harness-report=report.json", "-k",
                             "test_missing_callable and not after and not error")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    gone = checks["demo/test_missing_callable"]
    assert gone["outcome"] == "failed" and gone["exception"] == "AttributeError", gone
