"""The comparison: each kind of change gets its mark, and the exit status follows the candidate."""

import copy
import json

import pytest
from pathlib import Path

from harness.model import report_io
from harness.model.enums import Mark
from harness.model.report import EntryInfo, now, unresolvable
from harness.model.codec import to_json
from harness.verdict import cli, compare, markdown, render


@pytest.fixture
def base(recorded_suite):
    _, doc = recorded_suite()
    return doc


def _write(path, doc):
    path = Path(path)
    path.write_text(json.dumps(doc))


def _check(doc, name):
    return next(c for c in doc["checks"] if c["id"].endswith("/" + name))


def _candidate(base, **versions):
    doc = copy.deepcopy(base)
    doc["entry"]["name"] = "candidate"
    doc["environment"]["versions"].update(versions)
    return doc


def _fail(doc, name, message="golden:value: 1 of 2 elements outside", **comparison):
    check = _check(doc, name)
    check["outcome"], check["message"] = "failed", message
    check["comparisons"][0].update(passed=False, **comparison)
    return doc


def _mark(verdict, name):
    return next(c.mark for c in verdict.entries[0].changes if c.check_id.endswith("/" + name))


def test_identical_reports_are_ok(base, judge):
    verdict = judge(base, _candidate(base))
    assert verdict.exit_status == 0 and verdict.headline.startswith("OK")
    assert all(c.mark == Mark.UNCHANGED for c in verdict.entries[0].changes)


def test_pass_to_fail_is_a_regression_with_exit_1(base, judge):
    cand = _fail(_candidate(base), "test_golden_value", max_abs_err=0.025)
    verdict = judge(base, cand)
    assert _mark(verdict, "test_golden_value") == Mark.VALUE_CHANGED
    assert verdict.exit_status == 1
    text = render.text(verdict)
    assert "VALUE CHANGED" in text and "demo/test_golden_value" in text
    assert "→ [0.100000001, 0.200000003]" in text  # before → after, the values to 9 digits


@pytest.mark.parametrize("expected, observed, mark", [
    ("ValueError", "TypeError", Mark.ERROR_TYPE_CHANGED),
    ("ValueError", None, Mark.NOW_SILENT),
    (None, "ValueError", Mark.IMPROVED),
])
def test_error_contract_changes_are_named(base, expected, observed, mark, judge):
    cand = _fail(_candidate(base), "test_error", expected=expected, observed=observed)
    verdict = judge(base, cand)
    assert _mark(verdict, "test_error") == mark and verdict.exit_status == 1


def test_fail_to_pass_is_fixed_but_baseline_failure_means_cannot_judge(base, judge):
    broken_base = _fail(copy.deepcopy(base), "test_reference")
    verdict = judge(broken_base, _candidate(base))
    assert _mark(verdict, "test_reference") == Mark.FIXED
    assert verdict.exit_status == 2 and "baseline fails 1" in verdict.headline


def test_passing_check_whose_values_moved_is_bits_changed_with_exit_0(base, judge):
    cand = _candidate(base)
    values = _check(cand, "test_golden_value")["comparisons"][0]["values"]
    assert values["values"] == [0.10000000149011612, 0.20000000298023224]  # float32 0.1, 0.2, exactly
    values["values"][1] = 0.20000001788139343  # the next float32 above 0.2: one ulp
    values["digest"] = "moved"
    verdict = judge(base, cand)
    assert _mark(verdict, "test_golden_value") == Mark.BITS_CHANGED and verdict.exit_status == 0
    change = next(c for c in verdict.entries[0].changes if c.mark == Mark.BITS_CHANGED)
    assert change.bits.values == 1 and change.bits.compared == 2 and change.bits.max_ulps == 1
    assert change.detail == "1 of 2 values changed bits; max 1 ulp (golden:value)"
    assert verdict.bits_line == "1 value in 1 check changed bits (max 1 ulp: demo/test_golden_value golden:value)"
    assert verdict.headline.startswith("OK") and verdict.bits_line in render.text(verdict)


def test_identical_values_change_no_bits(base, judge):
    verdict = judge(base, _candidate(base))
    assert verdict.bits_line is None and all(c.bits is None for c in verdict.entries[0].changes)


def test_missing_and_new_checks(base, judge):
    cand = _candidate(base)
    gone = cand["checks"].pop(0)
    extra = copy.deepcopy(cand["checks"][0])
    extra["id"] = "demo/test_brand_new"
    cand["checks"].append(extra)
    verdict = judge(base, cand)
    marks = {c.check_id: c.mark for c in verdict.entries[0].changes}
    assert marks[gone["id"]] == Mark.MISSING and marks["demo/test_brand_new"] == Mark.NEW_CHECK
    assert verdict.exit_status == 1


def test_unresolvable_candidate_cannot_be_judged(base, judge):
    doc = to_json(unresolvable(EntryInfo("candidate", "3.12", {"jax": "99"}, False), "cannot resolve jax==99", now()))
    report_io.validate(doc)
    verdict = judge(base, doc)
    assert verdict.exit_status == 2 and verdict.headline == "CANNOT JUDGE: candidate is unresolvable"
    text = render.text(verdict)
    assert "cannot resolve jax==99" in text and "jax 99" in text  # the reason, and the pins it asked for
    assert "cannot resolve jax==99" in markdown.markdown(verdict)


