"""A contract run spread over pytest-xdist's workers writes the report one process writes: the same checks with the
same outcomes and comparisons, counts, warnings and environment (harness.contract.workers); a recording refuses
to be spread. The synthetic suite (tests/conftest.py) in three modules, so both workers run some."""

from __future__ import annotations

import pytest

from conftest import SYNTHETIC_SUITE

UNSTABLE = ("started_at", "finished_at", "timings")  # when and how long: not what was found
CHECK_UNSTABLE = ("duration_s",)


def _three_modules(pytester) -> None:
    """The synthetic suite, and two more modules of it (their checks failing in one: a failure crosses too)."""
    more = SYNTHETIC_SUITE.replace('family("demo")', 'family("more")')
    failing = SYNTHETIC_SUITE.replace('family("demo")', 'family("failing")')
    pytester.makepyfile(test_more=more, test_failing=failing)
    return failing.replace('check.exact("two", 1 + 1, 2)', 'check.exact("two", 1 + 1, 3)')


def _checks(doc: dict) -> dict[str, dict]:
    return {c["id"]: {k: v for k, v in c.items() if k not in CHECK_UNSTABLE} for c in doc["checks"]}


def _warnings(doc: dict) -> list[tuple]:
    return sorted((w["category"], w["message"], w["origin"], w["count"], tuple(sorted(w["checks"])))
                  for w in doc["warnings"])


def test_a_spread_run_reports_what_one_process_reports(recorded_suite, pytester):
    failing = _three_modules(pytester)
    assert recorded_suite("--harness-record-golden", report="again.json", subprocess=True)[0].ret == 0
    pytester.makepyfile(test_failing=failing)
    # The ci profile: derandomized, so both runs draw the same examples
    one_result, one = recorded_suite("--harness-profile=ci", report="one.json", subprocess=True)
    spread_result, spread = recorded_suite("--harness-profile=ci", "-n", "2", "--dist", "loadfile", report="spread.json",
                                           subprocess=True)
    assert one_result.ret == spread_result.ret == 1  # test_failing's check fails in both
    assert "bringing up nodes" in spread_result.stdout.str()  # really spread over workers
    assert _checks(spread) == _checks(one) and len(_checks(one)) == 18
    assert [c["id"] for c in one["checks"]] == [c["id"] for c in spread["checks"]]  # modules in order
    assert spread["summary"]["failed"] == one["summary"]["failed"] == 1
    for key in set(one) - set(UNSTABLE) - {"checks", "warnings"}:
        assert spread[key] == one[key], key  # examples, environment (JAX asked in a worker)
    # Warnings once each, counted and named alike (the file a row names is where it was first seen: an order)
    assert _warnings(spread) == _warnings(one)
    assert spread["hypothesis"]["examples_run"] > 0 and spread["warnings"] and spread["status"] == "complete"


def test_a_recording_is_not_spread(suite, pytester):
    result, report = suite("--harness-record-golden", "-n", "2", report="rec.json", subprocess=True)
    assert result.ret != 0 and report is None
    assert "a recording runs in one process" in result.stderr.str() + result.stdout.str()
    assert not any(pytester.path.joinpath("golden").iterdir())


@pytest.mark.parametrize("args", [[], ["-n", "2"]])
def test_a_plain_run_of_a_team_without_the_harness_is_left_alone(pytester, args):
    """The plugin installed beside a team's own tests: spread or not, no report and no harness machinery."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:randomly", *args)
    assert result.ret == 0 and not list(pytester.path.glob("*.json")), result.stdout.str()
