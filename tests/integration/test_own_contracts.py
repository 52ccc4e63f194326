"""A team's own contract families in the verdict: summed apart, a change in them counted in the
headline, and their failures on the baseline read as a change of the team's code (exit 1), while a
built-in family failing on the baseline, or an own check that cannot be judged there (its golden value
never recorded), means the harness cannot judge (exit 2)."""

import copy
import json

import pytest

from harness.model.enums import BuiltinMode, Mark
from harness.verdict import markdown, render

from integration.test_compare import _candidate, _check, _fail, _mark, base  # noqa: F401 (base is a fixture)


def _own(doc, *families):
    """The checks of `families` made the project's own, as the plugin marks them."""
    doc = copy.deepcopy(doc)
    doc["own_families"] = list(families)
    for check in doc["checks"]:
        if check["family"] in families:
            check["own"] = True
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


TRAIN = """import numpy as np


def train(steps):
    weights = np.zeros(3)
    for _ in range(steps):
        weights = weights + np.ones({width})
    return weights
"""
RAISING_CONTRACT = """from mylib.train import train


def test_final_weights(check):
    check.golden_exact("steps", int(train(2).size))
"""


def _team_whose_training_raises(pytester, width: int):
    """A team's contract whose training code (mylib/train.py) raises a shape error when `width` is not 3."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    (pytester.path / "mylib").mkdir(exist_ok=True)
    (pytester.path / "mylib" / "__init__.py").write_text("")
    (pytester.path / "mylib" / "train.py").write_text(TRAIN.format(width=width))
    (pytester.path / "contracts").mkdir(exist_ok=True)
    (pytester.path / "contracts" / "test_weights.py").write_text(RAISING_CONTRACT)
    args = ["-p", "no:randomly", "--harness-golden-dir=golden", "--harness-own-contracts=contracts",
            f"--rootdir={pytester.path}", "contracts"]
    pytester.syspathinsert(pytester.path)
    return args


def test_an_own_contract_whose_code_raises_on_the_baseline_cannot_be_judged_and_says_where(pytester, judge):
    """Found: a shape error in the team's training code read "your code or the machine changed", advised
    `golden --accept-changes` (which cannot record a contract that raises) and exited 1. It cannot be judged
    (exit 2), and says what raised where: the innermost frame in the team's own files."""
    args = _team_whose_training_raises(pytester, width=3)
    assert pytester.runpytest_inprocess("--harness-record-golden", *args).ret == 0
    (pytester.path / "mylib" / "train.py").write_text(TRAIN.format(width=4))  # the team's code changed
    pytester.runpytest_inprocess("--harness-report=base.json", *args)
    base = json.loads((pytester.path / "base.json").read_text())
    [raised] = base["checks"]
    assert raised["exception"] == "ValueError" and raised["raised_at"] == "mylib/train.py:7", raised
    verdict = judge(base, _candidate(base))
    assert verdict.exit_status == 2
    assert verdict.headline.startswith(
        "CANNOT JUDGE: 1 check of your own contracts cannot be judged on the baseline (weights/test_final_weights): "
        "your contract raised ValueError at mylib/train.py:7 (operands could not be broadcast together"), \
        verdict.headline
    text = render.text(verdict)
    assert "--accept-changes" not in text and "your code or the machine changed" not in text
    [family] = verdict.own_families
    assert family.not_judged_on_baseline == ["weights/test_final_weights"] and not family.failing_on_baseline


def test_an_own_golden_value_that_differs_on_the_baseline_stays_the_teams_change(pytester, judge):
    """Beside the raise: the same contract whose value moved (no exception) is a change since recording."""
    args = _team_whose_training_raises(pytester, width=3)
    assert pytester.runpytest_inprocess("--harness-record-golden", *args).ret == 0
    (pytester.path / "contracts" / "test_weights.py").write_text(RAISING_CONTRACT.replace("train(2).size", "train(2).size + 1"))
    pytester.runpytest_inprocess("--harness-report=base.json", *args)
    base = json.loads((pytester.path / "base.json").read_text())
    assert "raised_at" not in base["checks"][0]
    verdict = judge(base, _candidate(base))
    assert verdict.exit_status == 1 and "your code or the machine changed" in verdict.headline


# builtin = "report": the team's own contracts decide; the built-in ones are shown after them, never deciding.