def test_not_judged_check_gives_exit_2(base, judge):
    cand = _candidate(base)
    _check(cand, "test_golden_value").update(outcome="error", message="golden entry 'value' is missing")
    assert judge(base, cand).exit_status == 2


def test_new_deprecation_from_a_library_is_listed(base, judge):
    cand = _candidate(base)
    cand["warnings"].append({"category": "DeprecationWarning", "message": "optax.foo is deprecated",
                             "origin": "optax", "filename": "optax/_src/foo.py", "lineno": 1, "count": 1,
                             "checks": []})
    verdict = judge(base, cand)
    assert [w.message for w in verdict.entries[0].new_warnings] == ["optax.foo is deprecated"]


def test_markdown_collapses_unchanged_and_names_changes(base, judge):
    cand = _fail(_candidate(base), "test_golden_value", max_abs_err=0.025)
    md = markdown.markdown(judge(base, cand))
    assert md.startswith("## ❌ Upgrade verdict: CHANGED: 1 check in 1 contract")
    assert "| **value changed** | `demo/test_golden_value`" in md
    assert "<details><summary>5 unchanged checks on candidate</summary>" in md


def test_cli_writes_summaries_and_returns_status(base, tmp_path):
    paths = []
    for name, doc in [("b", base), ("c", _fail(_candidate(base), "test_golden_value"))]:
        paths.append(str(tmp_path / f"{name}.json"))
        _write(paths[-1], doc)
    code = cli.main(paths + ["--markdown", str(tmp_path / "s.md"), "--json", str(tmp_path / "s.json")])
    assert code == 1
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["exit_status"] == 1 and summary["entries"][0]["changes"][0]["mark"] == "value changed"


