"""A team's own contract families in the verdict: summed apart, a change in them counted in the
headline, and their failures on the baseline read as a change of the team's code (exit 1), while a
built-in family failing on the baseline, or an own check that cannot be judged there (its golden value
never recorded), means the harness cannot judge (exit 2)."""

import copy
import json

import pytest

from harness.model.enums import BuiltinMode, Mark
from harness.verdict import markdown, render

from integration.test_compare import _candidate, _check, _fail, base  # noqa: F401 (base is a fixture)


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
                                "(demo/test_golden_value): your code or the machine changed since its golden "
                                "values were recorded, not the stack; otherwise OK: no contract changed on candidate")
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


def test_an_own_check_without_a_recorded_golden_value_cannot_be_judged(base, judge):
    """A golden value never recorded (the first upgrade before `upgrade-harness golden`, or a new own
    check): the check errors on both sides. Nothing was recorded, so nothing changed since recording:
    the harness cannot judge (exit 2, as for any missing golden value), and says how to record it."""
    not_recorded = ("golden file golden/demo.json does not exist; record it from the baseline with "
                    "`upgrade-harness golden`.")

    def errored(doc):
        check = _check(doc, "test_golden_value")
        check["outcome"], check["message"] = "error", not_recorded
        return doc

    verdict = judge(errored(_own(base, "demo")), errored(_candidate(_own(base, "demo"))))
    assert verdict.exit_status == 2
    assert verdict.headline == ("CANNOT JUDGE: 1 check of your own contracts cannot be judged on the baseline "
                                f"(demo/test_golden_value): {not_recorded.rstrip('.')}")
    assert "since its golden values were recorded" not in verdict.headline
    [family] = verdict.own_families
    assert family.not_judged_on_baseline == ["demo/test_golden_value"] and not family.failing_on_baseline
    text = render.text(verdict)
    assert "1 not judged on the baseline itself" in text and "--accept-changes" not in text


def test_own_checks_failing_and_not_judged_on_the_baseline_cannot_be_judged(base, judge):
    """One own check fails on the baseline (the team's change), another cannot be judged there: no
    verdict can be given until its golden value is recorded."""
    broken = _fail(_own(base, "demo"), "test_golden_value")
    check = _check(broken, "test_error")
    check["outcome"], check["message"] = "error", "golden entry 'x' is missing from golden/demo.json"
    verdict = judge(broken, _candidate(_own(base, "demo")))
    assert verdict.exit_status == 2 and verdict.headline.startswith(
        "CANNOT JUDGE: 1 check of your own contracts cannot be judged on the baseline (demo/test_error)")
    [family] = verdict.own_families
    assert family.failing_on_baseline == ["demo/test_golden_value"]
    assert family.not_judged_on_baseline == ["demo/test_error"]
    text = render.text(verdict)  # the failing one is still said, with its summary
    assert "demo: 6 checks, 1 failing on the baseline itself" in text and "1 not judged on the baseline itself" in text


def test_an_own_module_that_fails_to_import_is_an_own_family(pytester):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    mine = pytester.mkdir("mine")
    (mine / "test_broken.py").write_text("import a_module_that_is_gone\n")
    pytester.runpytest_inprocess("-q", "-p", "no:randomly", "--harness-report=report.json",
                                 f"--harness-own-contracts={mine}", str(mine))
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["own_families"] == ["broken"] and report["checks"][0]["id"] == "broken/collection"


# builtin = "report": the team's own contracts decide; the built-in ones are shown after them, never deciding.

def _mine(doc, *names):
    """The checks named moved into the team's own family "mine"; the others stay built-in ("demo")."""
    doc = copy.deepcopy(doc)
    for check in doc["checks"]:
        name = check["id"].split("/", 1)[1]
        if name in names:
            check["family"], check["id"] = "mine", f"mine/{name}"
    doc["own_families"] = ["mine"]
    return doc


@pytest.fixture
def mixed(base):
    """Two own checks (golden value and counter) and four built-in ones."""
    return _mine(base, "test_golden_value", "test_golden_counter")


def _optax(doc):
    return doc["environment"]["versions"]["optax"]


def _builtin_changed(doc):
    return _fail(doc, "test_error", expected="ValueError", observed="TypeError")


def _moved_bits(doc):
    values = _check(doc, "test_golden_value")["comparisons"][0]["values"]
    values["values"][1], values["digest"] = 0.20000001788139343, "moved"  # one float32 ulp above 0.2
    return doc


