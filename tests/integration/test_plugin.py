"""The pytest plugin: the report holds every check with its outcome, errors, tolerance and examples."""

import json
from pathlib import Path

from harness.model import report_io


def _by_name(doc):
    return {c["id"].split("/", 1)[1]: c for c in doc["checks"]}


def test_clean_run_report_validates_and_counts(recorded_suite):
    result, doc = recorded_suite()
    assert result.ret == 0
    report_io.validate(doc)
    assert doc["status"] == "complete" and doc["exit_status"] == 0
    assert doc["summary"]["passed"] == doc["summary"]["total"] == 6
    checks = _by_name(doc)
    assert checks["test_golden_value"]["kind"] == "golden"
    assert checks["test_golden_counter"]["comparisons"][0]["tolerance"] == "exact"
    assert checks["test_reference"]["kind"] == "reference"
    assert checks["test_error"]["kind"] == "error-contract"
    assert checks["test_error"]["errors_observed"]["bad"]["observed"] == "ValueError"
    prop = checks["test_property"]
    assert prop["kind"] == "property" and prop["examples"] >= 1
    assert prop["comparisons"][0]["count"] == prop["examples"]
    assert doc["hypothesis"]["examples_run"] == prop["examples"]


def test_changed_golden_names_check_values_and_tolerance(recorded_suite, pytester):
    golden = pytester.path / "golden" / "demo.json"
    golden.write_text(golden.read_text().replace("0.10000000149011612", "0.125"))
    result, doc = recorded_suite()
    assert result.ret == 1
    check = _by_name(doc)["test_golden_value"]
    assert check["outcome"] == "failed"
    assert "golden:value" in check["message"] and "1 of 2 elements" in check["message"]
    assert "expected 0.125" in check["message"] and "outside 8 ulp" in check["message"]
    assert abs(check["max_abs_err"] - 0.025) < 1e-6


def test_missing_golden_entry_is_not_judged_and_names_the_command(recorded_suite, pytester):
    golden = pytester.path / "golden" / "demo.json"
    data = json.loads(golden.read_text())
    del data["values"]["counter"]
    golden.write_text(json.dumps(data))
    result, doc = recorded_suite()
    check = _by_name(doc)["test_golden_counter"]
    assert check["outcome"] == "error"
    assert "'counter' is missing" in check["message"] and "nox -s golden" in check["message"]
    assert result.ret == 1


def test_corrupt_golden_file_is_not_judged(recorded_suite, pytester):
    (pytester.path / "golden" / "demo.json").write_text("{ not json")
    _, doc = recorded_suite()
    golden_checks = [c for c in doc["checks"] if c["kind"] == "golden"]
    assert golden_checks and all(c["outcome"] == "error" for c in golden_checks)
    assert "unreadable" in golden_checks[0]["message"]


def test_changed_error_type_is_a_failure(recorded_suite, pytester):
    golden = pytester.path / "golden" / "demo.json"
    golden.write_text(golden.read_text().replace('"ValueError"', '"TypeError"'))
    _, doc = recorded_suite()
    check = _by_name(doc)["test_error"]
    assert check["outcome"] == "failed" and check["exception"] == "ContractFailure"
    assert "TypeError at baseline, ValueError now" in check["message"]


def test_falsifying_example_is_recorded(suite, pytester):
    pytester.makepyfile(test_bad='''
import numpy as np
from hypothesis import given, strategies as st

@given(x=st.integers(0, 100))
def test_always_small(check, x):
    check.bound("x", np.float32(x), 50.0)
''')
    result, doc = suite("test_bad.py::test_always_small")
    check = doc["checks"][0]
    assert check["outcome"] == "failed"
    assert check["falsifying_example"] and "test_always_small(" in check["falsifying_example"]
    assert "x=51" in check["falsifying_example"]  # the minimal example, shrunk by Hypothesis


def test_check_that_compares_nothing_is_an_error(suite, pytester):
    pytester.makepyfile(test_empty="def test_nothing(check):\n    pass\n")
    result, doc = suite("test_empty.py")
    assert doc["checks"][0]["outcome"] == "error"
    assert "compared nothing" in doc["checks"][0]["message"]
    assert result.ret == 1


def test_deprecation_warnings_are_kept(recorded_suite):
    _, doc = recorded_suite()
    rows = [w for w in doc["warnings"] if w["message"] == "old API"]
    assert rows and rows[0]["category"] == "DeprecationWarning" and rows[0]["count"] == 1


def test_interrupted_run_leaves_partial_report(suite, pytester):
    pytester.makepyfile(test_stop="def test_stop(check):\n    raise KeyboardInterrupt\n")
    _, doc = suite("test_stop.py", subprocess=True)
    assert doc["status"] == "partial"
    report_io.validate(doc)