def _mine(doc, *names):
    """The checks named moved into the team's own family "mine"; the others stay built-in ("demo")."""
    doc = copy.deepcopy(doc)
    for check in doc["checks"]:
        name = check["id"].split("/", 1)[1]
        if name in names:
            check["family"], check["id"], check["own"] = "mine", f"mine/{name}", True
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


def test_report_mode_keeps_an_own_baseline_failure_the_teams_change_and_counts_only_what_holds(mixed, judge):
    """Found: "otherwise your contracts hold (13 checks)" when 9 of the 13 failed on the baseline and could not
    be judged on the candidate: the headline counts the checks that hold and the ones not judged apart."""
    broken = _fail(copy.deepcopy(mixed), "test_golden_value")
    verdict = judge(broken, _fail(_candidate(mixed), "test_golden_value"), builtin=BuiltinMode.REPORT)
    assert verdict.exit_status == 1
    assert verdict.headline == ("CHANGED: 1 check of your own contracts fails on the baseline itself "
                                "(mine/test_golden_value): your code or the machine changed since its golden values "
                                "were recorded, not the stack; otherwise 1 of your 2 checks holds on candidate "
                                "(1 not judged: it fails on the baseline); built-in contracts (reported only): "
                                "unchanged")
    both = _fail(_fail(copy.deepcopy(mixed), "test_golden_value"), "test_golden_counter")
    verdict = judge(both, _fail(_fail(_candidate(mixed), "test_golden_value"), "test_golden_counter"),
                    builtin=BuiltinMode.REPORT)
    assert "otherwise 0 of your 2 checks hold on candidate (2 not judged: they fail on the baseline)" in \
        verdict.headline, verdict.headline


def test_report_mode_reports_a_builtin_baseline_failure_without_blocking_the_verdict(mixed, judge):
    broken = _fail(copy.deepcopy(mixed), "test_reference")
    cand = _fail(_candidate(mixed), "test_reference")
    reported = judge(broken, cand, builtin=BuiltinMode.REPORT)
    assert reported.exit_status == 0
    assert reported.headline == ("OK: your contracts hold on candidate (2 checks); built-in contracts (reported "
                                 "only): not judged, the baseline fails 1 of them (golden files, the baseline stack "
                                 "or the machine changed)")
    assert judge(broken, cand).exit_status == 2  # judged, the same failure means no verdict


@pytest.fixture
def accepted_stack(recorded_suite, pytester):
    """The baseline report of a stack other than the built-in golden values' (a team's after `accept`): its golden
    value and its error type both differ from their recording, as a real run reports them; one check the team's."""
    path = pytester.path / "golden" / "demo.json"
    doc = json.loads(path.read_text().replace("0.10000000149011612", "0.125"))
    assert doc["values"]["bad"]["error"] == "ValueError"
    doc["values"]["bad"]["error"] = "TypeError"
    path.write_text(json.dumps(doc))
    _, base = recorded_suite()
    assert {c["id"]: c["exception"] for c in base["checks"] if c["outcome"] == "failed"} == {
        "demo/test_golden_value": "ContractFailure", "demo/test_error": "ContractFailure"}
    return _mine(base, "test_golden_counter")


def test_report_mode_judges_builtin_checks_the_baseline_fails_against_its_own_values(accepted_stack, judge):
    """After an accept: the same values on the candidate are no change, and the verdict says how it judged them,
    with no "not judged" and no row of the baseline's failures."""
    verdict = judge(accepted_stack, _candidate(accepted_stack), builtin=BuiltinMode.REPORT)
    assert verdict.exit_status == 0
    assert verdict.headline == ("OK: your contracts hold on candidate (1 check); built-in contracts (reported only): "
                                "unchanged (2 judged against the baseline's own values on this host: their golden "
                                "values do not hold on the baseline)")
    assert _mark(verdict, "test_golden_value") == _mark(verdict, "test_error") == Mark.UNCHANGED
    assert not verdict.baseline_failures and "failing on the baseline" not in render.text(verdict)


