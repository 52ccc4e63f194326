"""A team's own contract families in the verdict: summed apart, a change in them counted in the
headline, and their failures on the baseline read as a change of the team's code (exit 1), while a
built-in family failing on the baseline still means the harness cannot judge (exit 2)."""

import copy
import json

from harness.verdict import markdown, render

from test_compare import _candidate, _check, _fail, base  # noqa: F401 (base is a fixture)


def _own(doc, *families):
    doc = copy.deepcopy(doc)
    doc["own_families"] = list(families)
    return doc


def test_own_families_are_listed_apart_and_unchanged_is_ok(base, judge):
    verdict = judge(_own(base, "demo"), _candidate(_own(base, "demo")))
    assert verdict.exit_status == 0 and verdict.headline.startswith("OK")
    [family] = verdict.own_families
    assert family.name == "demo" and family.checks == len(base["checks"]) and not family.changed
    assert "your contracts  demo: 6 checks, unchanged on candidate" in render.text(verdict)
    assert "**Your contracts:**" in markdown.markdown(verdict)


def test_a_change_in_an_own_family_is_counted_in_the_headline(base, judge):
    cand = _fail(_candidate(_own(base, "demo")), "test_golden_value", max_abs_err=0.025)
    verdict = judge(_own(base, "demo"), cand)
    assert verdict.exit_status == 1
    assert "1 check in 1 contract, 1 of them in your own contracts" in verdict.headline
    assert verdict.own_families[0].changed == ["demo/test_golden_value"]
    assert "demo: 6 checks, 1 changed on candidate" in render.text(verdict)


def test_an_own_check_failing_on_the_baseline_is_the_teams_change(base, judge):
    broken = _fail(_own(base, "demo"), "test_golden_value")
    verdict = judge(broken, _fail(_candidate(_own(base, "demo")), "test_golden_value"))
    assert verdict.exit_status == 1
    assert verdict.headline == ("CHANGED: 1 check of your own contracts fails on the baseline itself "
                                "(demo/test_golden_value): your code changed since its golden values were "
                                "recorded, not the stack; otherwise OK: no contract changed on candidate")
    assert verdict.own_families[0].failing_on_baseline == ["demo/test_golden_value"]
    text = render.text(verdict)
    assert "1 failing on the baseline itself" in text and "baseline failed: demo/test_golden_value" in text


def test_the_same_failure_in_a_builtin_family_cannot_be_judged(base, judge):
    broken = _fail(copy.deepcopy(base), "test_golden_value")
    verdict = judge(broken, _fail(_candidate(base), "test_golden_value"))
    assert verdict.exit_status == 2 and "the baseline fails 1 of its own checks" in verdict.headline
    assert not verdict.own_families


def test_both_at_once_name_the_teams_change_then_the_candidates(base, judge):
    broken = _fail(_own(base, "demo"), "test_golden_value")
    cand = _fail(_fail(_candidate(_own(base, "demo")), "test_golden_value"), "test_error",
                 expected="ValueError", observed="TypeError")
    verdict = judge(broken, cand)
    assert verdict.exit_status == 1
    assert "not the stack; on the candidate: 1 check in 1 contract, 1 of them in your own contracts" in verdict.headline
    assert _check(cand, "test_error")["outcome"] == "failed"


def test_an_own_check_not_judged_on_both_sides_is_the_teams_change_too(base, judge):
    # A golden value not recorded yet for a new own check: it errors on the baseline and the candidate.
    def errored(doc):
        check = _check(doc, "test_golden_value")
        check["outcome"], check["message"] = "error", "golden value demo/value2 is not recorded; run nox -s golden"
        return doc

    verdict = judge(errored(_own(base, "demo")), errored(_candidate(_own(base, "demo"))))
    assert verdict.exit_status == 1 and "fails on the baseline itself (demo/test_golden_value)" in verdict.headline


def test_an_own_module_that_fails_to_import_is_an_own_family(pytester):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    mine = pytester.mkdir("mine")
    (mine / "test_broken.py").write_text("import a_module_that_is_gone\n")
    pytester.runpytest_inprocess("-q", "-p", "no:randomly", "--harness-report=report.json",
                                 f"--harness-own-contracts={mine}", str(mine))
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["own_families"] == ["broken"] and report["checks"][0]["id"] == "broken/collection"