def test_cli_rejects_other_schema_versions_and_garbage(base, tmp_path, capsys):
    good = tmp_path / "b.json"
    _write(good, base)
    old = dict(base, schema_version=0)
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert cli.main([str(good), str(tmp_path / "old.json")]) == 2
    assert "schema_version 0" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{")
    assert cli.main([str(good), str(tmp_path / "bad.json")]) == 2
    assert "unreadable" in capsys.readouterr().err
    assert cli.main([str(good), str(tmp_path / "absent.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_rejects_reports_from_different_harness_versions(base, tmp_path, capsys):
    _write(tmp_path / "b.json", base)
    _write(tmp_path / "c.json", dict(_candidate(base), harness_version="9.9.9"))
    assert cli.main([str(tmp_path / "b.json"), str(tmp_path / "c.json")]) == 2
    assert "different harness versions" in capsys.readouterr().err


def test_performance_ratio_is_informational(base, judge):
    base = copy.deepcopy(base)
    base["performance"] = {"update": {"compile_s": 0.5, "steady_s": 2e-4, "steady_min_s": 1e-4, "repeats": 30}}
    cand = _candidate(base)
    cand["performance"]["update"] = {"compile_s": 1.0, "steady_s": 3e-4, "steady_min_s": 3e-4, "repeats": 30}
    verdict = judge(base, cand)
    timing = verdict.entries[0].timings[0]
    assert timing.steady_ratio == pytest.approx(3.0) and timing.compile_ratio == pytest.approx(2.0) and timing.slower
    assert verdict.exit_status == 0  # slower never changes the verdict
    assert "3.00x [2.00x] SLOWER" in render.text(verdict)
    assert "| update | 3.00x [2.00x] SLOWER |" in markdown.markdown(verdict)


def test_attribute_error_on_the_candidate_is_api_missing(base, judge):
    cand = _fail(_candidate(base), "test_reference",
                 message="AttributeError: module 'optax' has no attribute 'global_norm'")
    _check(cand, "test_reference")["exception"] = "AttributeError"
    verdict = judge(base, cand)
    assert _mark(verdict, "test_reference") == Mark.API_MISSING and verdict.exit_status == 1


def test_api_missing_is_decided_by_exception_type_not_message_words(base, judge):
    cand = _fail(_candidate(base), "test_reference", message="golden:fact: 'has no attribute' in a value")
    _check(cand, "test_reference")["exception"] = "ContractFailure"
    assert _mark(judge(base, cand), "test_reference") == Mark.VALUE_CHANGED


def test_attribution_run_is_judged_only_on_its_selection(base, judge):
    cand = _fail(_candidate(base), "test_reference")
    cand["checks"] = [c for c in cand["checks"] if c["id"].endswith("/test_reference")]
    cand["selection"] = ["demo/test_reference"]
    verdict = judge(base, cand)
    assert [(c.check_id, c.mark) for c in verdict.entries[0].changes] == [("demo/test_reference", Mark.VALUE_CHANGED)]


def test_markdown_fits_one_pr_comment(base, judge):
    cand = _candidate(base)
    for i in range(3000):
        extra = copy.deepcopy(_check(cand, "test_golden_value"))
        extra.update(id=f"demo/test_many[{i}]", outcome="failed", message="x" * 500)
        cand["checks"].append(extra)
    md = markdown.markdown(judge(base, cand))
    assert len(md) <= markdown.COMMENT_BUDGET == 20_000
    assert "3001 checks unchanged" not in md and "… 2980 more cases" in md  # each cut says what it left out


def test_check_skipped_on_the_candidate_is_missing(base, judge):
    cand = _candidate(base)
    _check(cand, "test_reference").update(outcome="skipped", message="optax has no global_norm")
    verdict = judge(base, cand)
    assert _mark(verdict, "test_reference") == Mark.MISSING and verdict.exit_status == 1


def test_check_skipped_on_the_baseline_but_failing_now_is_not_hidden(base, judge):
    base = copy.deepcopy(base)
    _check(base, "test_reference")["outcome"] = "skipped"
    cand = _fail(_candidate(base), "test_reference")
    _check(cand, "test_reference")["outcome"] = "failed"
    assert _mark(judge(base, cand), "test_reference") == Mark.VALUE_CHANGED


def test_property_failing_here_only_is_failing_in_both_when_the_baseline_replay_fails_too(base, judge):
    cand = _fail(_candidate(base), "test_property", message="reference:square: 1 of 1 elements outside")
    verdict = judge(base, cand)
    assert _mark(verdict, "test_property") == Mark.VALUE_CHANGED and verdict.exit_status == 1
    replay = copy.deepcopy(base)
    replay["checks"] = [dict(_check(replay, "test_property"), outcome="failed", falsifying_example="x=3.0")]
    replay["selection"] = ["demo/test_property"]
    replayed = compare.judge(report_io.parse(base), [report_io.parse(cand)], report_io.parse(replay))
    assert _mark(replayed, "test_property") == Mark.FAILING_BOTH and replayed.exit_status == 0
    assert "x=3.0" in next(c.detail for c in replayed.entries[0].changes if c.check_id.endswith("test_property"))


def test_replay_that_passes_leaves_the_regression(base):
    cand = _fail(_candidate(base), "test_property")
    replay = dict(copy.deepcopy(base), selection=["demo/test_property"])
    verdict = compare.judge(report_io.parse(base), [report_io.parse(cand)], report_io.parse(replay))
    assert _mark(verdict, "test_property") == Mark.VALUE_CHANGED
    judged = compare.compare_entry(report_io.parse(base), report_io.parse(cand))
    assert compare.property_regressions(judged) == ["demo/test_property"]


def test_the_upgrade_log_names_each_kind_of_change_it_attributes(base, judge):
    cand = _fail(_candidate(base), "test_golden_value", max_abs_err=0.025)
    assert compare.changed_text(judge(base, cand).entries[0]) == "1 check changed"
    moved = _candidate(base)
    values = _check(moved, "test_golden_value")["comparisons"][0]["values"]
    values["values"][1], values["digest"] = 0.20000001788139343, "moved"
    assert compare.changed_text(judge(base, moved).entries[0]) == "1 check moved bits only"
    both = _fail(copy.deepcopy(moved), "test_reference")
    broken = _fail(copy.deepcopy(base), "test_reference")
    assert compare.changed_text(judge(broken, both).entries[0]) == "1 check moved bits only and 1 failing in both"


def test_values_compared_count_the_comparisons_that_did_not_move(base, judge):
    """A check of 12 golden losses of which 4 moved says 4 of 12, not 4 of 4."""
    cand = _candidate(base)
    comparisons = _check(cand, "test_golden_value")["comparisons"]
    base_comparisons = _check(base, "test_golden_value")["comparisons"]
    still = copy.deepcopy(comparisons[0]) | {"label": "golden:still"}  # a second comparison, unmoved
    base_comparisons.append(copy.deepcopy(still))
    comparisons.append(still)
    comparisons[0]["values"]["values"][1] = 0.20000001788139343
    comparisons[0]["values"]["digest"] = "moved"
    change = next(c for c in judge(base, cand).entries[0].changes if c.mark == Mark.BITS_CHANGED)
    assert change.bits.values == 1 and change.bits.compared == 4
    assert change.detail.startswith("1 of 4 values changed bits")


def test_a_baseline_failures_message_of_several_lines_stays_indented_under_it(base, judge):
    """Each line of a several-line message (golden values that differ, one a line) is indented under its
    check, never at column 0."""
    message = "2 golden values differ from their recording:\ngolden:a: 1 of 2 elements outside\ngolden:b: moved"
    verdict = judge(_fail(copy.deepcopy(base), "test_reference", message=message), _candidate(base))
    lines = render.text(verdict).splitlines()
    at = lines.index("  baseline failed: demo/test_reference")
    assert lines[at - 2:at] == ["  Baseline fails its own checks:", ""]
    assert lines[at + 1:at + 4] == ["    2 golden values differ from their recording:",
                                    "    golden:a: 1 of 2 elements outside", "    golden:b: moved"]