def test_a_change_of_a_builtin_check_the_baseline_fails_still_shows(accepted_stack, judge):
    cand = _candidate(accepted_stack, optax="9.9")
    _check(cand, "test_error")["comparisons"][0]["observed"] = "KeyError"
    values = _check(cand, "test_golden_value")["comparisons"][0]["values"]
    values["values"][1], values["digest"] = 0.25, "moved"
    verdict = judge(accepted_stack, cand, builtin=BuiltinMode.REPORT)
    assert verdict.exit_status == 0  # reported only
    assert _mark(verdict, "test_error") == Mark.ERROR_TYPE_CHANGED
    assert _mark(verdict, "test_golden_value") == Mark.VALUE_CHANGED
    detail = {c.check_id: c.detail for c in verdict.entries[0].changes}
    assert "ValueError at this machine's baseline, KeyError now" in detail["demo/test_error"]
    assert "outside 8 ulp of this machine's baseline values" in detail["demo/test_golden_value"]
    assert "built-in contracts (reported only): 2 checks in 2 contracts changed" in verdict.headline
    assert "(2 judged against the baseline's own values" in verdict.headline


def test_builtin_checks_the_baseline_fails_stay_not_judged_across_hosts_or_when_judged(accepted_stack, judge):
    """Another host's candidate cannot be set value for value against this baseline; and where the built-in
    contracts decide, a baseline that fails them still gives no verdict."""
    elsewhere = _candidate(accepted_stack)
    elsewhere["environment"]["host"]["cpu"] = "another CPU"
    verdict = judge(accepted_stack, elsewhere, builtin=BuiltinMode.REPORT)
    assert "not judged, the baseline fails 2 of them" in verdict.headline
    assert judge(accepted_stack, _candidate(accepted_stack)).exit_status == 2


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
    from harness.verdict.html_cells import breakable
    page = html.page(verdict, [])
    own_at, builtin_at = page.index("id='own'"), page.index("Built-in contracts changed")
    assert own_at < builtin_at and breakable("mine/test_golden_counter") in page[own_at:builtin_at]
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


# A team's family may take a built-in family's name: two families, each with its golden file, apart in the verdict.

BUILTIN_TRAINING = "def test_builtin_steps(check):\n    check.golden_exact('steps', {steps})\n"
TEAMS_TRAINING = "def test_losses(check):\n    check.golden_exact('steps', 7)\n"


def _golden_file(path, family, own=False, **values):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": 1, "family": family, **({"own": True} if own else {}),
                                "provenance": {"entry": "baseline"},
                                "values": {k: {"dtype": "int64", "shape": [], "values": [v]} for k, v in values.items()}}))


def _team_with_builtin_training(pytester, steps=3):
    """A team's contracts/test_training.py beside a built-in training module (builtin/), whose values the tool
    ships in tool/training.json (steps = 3; `steps`: what the built-in module gives on this stack)."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    for folder, text in (("contracts", TEAMS_TRAINING), ("builtin", BUILTIN_TRAINING.format(steps=steps))):
        (pytester.path / folder).mkdir(exist_ok=True)
        (pytester.path / folder / "test_training.py").write_text(text)
    (pytester.path / "builtin" / "__init__.py").write_text("")  # a package, as harness/builtin is
    _golden_file(pytester.path / "tool" / "training.json", "training", steps=3)


def _team_run(pytester, *args):
    return pytester.runpytest_inprocess("-p", "no:randomly", "--harness-golden-dir=golden",
                                        "--harness-own-contracts=contracts", "--harness-builtin-golden-dir=tool", *args)


def test_a_teams_family_may_take_a_built_in_familys_name_and_stays_another_family(pytester, judge):
    """Found: a team's contracts/test_training.py stopped `golden` ("contract family 'training' comes from both
    ..."). Now its values go to golden/training.json (said to be its own), the built-in training family is
    judged against the tool's values, and the report and the verdict keep the two apart."""
    _team_with_builtin_training(pytester)
    recorded = _team_run(pytester, "--harness-record-golden", "contracts")  # `upgrade-harness golden`
    assert recorded.ret == 0, recorded.stdout.str()
    written = json.loads((pytester.path / "golden" / "training.json").read_text())
    assert written["own"] is True and written["values"]["steps"]["values"] == [7]
    assert json.loads((pytester.path / "tool" / "training.json").read_text())["values"]["steps"]["values"] == [3]

    ran = _team_run(pytester, "--harness-report=base.json", "contracts", "builtin")
    assert ran.ret == 0, ran.stdout.str()
    base = json.loads((pytester.path / "base.json").read_text())
    assert base["own_families"] == ["training"]
    assert {c["id"]: c.get("own") for c in base["checks"]} == {"training/test_losses": True,
                                                              "training/test_builtin_steps": None}
    (pytester.path / "builtin" / "test_training.py").write_text(BUILTIN_TRAINING.format(steps=4))  # a bump moves it
    _team_run(pytester, "--harness-report=cand.json", "contracts", "builtin")
    candidate = _candidate(json.loads((pytester.path / "cand.json").read_text()))

    reported = judge(base, candidate, builtin=BuiltinMode.REPORT)
    assert reported.exit_status == 0 and reported.headline.startswith("OK: your contracts hold on candidate (1 check)")
    assert [(f.name, f.checks, f.changed) for f in reported.own_families] == [("training", 1, [])]
    assert "built-in contracts (reported only): 1 check in 1 contract changed" in reported.headline
    assert "your contracts  training: 1 check, unchanged on candidate" in render.text(reported)
    judged = judge(base, candidate)
    assert judged.exit_status == 1 and "of them in your own contracts" not in judged.headline
    assert not judged.own_changes
    assert [c.check_id for c in judged.entries[0].contract_changes] == ["training/test_builtin_steps"]