def test_report_mode_decides_on_the_teams_contracts_and_names_both(mixed, judge):
    cand = _builtin_changed(_fail(_candidate(mixed, optax="9.9"), "test_golden_value", max_abs_err=0.025))
    verdict = judge(mixed, cand, builtin=BuiltinMode.REPORT)
    old = _optax(mixed)
    assert verdict.exit_status == 1 and verdict.builtin == BuiltinMode.REPORT
    assert verdict.headline == (f"CHANGED: your contracts: 1 check in 1 contract (mine/test_golden_value), from optax "
                                f"{old} → 9.9; built-in contracts (reported only): 1 check in 1 contract changed, "
                                f"from optax {old} → 9.9")


def test_report_mode_is_ok_when_only_builtin_contracts_changed(mixed, judge):
    cand = _builtin_changed(_candidate(mixed, optax="9.9"))
    reported = judge(mixed, cand, builtin=BuiltinMode.REPORT)
    old = _optax(mixed)
    assert reported.exit_status == 0
    assert reported.headline == (f"OK: your contracts hold on candidate (2 checks); built-in contracts (reported "
                                 f"only): 1 check in 1 contract changed, from optax {old} → 9.9")
    judged = judge(mixed, cand)  # the same reports, the built-in contracts judged: today's verdict
    assert judged.exit_status == 1 and judged.builtin == BuiltinMode.JUDGE
    assert judged.headline == f"CHANGED: 1 check in 1 contract, all from optax {old} → 9.9"


def test_report_mode_counts_own_bits_moves_as_informational(mixed, judge):
    verdict = judge(mixed, _moved_bits(_candidate(mixed)), builtin=BuiltinMode.REPORT)
    assert verdict.exit_status == 0
    assert verdict.headline == ("OK: your contracts hold on candidate (2 checks; 1 moved bits within tolerance); "
                                "built-in contracts (reported only): unchanged")


def test_report_mode_keeps_an_own_baseline_failure_the_teams_change(mixed, judge):
    broken = _fail(copy.deepcopy(mixed), "test_golden_value")
    verdict = judge(broken, _fail(_candidate(mixed), "test_golden_value"), builtin=BuiltinMode.REPORT)
    assert verdict.exit_status == 1
    assert verdict.headline == ("CHANGED: 1 check of your own contracts fails on the baseline itself "
                                "(mine/test_golden_value): your code or the machine changed since its golden values "
                                "were recorded, not the stack; otherwise your contracts hold on candidate (2 checks); "
                                "built-in contracts (reported only): unchanged")


def test_report_mode_reports_a_builtin_baseline_failure_without_blocking_the_verdict(mixed, judge):
    broken = _fail(copy.deepcopy(mixed), "test_reference")
    cand = _fail(_candidate(mixed), "test_reference")
    reported = judge(broken, cand, builtin=BuiltinMode.REPORT)
    assert reported.exit_status == 0
    assert reported.headline == ("OK: your contracts hold on candidate (2 checks); built-in contracts (reported "
                                 "only): not judged, the baseline fails 1 of them (golden files, the baseline stack "
                                 "or the machine changed)")
    assert judge(broken, cand).exit_status == 2  # judged, the same failure means no verdict


def _errored(doc, name):
    check = _check(doc, name)
    check["outcome"], check["message"] = "error", "golden value is corrupt"
    return doc


def test_report_mode_cannot_judge_an_own_check_it_could_not_judge_but_reports_a_builtin_one(mixed, judge):
    builtin_lost = judge(mixed, _errored(_candidate(mixed), "test_reference"), builtin=BuiltinMode.REPORT)
    assert builtin_lost.exit_status == 0
    assert builtin_lost.headline.endswith("built-in contracts (reported only): unchanged, 1 not judged")
    own_lost = judge(mixed, _errored(_candidate(mixed), "test_golden_value"), builtin=BuiltinMode.REPORT)
    assert own_lost.exit_status == 2 and own_lost.headline == "CANNOT JUDGE: candidate: 1 checks not judged"


