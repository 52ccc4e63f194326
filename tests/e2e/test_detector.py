"""The detector fires: deliberate faults in Optax make the real contract suite and the comparison
name the right check, family and magnitude. A check that could not fail would be a defect.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.model.enums import Mark

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("optax")
pytestmark = pytest.mark.long_running(90)  # real contract runs, each in a process of its own


def _run_suite(tmp_path, name, selection, fault=None):
    report = tmp_path / f"{name}.json"
    env = dict(os.environ, HARNESS_PROFILE="ci", HARNESS_ENTRY=name)
    env.pop("HARNESS_PERTURB", None)
    if fault:
        env["HARNESS_PERTURB"] = fault
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "tests.support.perturbations",
         f"--harness-report={report}", *selection],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )
    return json.loads(report.read_text())


def _checks(doc):
    return {c["id"]: c for c in doc["checks"]}


ACCUMULATION = ["harness/builtin/test_accumulation.py", "-k",
                "guide_case or emission_pattern or mismatched_grads_error"]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return _run_suite(tmp_path_factory.mktemp("clean"), "clean", ACCUMULATION)


def test_clean_run_passes(clean):
    assert clean["summary"]["failed"] == clean["summary"]["error"] == 0 and clean["summary"]["passed"] >= 9


def test_scaled_updates_are_a_regression_of_about_one_percent(clean, tmp_path, judge):
    doc = _run_suite(tmp_path, "scaled", ACCUMULATION, "accumulation-scale")
    guide = _checks(doc)["accumulation/test_guide_case"]
    assert guide["outcome"] == "failed" and guide["family"] == "accumulation"
    assert "golden:guide/u2" in guide["message"]
    assert guide["max_rel_err"] == pytest.approx(0.01, rel=0.01)
    verdict = judge(clean, doc)
    assert verdict.exit_status == 1
    assert "accumulation/test_guide_case" in {c.check_id for c in verdict.entries[0].contract_changes}


def test_step_count_off_by_one_breaks_the_emission_pattern(clean, tmp_path):
    doc = _run_suite(tmp_path, "late", ACCUMULATION, "accumulation-step-count")
    for k in ("k=1", "k=2", "k=3", "k=callable"):
        check = _checks(doc)[f"accumulation/test_emission_pattern[{k}]"]
        assert check["outcome"] == "failed", check
    assert "has_updated" in _checks(doc)["accumulation/test_emission_pattern[k=2]"]["message"]


def test_dtype_change_is_named(clean, tmp_path):
    doc = _run_suite(tmp_path, "bf16", ACCUMULATION, "accumulation-dtype")
    message = _checks(doc)["accumulation/test_guide_case"]["message"]
    assert "dtype bfloat16 observed, float32 recorded at baseline" in message


def test_error_no_longer_raised_is_now_silent(clean, tmp_path, judge):
    doc = _run_suite(tmp_path, "silent", ACCUMULATION, "accumulation-silent")
    verdict = judge(clean, doc)
    marks = {c.check_id: c.mark for c in verdict.entries[0].changes}
    for case in ("leaf_shape", "rank", "structure_key"):
        assert marks[f"accumulation/test_mismatched_grads_error[{case}]"] == Mark.NOW_SILENT


FAMILIES = [
    # (fault, selection, check that must fire, what its failure must say, expected mark)
    ("schedules-scale", ["harness/builtin/test_schedules.py", "-k", "guide_case"],
     "schedules/test_guide_case", "golden:guide/cosine", Mark.VALUE_CHANGED),
    ("clipping-per-leaf", ["harness/builtin/test_clipping.py", "-k", "guide_case"],
     "clipping/test_guide_case", "golden:guide/clipped_w", Mark.VALUE_CHANGED),
    ("masks-ignored", ["harness/builtin/test_masks.py", "-k", "test_decay_reaches_kernels_not_biases"],
     "masks/test_decay_reaches_kernels_not_biases[dict]", "undecayed", Mark.VALUE_CHANGED),
    ("shapes-silent", ["harness/builtin/test_shapes.py", "-k", "add_decayed_weights and incompatible and jit"],
     "shapes/test_mismatched_grads[add_decayed_weights-leaf_incompatible-jit]", "TypeError at baseline, no error now",
     Mark.NOW_SILENT),
]


@pytest.mark.parametrize("fault, selection, check_id, words, mark", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_family_flags_its_fault(tmp_path, fault, selection, check_id, words, mark, judge):
    clean = _run_suite(tmp_path, "clean", selection)
    assert clean["summary"]["failed"] == clean["summary"]["error"] == 0
    broken = _run_suite(tmp_path, "broken", selection, fault)
    check = _checks(broken)[check_id]
    assert check["outcome"] == "failed" and check["family"] == check_id.split("/")[0]
    assert words in check["message"]
    verdict = judge(clean, broken)
    assert {c.check_id: c.mark for c in verdict.entries[0].changes}[check_id] == mark
    assert verdict.exit_status == 1


def test_scaled_schedule_is_measured_as_one_percent(tmp_path):
    selection = ["harness/builtin/test_schedules.py", "-k", "guide_case"]
    broken = _run_suite(tmp_path, "broken", selection, "schedules-scale")
    assert _checks(broken)["schedules/test_guide_case"]["max_rel_err"] == pytest.approx(0.01, rel=0.05)


# Near the threshold: float32 outputs nudged by n ulps (perturbations._nudge). One ulp (at most half
# the golden allowance of 8) is bits that moved, exit 0; sixteen (at least twice it) is a change.
NEAR = [
    # (target, selection, check)
    ("multisteps", ["harness/builtin/test_accumulation_state.py", "-k", "state_values_per_ministep and mean"],
     "accumulation/test_state_values_per_ministep[mean]"),
    ("apply_if_finite", ["harness/builtin/test_accumulation_nonfinite.py", "-k", "apply_if_finite and nan"],
     "accumulation/test_apply_if_finite_counters[nan]"),
    ("clip", ["harness/builtin/test_clipping_complex.py", "-k", "complex_fixed_cases and complex64-clipped"],
     "clipping/test_complex_fixed_cases[complex64-clipped]"),
    ("schedule", ["harness/builtin/test_schedules.py", "-k", "guide_case_jitted"],
     "schedules/test_guide_case_jitted"),
    ("apply_updates", ["harness/builtin/test_training.py", "-k", "trajectory and full_batch"],
     "training/test_training_trajectory[full_batch]"),
]


@pytest.mark.parametrize("target, selection, check_id", NEAR, ids=[n[0] for n in NEAR])
def test_a_nudge_below_the_allowance_moves_bits_and_twice_it_is_a_change(tmp_path, target, selection, check_id, judge):
    clean = _run_suite(tmp_path, "clean", selection)
    assert _checks(clean)[check_id]["outcome"] == "passed"
    below = judge(clean, _run_suite(tmp_path, "below", selection, f"nudge-{target}-1"))
    change = next(c for c in below.entries[0].changes if c.check_id == check_id)
    assert change.mark == Mark.BITS_CHANGED and below.exit_status == 0, change.detail
    assert change.bits.values > 0 and below.bits_line  # values moved (by more ulps where they cancel)
    above = judge(clean, _run_suite(tmp_path, "above", selection, f"nudge-{target}-16"))
    assert next(c.mark for c in above.entries[0].changes if c.check_id == check_id) == Mark.VALUE_CHANGED
    assert above.exit_status == 1