def test_recording_refuses_to_change_values_without_accept(recorded_suite, pytester):
    golden = pytester.path / "golden" / "demo.json"
    before = golden.read_text().replace("0.10000000149011612", "0.125")
    golden.write_text(before)
    result, doc = recorded_suite("--harness-record-golden", report="again.json")
    assert result.ret == 1 and doc["exit_status"] == 1  # the report agrees with pytest
    result.stdout.fnmatch_lines(["*NOT written: 1 recorded values would change*"])
    assert golden.read_text() == before  # nothing silently overwritten
    result, _ = recorded_suite("--harness-record-golden", "--harness-accept-changes", report="again.json")
    assert result.ret == 0
    assert "0.10000000149011612" in golden.read_text()


def test_recording_a_fact_again_on_the_same_baseline_changes_nothing(suite, pytester):
    """A fact holding tuples (the warnings a call gave, as (category, message) pairs) is kept as JSON holds it:
    recorded as the tuples themselves, a second recording on the same baseline found it "changed" against the
    file's lists, refused a plain `nox -s golden`, and showed the same text on both sides of the arrow."""
    pytester.makepyfile(test_facts='def test_pairs(check):\n    check.golden_fact("pairs", [("Warning", "a")])\n')
    assert suite("test_facts.py", "--harness-record-golden", report="first.json")[0].ret == 0
    result, _ = suite("test_facts.py", "--harness-record-golden", report="again.json")
    assert result.ret == 0, result.stdout.str()
    assert "golden: changed" not in result.stdout.str() and "wrote nothing" in result.stdout.str()


def test_a_check_that_raises_while_recording_is_named_with_its_exception(recorded_suite, pytester):
    """A recording refused for a failing check says which and why: the upgrade before it said only that the
    golden file does not exist (the check stops at its first golden value there), so the exception raised
    after it is seen here or nowhere."""
    pytester.makepyfile(test_raises='def test_raises(check):\n    check.golden("a", 1.5)\n    raise KeyError("x")\n')
    golden = pytester.path / "golden" / "demo.json"
    before = golden.read_text()
    result, _ = recorded_suite("--harness-record-golden", report="again.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*golden: NOT written: 1 checks did not pass while recording: raises/test_raises",
                                 "golden:   raises/test_raises: KeyError: 'x'"])
    assert golden.read_text() == before and not (pytester.path / "golden" / "raises.json").exists()


def test_recording_over_an_unreadable_golden_file_needs_accept(recorded_suite, pytester):
    """An unreadable golden file (a merge's conflict markers) cannot be compared with: recording replaced it
    whole, saying only "added", and lost any value this run did not record again."""
    golden = pytester.path / "golden" / "demo.json"
    broken = "<<<<<<< HEAD\n" + golden.read_text()
    golden.write_text(broken)
    result, _ = recorded_suite("--harness-record-golden", report="again.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*golden: replaces demo: golden file *demo.json is unreadable (*); restore it from "
                                 "git (`git checkout -- *demo.json`) or record it again *. Accepting writes it anew, "
                                 "whole: a value this recording does not make again is lost",
                                 "*NOT written: 1 unreadable golden files would be written anew. Review them above*"])
    assert golden.read_text() == broken  # nothing silently overwritten
    result, _ = recorded_suite("--harness-record-golden", "--harness-accept-changes", report="again.json")
    assert result.ret == 0 and golden.read_text().startswith("{")


def test_unwritable_report_path_is_a_usage_error(suite, pytester):
    (pytester.path / "blocked").write_text("a file where a directory should be")
    result, _ = suite(report="blocked/report.json")
    assert result.ret == 4  # pytest's usage error
    result.stderr.fnmatch_lines(["*cannot write report*blocked*"])


def test_module_that_fails_to_import_is_a_failed_check_and_the_rest_still_runs(recorded_suite, pytester):
    pytester.makepyfile(test_broken="import optax_api_that_was_removed\n")
    result, doc = recorded_suite()
    checks = {c["id"]: c for c in doc["checks"]}
    broken = checks["broken/collection"]
    assert broken["outcome"] == "failed" and broken["kind"] == "collection"
    assert broken["exception"] == "ModuleNotFoundError"
    assert "optax_api_that_was_removed" in broken["message"]
    assert doc["summary"]["passed"] == 6  # the healthy module still ran
    # Ran to its end, but some of its checks were never observed: not "complete" (never reused, a
    # bisection probe of it says "could not run").
    assert doc["status"] == "uncollected"
    report_io.validate(doc)