def test_report_mode_without_own_contracts_is_judged_and_says_so(base, judge):
    cand = _builtin_changed(_candidate(base))
    verdict = judge(base, cand, builtin=BuiltinMode.REPORT)
    assert verdict.exit_status == 1 and verdict.builtin == BuiltinMode.JUDGE
    assert verdict.headline == judge(base, cand).headline  # exactly the judged verdict
    assert "no contracts of your own" in verdict.mode_note and "the built-in contracts decide" in verdict.mode_note
    assert verdict.mode_note in render.text(verdict) and verdict.mode_note in markdown.markdown(verdict)
    assert render.as_json(verdict)["mode_note"] == verdict.mode_note


def test_the_teams_section_comes_first_with_mark_values_size_and_cause(mixed, judge):
    cand = _builtin_changed(_moved_bits(_candidate(mixed, optax="9.9")))
    cand = _fail(cand, "test_golden_counter", expected=[0, 1], observed=[0, 2])
    verdict = judge(mixed, cand, builtin=BuiltinMode.REPORT)
    old = _optax(mixed)
    [changed, moved] = verdict.own_changes
    assert (changed.change.check_id, changed.change.mark) == ("mine/test_golden_counter", Mark.VALUE_CHANGED)
    assert changed.cause == f"optax {old} → 9.9"
    assert (moved.change.check_id, moved.change.mark) == ("mine/test_golden_value", Mark.BITS_CHANGED)

    text = render.text(verdict)  # the headline names the own contract too: look in the sections
    own_at, builtin_at = text.index("\n  Your contracts"), text.index("Built-in contracts changed on candidate")
    own_part, builtin_part = text[own_at:builtin_at], text[builtin_at:]
    assert "mine/test_golden_counter" in own_part and f"{changed.change.before} → {changed.change.after}" in own_part
    assert f"cause: optax {old} → 9.9" in own_part
    assert "BITS CHANGED (informational)  mine/test_golden_value" in own_part
    assert "demo/test_error" in builtin_part and "mine/" not in builtin_part.split("Attribution", 1)[0]
    assert "reported only" in builtin_part.split("\n", 1)[0]

    page = markdown.markdown(verdict)
    own_part, builtin_part = page.split("**Your contracts:**", 1)[1].split(
        "Built-in contracts changed on `candidate`", 1)
    assert "`mine/test_golden_counter`" in own_part and f"optax {old} → 9.9" in own_part
    assert "`demo/test_error`" in builtin_part and "`mine/test_golden_counter`" not in builtin_part

    summary = render.as_json(verdict)
    assert summary["builtin_mode"] == "report"
    first = summary["own_changes"][0]
    assert first["change"]["check_id"] == "mine/test_golden_counter" and first["cause"] == f"optax {old} → 9.9"
    assert first["change"]["mark"] == "value changed"

    from harness.verdict import html
    page = html.page(verdict, [])
    own_at, builtin_at = page.index("id='own'"), page.index("Built-in contracts changed")
    assert own_at < builtin_at and "mine/test_golden_counter" in page[own_at:builtin_at]
    assert f"optax {old} → 9.9" in page[own_at:builtin_at]


def test_in_judge_mode_the_teams_section_comes_first_too(mixed, judge):
    cand = _builtin_changed(_fail(_candidate(mixed), "test_golden_value", max_abs_err=0.025))
    verdict = judge(mixed, cand)
    assert verdict.exit_status == 1
    assert verdict.headline.startswith("CHANGED: 2 checks in 2 contracts, 1 of them in your own contracts")
    text = render.text(verdict)
    own_at, builtin_at = text.index("\n  Your contracts"), text.index("Built-in contracts changed on candidate")
    assert "mine/test_golden_value" in text[own_at:builtin_at]
    assert "mine/test_golden_value" not in text[builtin_at:].split("Attribution", 1)[0]
    assert "reported only" not in text


def test_compare_takes_the_mode_on_its_command_line(mixed, tmp_path):
    from harness.verdict import cli

    files = [tmp_path / "b.json", tmp_path / "c.json"]
    files[0].write_text(json.dumps(mixed))
    files[1].write_text(json.dumps(_builtin_changed(_candidate(mixed))))
    assert cli.main([str(f) for f in files]) == 1  # judged by default, as before
    assert cli.main([str(f) for f in files] + ["--builtin", "report", "--json", str(tmp_path / "s.json")]) == 0
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["builtin_mode"] == "report" and summary["headline"].startswith("OK: your contracts hold")