def test_record_builtin_writes_the_teams_copy_into_its_own_folder(pytester):
    """`golden --record-builtin` with a team family of the same name: the copy goes to golden/builtin/."""
    _team_with_builtin_training(pytester, steps=5)  # the team's baseline gives 5 where the tool's gave 3
    assert _team_run(pytester, "--harness-record-golden", "contracts", "builtin").ret == 0
    copy_ = json.loads((pytester.path / "golden" / "builtin" / "training.json").read_text())
    assert "own" not in copy_ and copy_["values"]["steps"]["values"] == [5]
    assert json.loads((pytester.path / "golden" / "training.json").read_text())["values"]["steps"]["values"] == [7]
    assert _team_run(pytester, "--harness-report=r.json", "contracts", "builtin").ret == 0  # each read its own


def test_an_earlier_copy_of_a_built_in_family_keeps_working_and_is_never_taken_over(pytester):
    """A team that recorded its copy before copies had a folder has golden/training.json (no own mark): the
    built-in family still reads it. A team family of that name later is refused, naming the move."""
    _team_with_builtin_training(pytester, steps=5)
    _golden_file(pytester.path / "golden" / "training.json", "training", steps=5)  # the team's earlier copy
    (pytester.path / "contracts" / "test_training.py").unlink()
    (pytester.path / "contracts" / "test_losses.py").write_text(TEAMS_TRAINING)
    _golden_file(pytester.path / "golden" / "losses.json", "losses", steps=7)  # an own family's earlier file
    assert _team_run(pytester, "--harness-report=r.json", "contracts", "builtin").ret == 0  # 5: the copy

    (pytester.path / "contracts" / "test_losses.py").rename(pytester.path / "contracts" / "test_training.py")
    refused = _team_run(pytester, "--harness-report=r.json", "contracts", "builtin")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*golden/training.json holds your copy of the built-in family 'training'*"
                                  "git mv golden/training.json golden/builtin/training.json*"])


def test_one_check_id_both_yours_and_built_in_is_refused(pytester):
    _team_with_builtin_training(pytester)
    (pytester.path / "contracts" / "test_training.py").write_text("def test_builtin_steps(check):\n    pass\n")
    refused = _team_run(pytester, "--harness-report=r.json", "contracts", "builtin")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*check training/test_builtin_steps is both yours*and built in*Rename your test*"])