def test_identical_is_bitwise(suite, pytester):
    pytester.makepyfile(test_bits='''
import numpy as np

def test_same(check):
    check.identical("same", np.array([1.0, -0.0], np.float32), np.array([1.0, -0.0], np.float32))

def test_signed_zero(check):
    check.identical("zero", np.array([1.0, -0.0], np.float32), np.array([1.0, 0.0], np.float32))

def test_dtype(check):
    check.identical("dtype", np.array([1.0], np.float32), np.array([1.0], np.float64))
''')
    _, doc = suite("test_bits.py")
    outcome = {c["id"].split("/")[1]: c for c in doc["checks"]}
    assert outcome["test_same"]["outcome"] == "passed"
    assert outcome["test_signed_zero"]["outcome"] == "failed"
    assert outcome["test_signed_zero"]["comparisons"][0]["mismatched"] == 1
    assert "float32[1] observed, float64[1] expected" in outcome["test_dtype"]["message"]


def test_error_contract_that_goes_silent_says_what_the_call_returned(recorded_suite, pytester):
    golden = pytester.path / "golden" / "demo.json"
    data = json.loads(golden.read_text())
    data["values"]["bad"] = {"error": "ValueError"}
    pytester.makepyfile(test_quiet='''
import numpy as np
import pytest
pytestmark = pytest.mark.family("demo")

def test_error(check):
    check.error_contract("bad", lambda: np.ones(3) + np.ones(3))
''')
    golden.write_text(json.dumps(data))
    _, doc = recorded_suite("test_quiet.py")
    check = doc["checks"][0]
    assert check["outcome"] == "failed"
    assert "ValueError at baseline, no error now; the call returned" in check["message"]
    assert check["errors_observed"]["bad"]["result"] == [["", "float64", [3]]]


def test_only_runs_the_listed_checks_and_records_the_selection(recorded_suite, pytester):
    (pytester.path / "only.txt").write_text("demo/test_reference\ndemo/test_error\n")
    _, doc = recorded_suite("--harness-only=only.txt")
    assert sorted(c["id"] for c in doc["checks"]) == ["demo/test_error", "demo/test_reference"]
    assert doc["selection"] == ["demo/test_error", "demo/test_reference"]


REPLAYED = '''
import os
import numpy as np
from hypothesis import given, strategies as st

@given(x=st.integers(0, 1000))
def test_threshold(check, x):
    # "candidate" fails from 617 on; "baseline" only at exactly 617 (found only by replaying); "fixed" never
    failing = {"candidate": x >= 617, "baseline": x == 617, "fixed": False}[os.environ["LIBRARY"]]
    check.exact("x below threshold", bool(failing), False)
'''


def test_a_failing_example_is_replayed_on_the_baseline(suite, pytester, monkeypatch):
    from support import jobs

    pytester.makepyfile(test_replayed=REPLAYED)
    jobs.tell(monkeypatch, pytester.path / "jobs", seed=12345)  # the upgrade's seed, in the entry's job
    monkeypatch.setenv("HARNESS_PROFILE", "dev")
    monkeypatch.setenv("LIBRARY", "candidate")
    _, cand = suite("test_replayed.py", "--harness-entry=candidate", report="cand.json", subprocess=True)
    failed = cand["checks"][0]
    assert failed["outcome"] == "failed" and "x=617" in failed["falsifying_example"]
    assert cand["hypothesis"]["seed"] == 12345 and failed["reproduce_failure"].startswith("'")
    monkeypatch.setenv("LIBRARY", "baseline")
    _, alone = suite("test_replayed.py", "--harness-entry=baseline", report="base.json", subprocess=True)
    assert alone["checks"][0]["outcome"] == "passed"  # the same draws pass: only 617 fails here
    (pytester.path / "examples.json").write_text(json.dumps({failed["id"]: failed["reproduce_failure"]}))
    jobs.tell(monkeypatch, pytester.path / "jobs", seed=12345, replay=pytester.path / "examples.json")
    _, replay = suite("test_replayed.py", "--harness-entry=baseline", report="replay.json", subprocess=True)
    assert replay["checks"][0]["outcome"] == "failed" and "x=617" in replay["checks"][0]["falsifying_example"]
    monkeypatch.setenv("LIBRARY", "fixed")  # a stack that passes the example: the replay says so
    _, passes = suite("test_replayed.py", "--harness-entry=baseline", report="passes.json", subprocess=True)
    assert passes["checks"][0]["outcome"] == "passed" and "replayed" in passes["checks"][0]["message"]


def test_report_describes_the_profile_given_on_the_command_line(suite):
    _, doc = suite("--harness-profile=nightly", "-k", "test_reference")
    assert doc["hypothesis"]["profile"] == "nightly" and doc["hypothesis"]["max_examples"] == 600
    assert doc["hypothesis"]["derandomize"] is False and isinstance(doc["hypothesis"]["seed"], int)