def test_an_own_family_may_not_take_a_built_in_familys_name_even_with_the_built_ins_off(pytester):
    """Its golden values would be read from the tool's file of that name: refused, with the fix."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    (pytester.path / "contracts").mkdir()
    (pytester.path / "contracts" / "test_training.py").write_text("def test_loss(check):\n    check.exact('x', 1, 1)\n")
    (pytester.path / "tool").mkdir()
    (pytester.path / "tool" / "training.json").write_text("{}")
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--harness-report=r.json", "--harness-golden-dir=golden",
                                          "--harness-own-contracts=contracts", "--harness-builtin-golden-dir=tool",
                                          "contracts")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*contract family 'training' comes from both*test_training.py and *training.json*"])


def test_in_report_mode_the_line_under_the_headline_and_the_exit_meaning_speak_of_your_contracts(base, judge):
    """The bits line under an OK about your contracts must not carry the built-in checks' moves, and the
    footer must not say 'no contract changed' above 24 built-in changes."""
    own_base = copy.deepcopy(base)
    own_base["own_families"] = ["demo"]
    cand = _candidate(own_base)
    own_base["checks"].append(copy.deepcopy(_check(own_base, "test_golden_value")) | {"id": "builtin/test_b",
                                                                                      "family": "builtin"})
    cand["checks"].append(copy.deepcopy(_check(cand, "test_golden_value")) | {"id": "builtin/test_b",
                                                                              "family": "builtin"})
    moved = _check(cand, "test_golden_value")["comparisons"][0]["values"]
    moved["values"][1], moved["digest"] = 0.20000001788139343, "moved"
    builtin_values = next(c for c in cand["checks"] if c["id"] == "builtin/test_b")["comparisons"][0]["values"]
    builtin_values["values"] = [0.10000000149011612, 0.3000000119]
    builtin_values["digest"] = "moved a lot"
    verdict = judge(own_base, cand, builtin=BuiltinMode.REPORT)
    assert verdict.exit_status == 0 and "builtin/test_b" not in (verdict.bits_line or "")
    assert verdict.bits_line.startswith("1 value in 1 check changed bits")
    assert "0 none of your contracts changed" in markdown.markdown(verdict)


def test_the_verdict_says_which_built_in_families_ran_and_why(base, judge):
    """A team's run takes only the built-in families covering what its code calls: every form says which."""
    import dataclasses

    from harness.verdict import html

    own_base = _own(base, "demo")
    line = ("built-in contracts run for what your code calls: 8 of the 240 built-in tests; for its Optax callables, "
            "optax.MultiSteps at trainer/optim.py:7 (8 tests: accumulation 5, compositions 3); not run: clipping, and "
            "the other tests of accumulation, compositions (`--builtin all` runs them)")
    verdict = dataclasses.replace(judge(own_base, _candidate(own_base), builtin=BuiltinMode.REPORT), builtin_note=line)
    assert f"\n         {line}\n" in render.text(verdict)
    assert "Built-in contracts run for what your code calls: 8 of the 240" in markdown.markdown(verdict)
    assert render.as_json(verdict)["builtin_note"] == line
    assert "optax.MultiSteps at trainer/optim.py:7" in html.page(verdict, [])


def test_an_own_contract_that_cannot_be_collected_cannot_be_judged_and_blames_no_library(base, judge):
    """A syntax error in the team's contract: no change since recording (`golden --accept-changes` cannot
    record a file that does not import), and no installed library's import failure either (pytest's own
    frame is where a syntax error surfaces)."""
    def broken(doc):
        doc = _own(doc, "demo", "syntax")
        check = copy.deepcopy(doc["checks"][0])
        check.update(id="syntax/collection", nodeid="contracts/test_syntax.py", family="syntax", kind="collection",
                     outcome="failed", exception="SyntaxError", comparisons=[], errors_observed={}, series={},
                     message="contracts/test_syntax.py could not be collected: def test_syn(check: ^ "
                             "SyntaxError: '(' was never closed",
                     library_frames=["_pytest/assertion/rewrite.py:339"])
        doc["checks"].append(check)
        return doc

    verdict = judge(broken(base), broken(_candidate(base)))
    assert verdict.exit_status == 2 and verdict.import_failure is None
    assert verdict.headline.startswith("CANNOT JUDGE: 1 check of your own contracts cannot be judged on the baseline "
                                       "(syntax/collection): contracts/test_syntax.py could not be collected: "), \
        verdict.headline
    text = render.text(verdict)
    assert "IMPORT FAILURE" not in text and "_pytest" not in text.split("VERDICT", 1)[1].split("\n", 1)[0]
    assert "--accept-changes" not in text