def test_in_this_checkout_an_own_family_may_not_take_a_built_in_familys_name(pytester):
    """Here golden/ holds the built-in families themselves (no tool's values to fall back on): refused."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    (pytester.path / "contracts").mkdir()
    (pytester.path / "contracts" / "test_training.py").write_text(TEAMS_TRAINING)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--harness-report=r.json", "--harness-golden-dir=golden",
                                          "--harness-own-contracts=contracts", "contracts")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'training' is a built-in family's name, and in this checkout*"])


def test_in_report_mode_the_line_under_the_headline_and_the_exit_meaning_speak_of_your_contracts(base, judge):
    """The bits line under an OK about your contracts must not carry the built-in checks' moves, and the
    footer must not say 'no contract changed' above 24 built-in changes."""
    own_base = _own(base, "demo")
    cand = _candidate(own_base)
    builtin = {"id": "builtin/test_b", "family": "builtin"}
    own_base["checks"].append({k: v for k, v in _check(own_base, "test_golden_value").items() if k != "own"} | builtin)
    cand["checks"].append({k: v for k, v in _check(cand, "test_golden_value").items() if k != "own"} | builtin)
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
    line = ("built-in contracts run for what your code calls: 8 of the 240 built-in tests; for the library callables it calls, "
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


def _golden_on(doc, family, versions):
    doc["golden_stacks"] = {family: {k: versions.get(k) for k in ("python", "jax", "jaxlib", "optax", "flax", "numpy")}}
    return doc


def test_golden_values_accepted_from_the_candidate_make_the_baselines_difference_no_change(base, judge):
    """After `upgrade-harness accept` on a bump branch, golden/ holds the candidate's values: the baseline (the
    base branch's pins) fails against them by design and the candidate holds them: green, each accepted
    check listed base → candidate."""
    cand = _candidate(_own(base, "demo"), optax="0.2.8")
    on_candidate = cand["environment"]["versions"]
    broken = _golden_on(_fail(_own(base, "demo"), "test_golden_value", expected=[1.0, 2.0], observed=[1.0, 2.5]),
                        "demo", on_candidate)
    verdict = judge(broken, _golden_on(cand, "demo", on_candidate))
    assert verdict.exit_status == 0, verdict.headline
    assert "1 accepted on this branch (demo/test_golden_value)" in verdict.headline
    [family] = verdict.own_families
    assert family.accepted == ["demo/test_golden_value"] and not family.failing_on_baseline
    assert _mark(verdict, "test_golden_value") == Mark.FIXED  # the candidate's own mark; the team's row says why
    [row] = verdict.own_changes
    assert row.change.mark == Mark.ACCEPTED and not verdict.baseline_failures
    assert "ACCEPTED (informational)  demo/test_golden_value" in render.text(verdict)


def test_an_accepted_check_the_candidate_fails_too_is_the_teams_change(base, judge):
    """The code changed after the accept: the candidate, on the very stack that recorded the golden values, fails."""
    cand = _candidate(_own(base, "demo"), optax="0.2.8")
    on_candidate = cand["environment"]["versions"]
    broken = _golden_on(_fail(_own(base, "demo"), "test_golden_value"), "demo", on_candidate)
    verdict = judge(broken, _golden_on(_fail(cand, "test_golden_value"), "demo", on_candidate))
    assert verdict.exit_status == 1 and "fails on the baseline itself (demo/test_golden_value)" in verdict.headline
    assert not verdict.own_families[0].accepted


def test_golden_values_recorded_on_the_baseline_keep_its_failure_the_teams_change(base, judge):
    broken = _golden_on(_fail(_own(base, "demo"), "test_golden_value"), "demo", base["environment"]["versions"])
    verdict = judge(broken, _candidate(_own(base, "demo"), optax="0.2.8"))
    assert verdict.exit_status == 1 and not verdict.own_families[0].accepted


def _noise(doc, name, within, used):
    comparison = _check(doc, name)["comparisons"][0]
    comparison["noise"] = {"measured": 2.5e-8, "allowed": 1e-7, "used": used, "within": within}
    comparison["worst"] = {"index": [0], "expected": 5.2312389e-06, "observed": 5.23321796e-06, "ulps": 4350.0}
    return doc


def test_a_move_within_the_numerical_noise_is_shown_and_decides_nothing(base, judge):
    cand = _noise(_candidate(_own(base, "demo"), jax="0.12.0.1"), "test_golden_value", within=True, used=0.02)
    verdict = judge(_own(base, "demo"), cand)
    assert verdict.exit_status == 0 and "1 check moved within numerical noise" in verdict.headline
    assert _mark(verdict, "test_golden_value") == Mark.NOISE
    assert verdict.own_families[0].within_noise == 1
    text = render.text(verdict)
    assert "MOVED WITHIN NOISE (informational)  demo/test_golden_value" in text
    assert "4.35e+03 ulp of float32 at the value" in text and "0.02x the 1e-07 allowed" in text


def test_a_move_beyond_the_noise_is_a_change_with_its_size_against_the_noise(base, judge):
    cand = _fail(_candidate(_own(base, "demo"), optax="0.2.8"), "test_golden_value", max_abs_err=0.025)
    cand = _noise(cand, "test_golden_value", within=False, used=4.4)
    verdict = judge(_own(base, "demo"), cand)
    assert verdict.exit_status == 1 and _mark(verdict, "test_golden_value") == Mark.VALUE_CHANGED
    assert "4.4x the 1e-07 allowed" in render.text(verdict)