def test_report_carries_the_upgrade_run_it_belongs_to(suite, monkeypatch, tmp_path):
    from support import jobs

    _, by_hand = suite("-k", "test_reference")
    assert "run_id" not in by_hand  # a session run by hand belongs to no run
    jobs.tell(monkeypatch, tmp_path, run_id="20260101T000000-1-abcdef")
    _, doc = suite("-k", "test_reference", report="in-a-run.json")
    report_io.validate(doc)
    assert doc["run_id"] == "20260101T000000-1-abcdef"


def test_the_entry_travels_to_the_report_as_one_typed_object(suite, monkeypatch, tmp_path):
    """The session describes its entry once, in the job file it names to its pytest run (HARNESS_JOB,
    harness.model.entry_job, the report's own EntryInfo in it); the report holds exactly that, resolution
    notes and all."""
    from harness import env_vars
    from harness.model.codec import to_json
    from harness.model.report import EntryInfo
    from harness.run_options import RunOptions
    from harness.stack.entry_side import entry as stack_entry, entry_jobs
    from harness.stack.pins.matrix import Entry

    entry = Entry("jax-only", {"jax": "0.12.0.1", "optax": "0.2.6"}, "", python="3.12", locked=False,
                  notes=("flax 0.12.12 → 0.12.6: does not resolve",), resolved_at="2026-12-02T00:10:00+00:00")
    job = entry_jobs.write_beside(str(tmp_path), "report", entry, RunOptions())
    env = stack_entry.suite_environment(entry, "report.json", str(tmp_path), Path("golden"), is_checkout=True, job=job)
    monkeypatch.setenv(env_vars.JOB, env[env_vars.JOB])
    _, report = suite("-k", "golden_value", "--harness-entry=jax-only")
    assert report["entry"] == to_json(EntryInfo("jax-only", "3.12", {"jax": "0.12.0.1", "optax": "0.2.6"}, False,
                                                "2026-12-02T00:10:00+00:00", ["flax 0.12.12 → 0.12.6: does not resolve"]))


BUILTIN_LIKE = '''
import pytest

pytestmark = pytest.mark.family("{family}")


def test_kept(check):
    check.exact("one", 1, 1)


def test_dropped(check):
    check.exact("one", 1, 1)


@pytest.mark.parametrize("name", ["optax.adamw", "optax.sgd"])
def test_parameter_defaults(check, name):
    check.exact(name, 1, 1)
'''


def test_a_selection_of_builtin_tests_keeps_them_of_the_families_it_names_and_the_rest_whole(suite, pytester,
                                                                                              monkeypatch):
    """A team's selection (harness.stack.selection) reaches pytest in the entry's job: of a family it names, only
    its tests (every check of one) and its checks (one parametrization) run, deselected at collection; a family it
    does not name runs whole; the project's own contracts are never touched; the report's `selection` stays an
    attribution's (None here)."""
    from support import jobs

    pytester.makepyfile(test_partial=BUILTIN_LIKE.format(family="partial"),
                        test_whole=BUILTIN_LIKE.format(family="whole"))
    own = pytester.mkdir("mine")
    (own / "test_team.py").write_text(BUILTIN_LIKE.format(family="team"))
    kept = pytester.path / "kept.txt"
    # a test of `partial`, one check of its defaults, and a test of the team's own family (never deselected)
    kept.write_text("partial/test_kept\npartial/test_parameter_defaults[optax.adamw]\nteam/test_kept\n")
    jobs.tell(monkeypatch, pytester.path / "jobs", builtin_tests=kept)
    result, doc = suite("test_partial.py", "test_whole.py", "mine", f"--harness-own-contracts={own}")
    ran = sorted(c["id"] for c in doc["checks"])
    assert ran == ["partial/test_kept", "partial/test_parameter_defaults[optax.adamw]",
                   *(f"{family}/{test}" for family in ("team", "whole") for test in (
                       "test_dropped", "test_kept", "test_parameter_defaults[optax.adamw]",
                       "test_parameter_defaults[optax.sgd]"))]
    assert "2 deselected" in result.stdout.str() and doc["selection"] is None
    # Given by hand, over the job's: the same deselection.
    jobs.tell(monkeypatch, pytester.path / "jobs")
    _, by_hand = suite("test_partial.py", f"--harness-builtin-tests={kept}", report="by-hand.json")
    assert sorted(c["id"] for c in by_hand["checks"]) == ["partial/test_kept",
                                                          "partial/test_parameter_defaults[optax.adamw]"]
