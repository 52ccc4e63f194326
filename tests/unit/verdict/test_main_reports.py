"""The verdict on real reports of the default matrix keeps every change the harness found before the
typed model, with the same mark, and adds only what the new contracts and bit accounting find."""

import pytest

from harness.model.enums import Mark
from harness.verdict import compare, render

from support import upgrade_reports

DRIFT_BEFORE = "drift within tolerance"  # what "bits changed" replaced
# The old harness's "regressed" is now named by what changed. Each from the old verdict's own detail:
# "dtype float32 observed, float64 recorded" and dtype facts are dtype changes; NaN steps that are
# gone ("expected {'steps': [0, 1, ...]}, observed {'steps': []}") are improvements.
REGRESSED_BEFORE = {
    "schedules/test_interpolated_python_int_steps[cosine_onecycle]": Mark.STATE_CHANGED,
    "schedules/test_interpolated_python_int_steps[interpolate_linear]": Mark.STATE_CHANGED,
    "schedules/test_interpolated_python_int_steps[linear_onecycle]": Mark.STATE_CHANGED,
    "schedules/test_interpolated_python_int_steps[interpolate_boundary_at_0]": Mark.IMPROVED,
    "schedules/test_interpolated_python_int_steps[linear_onecycle_3_steps]": Mark.IMPROVED,
    "schedules/test_injected_schedule[bfloat16_first]": Mark.STATE_CHANGED,
    "accumulation/test_state_layout[bfloat16]": Mark.STATE_CHANGED,
}
# An error contract's bad input that passed silently and now raises is an improvement.
RENAMED = {"new error": Mark.IMPROVED, DRIFT_BEFORE: Mark.BITS_CHANGED}
# Found by the contracts added since, each an optax 0.2.8 change (its changelog and the contracts'
# own analysis): the bfloat16 accumulator is float32 now, float16 grads on float32 params are accepted.
NEW_CONTRACT_CHANGES = {
    "accumulation/test_bfloat16_accumulator": Mark.STATE_CHANGED,
    "accumulation/test_float16_grads_on_float32_params[multisteps_sgd]": Mark.NOW_SILENT,
    "accumulation/test_float16_grads_on_float32_params[multisteps_adam]": Mark.VALUE_CHANGED,
}


@pytest.mark.parametrize("index", [0, 1, 2])
def test_every_change_found_before_is_found_again_with_its_mark(verdict, index):
    before = upgrade_reports.verdict_before()["entries"][index]
    entry = verdict.entries[index]
    assert entry.name == before["name"]
    marks = {c.check_id: c.mark for c in entry.changes}
    for change in before["changes"]:
        old = change["mark"]
        expected = REGRESSED_BEFORE[change["check_id"]] if old == "regressed" else RENAMED.get(old) or Mark(old)
        assert marks[change["check_id"]] == expected, change["check_id"]


def test_the_only_new_contract_changes_are_the_new_contracts_findings(verdict):
    known = upgrade_reports.check_ids_before()
    changes_before = upgrade_reports.verdict_before()["entries"][0]["changes"]
    bad_before = {c["check_id"] for c in changes_before if c["mark"] != DRIFT_BEFORE}
    assert len(bad_before) == 21
    new_bad = {c.check_id: c.mark for c in verdict.entries[0].contract_changes if c.check_id not in bad_before}
    assert new_bad == NEW_CONTRACT_CHANGES and not set(new_bad) & known
    assert verdict.exit_status == 1


def test_headline_names_optax_as_the_cause_and_jax_as_clean(verdict):
    assert verdict.headline == ("CHANGED: 24 checks in 7 contracts (3 improvements), all from optax 0.2.6 → 0.2.8 "
                                "(jax/jaxlib 0.11.2 → 0.12.0.1: none)")


def test_attribution_names_optax_for_every_contract_change_and_jax_for_none(verdict):
    candidate, jax_only, optax_only = verdict.entries
    assert {c.check_id for c in candidate.contract_changes} == {c.check_id for c in optax_only.contract_changes}
    assert not jax_only.contract_changes


def test_jax_alone_moves_bits_only(verdict):
    """jaxlib 0.12 recompiles: the emitted zeros change sign, training losses move by an ulp or two,
    and jitted cosine schedules now equal the eager ones bit for bit."""
    jax_only = verdict.entries[1]
    moved = {c.check_id: c.bits for c in jax_only.changes if c.mark == Mark.BITS_CHANGED}
    assert moved["training/test_training_trajectory[full_batch]"].max_ulps <= 2
    assert sum(b.sign_flips for b in moved.values()) > 0
    assert "equivalence:guide cosine: jit vs eager" in moved["schedules/test_guide_case_jitted"].paths_now_identical
    assert all(c.bits is None for c in jax_only.changes if c.mark == Mark.UNCHANGED)


def test_identical_reports_are_ok_with_no_bits_changed(reports):
    same = compare.judge(reports["baseline"], [reports["baseline"]])
    assert same.exit_status == 0 and same.headline == "OK: no contract changed on baseline"
    assert same.bits_line is None and all(c.mark == Mark.UNCHANGED for c in same.entries[0].changes)


def test_summary_json_keeps_the_old_fields(verdict):
    summary = render.as_json(verdict)
    old = upgrade_reports.verdict_before()
    assert old.keys() <= summary.keys()
    assert all(e.keys() >= o.keys() for e, o in zip(summary["entries"], old["entries"]))
