"""A verdict a reviewer acts on in one minute, on real reports of the default matrix and of a
candidate that cannot import: the cause in the headline, the most dangerous change first, parametrized
cases grouped, user terms, improvements apart, an import failure as one finding, a comment that fits."""

import copy
import dataclasses

import pytest

from harness.model import report_io
from harness.model.allclose import AllClose
from harness.model.enums import BuiltinMode, Mark
from harness.verdict import cause, compare, groups, markdown, render, views

from support import upgrade_reports


def test_silent_broadcasts_come_first_grouped_with_their_cases(verdict):
    found = views.contract_groups(verdict)
    assert [g.mark for g in found] == sorted((g.mark for g in found), key=lambda m: m.rank)
    assert found[0].mark == Mark.NOW_SILENT
    shapes = next(g for g in found if g.contract == "shapes/test_mismatched_grads" and g.mark == Mark.NOW_SILENT)
    assert shapes.cases_text == "6 cases: multisteps_sgd × leaf_broadcastable, rank_down, scalar_leaf × eager, jit"
    assert shapes.before_after.startswith("raises TypeError → no error")


def test_each_case_says_its_input_in_user_terms(verdict):
    change = next(c for c in verdict.entries[0].changes
                  if c.check_id == "shapes/test_mismatched_grads[multisteps_sgd-leaf_broadcastable-jit]")
    assert change.input == "grads['bias'] of shape (1,) for params['bias'] of shape (3,) (under jit)"
    assert "leaf_broadcastable-jit: grads['bias'] of shape (1,)" in render.text(verdict)


def test_dtype_changes_name_the_dtypes_and_where(verdict):
    change = next(c for c in verdict.entries[0].changes if c.check_id == "accumulation/test_state_layout[bfloat16]")
    assert change.mark == Mark.STATE_CHANGED
    assert (change.before, change.after) == ("bfloat16", "float32 (at .acc_grads['bias'], .acc_grads['kernel'])")


def test_nan_gone_is_an_improvement_not_a_regression(verdict):
    change = next(c for c in verdict.entries[0].changes
                  if c.check_id == "schedules/test_interpolated_python_int_steps[interpolate_boundary_at_0]")
    assert change.mark == Mark.IMPROVED and change.mark.changes_contract  # still a change to accept
    assert (change.before, change.after) == ("NaN at steps 0, 1, 3, 7, 9, 10, 11", "no NaN")


def test_numeric_change_says_its_size_in_percent_and_tolerances(verdict):
    change = next(c for c in verdict.entries[0].changes
                  if c.check_id == "accumulation/test_float16_grads_on_float32_params[multisteps_adam]")
    assert change.mark == Mark.VALUE_CHANGED
    # The ulps are counted on the host from the kept bits; the contract side measured them with NumPy.
    assert change.size == "4792 ulp of float32, 0.0446% max rel err, 599x its 8 ulp tolerance, 3 of 3 values"
    assert "(4.79e+03 ulp)" in change.detail


def test_numeric_change_shows_the_assert_allclose_pair_beside_the_ulps(reports):
    """A report that records the pair (reports before it did not): the reviewer can re-check with NumPy."""
    check_id = "accumulation/test_float16_grads_on_float32_params[multisteps_adam]"
    candidate = reports["candidate"]
    checks = [dataclasses.replace(c, comparisons=[dataclasses.replace(x, allclose=AllClose(rtol=9.536743164062502e-07,
                                                                                          atol=0.0))
                                                  for x in c.comparisons]) if c.id == check_id else c
              for c in candidate.checks]
    verdict = compare.judge(reports["baseline"], [dataclasses.replace(candidate, checks=checks)])
    change = next(c for c in verdict.entries[0].changes if c.check_id == check_id)
    assert change.size == ("4792 ulp of float32, 0.0446% max rel err, 599x its 8 ulp tolerance "
                           "(assert_allclose rtol=9.54e-07, atol=0), 3 of 3 values")
    assert "599x its 8 ulp tolerance (assert_allclose rtol=9.54e-07, atol=0)" in render.text(verdict)


def test_pr_comment_fits_and_keeps_the_decision(verdict):
    page = markdown.markdown(verdict)
    assert len(page) <= markdown.COMMENT_BUDGET
    assert page.startswith("## ❌ Upgrade verdict: CHANGED: 24 checks in 7 contracts (3 improvements), all from optax")
    assert page.index("**now silent**") < page.index("**dtype/state changed**") < page.index("**improved**")


def test_a_smaller_budget_cuts_sections_and_says_how_many_rows_it_left_out(verdict, monkeypatch):
    monkeypatch.setattr(markdown, "COMMENT_BUDGET", 9_000)
    page = markdown.markdown(verdict)
    assert len(page) <= 9_000
    assert "checks unchanged (listed in upgrade-report.html)" in page  # the unchanged table went first
    assert "… " in page and "more" in page


def test_cause_with_changes_from_two_bumps_counts_each(verdict):
    candidate, jax_only, optax_only = verdict.entries
    moved = next(c for c in candidate.contract_changes if c.check_id.startswith("accumulation/test_bfloat16"))
    jax_changed = dataclasses.replace(jax_only, changes=[*jax_only.changes, moved])
    optax_lost = dataclasses.replace(optax_only, changes=[c for c in optax_only.changes if c.check_id != moved.check_id])
    said = cause.cause(verdict.baseline.environment.versions, [candidate, jax_changed, optax_lost])
    assert said == "23 from optax 0.2.6 → 0.2.8, 1 from jax/jaxlib 0.11.2 → 0.12.0.1"


def test_import_failure_is_one_finding_with_the_library_line(reports):
    verdict = compare.judge(reports["baseline"], [reports["candidate-optax-0.2.7"]])
    assert verdict.exit_status == 1
    assert verdict.headline == (
        "CHANGED: optax 0.2.7 cannot be imported with jax 0.11.2: AttributeError: Unrecognized config option: "
        "jax_pmap_shmap_merge (optax/contrib/_complex_valued.py:39); 340 checks could not run")
    page = markdown.markdown(verdict)
    assert "check missing" not in page.split("### Import failure", 1)[1] and len(page) < 3_000
    assert not views.contract_groups(verdict)  # no row per missing check


def test_groups_list_cases_that_are_not_a_full_product_by_name():
    from harness.model.enums import CheckKind
    from harness.model.verdict import Change

    def change(case):
        return Change(f"f/test_x[{case}]", "f", CheckKind.GOLDEN, Mark.VALUE_CHANGED, "", None, None, [])

    [group] = groups.group([change("a-eager"), change("b-jit")])
    assert group.cases_text == "2 cases: a-eager, b-jit"


def test_an_attribution_entry_that_could_not_be_built_never_blocks_the_verdict(reports):
    from harness.model.report import EntryInfo, now, unresolvable

    jax_only = unresolvable(EntryInfo("jax-only", "3.12", {"jax": "0.12.0.1"}, False), "cannot resolve", now())
    verdict = compare.judge(reports["baseline"], [reports["candidate"], jax_only, reports["optax-only"]])
    assert verdict.exit_status == 1
    # A partial attribution: counted, not "all from", and the entry that could not be built named.
    assert verdict.cause == "24 from optax 0.2.6 → 0.2.8 (jax 0.11.2 → 0.12.0.1: not judged, unresolvable)"


# A team's project on the same real reports: the "training" family taken as the team's own contracts.

def _as_own(docs: dict[str, dict], family: str) -> dict[str, dict]:
    docs = copy.deepcopy(docs)
    for doc in docs.values():
        doc["own_families"] = [family]
        for check in doc["checks"]:
            if check["family"] == family:
                check["own"] = True
    return docs


@pytest.fixture(scope="module")
def documents():
    return {name: upgrade_reports.load(name) for name in upgrade_reports.ENTRIES}


def _judge(docs: dict[str, dict], builtin: BuiltinMode):
    parsed = [report_io.parse(docs[n], n) for n in upgrade_reports.ENTRIES]
    return compare.judge(parsed[0], parsed[1:], builtin=builtin)


def test_reported_only_the_optax_changes_leave_the_teams_verdict_ok(documents):
    docs = _as_own(documents, "training")
    verdict = _judge(docs, BuiltinMode.REPORT)
    checks = sum(c["family"] == "training" for c in docs["baseline"]["checks"])
    moved = sum(c.family == "training" and c.mark == Mark.BITS_CHANGED for c in verdict.entries[0].changes)
    assert checks == 5 and moved == 2
    assert verdict.exit_status == 0
    assert verdict.headline == ("OK: your contracts hold on candidate (5 checks; 2 moved bits within tolerance); built-in "
                                "contracts (reported only): 24 checks in 7 contracts changed (3 improvements), all "
                                "from optax 0.2.6 → 0.2.8")
    # The bits-only moves are the team's to read first, each with the bump that moves it.
    jax = "jax/jaxlib 0.11.2 → 0.12.0.1"
    assert [(o.change.mark, o.cause) for o in verdict.own_changes] == [(Mark.BITS_CHANGED, jax)] * 2
    judged = _judge(docs, BuiltinMode.JUDGE)
    assert judged.exit_status == 1 and judged.headline.startswith("CHANGED: 24 checks in 7 contracts (3 improvements)")


def _loss_moved_with_jax(docs: dict[str, dict]) -> dict[str, dict]:
    """The trajectory the jax bump moves by bits, made to move beyond its tolerance (candidate and jax-only)."""
    for name in ("candidate", "jax-only"):
        check = next(c for c in docs[name]["checks"] if c["id"] == "training/test_training_trajectory[full_batch]")
        check["outcome"], check["message"] = "failed", "golden:loss: 1 of 1 elements outside"
        next(c for c in check["comparisons"] if (c.get("values") or {}).get("values"))["passed"] = False
    return docs


def test_reported_only_a_change_of_the_teams_own_contract_decides_and_names_its_bump(documents):
    docs = _loss_moved_with_jax(_as_own(documents, "training"))
    verdict = _judge(docs, BuiltinMode.REPORT)
    assert verdict.exit_status == 1
    assert verdict.headline == (
        "CHANGED: your contracts: 1 check in 1 contract (training/test_training_trajectory), from jax/jaxlib 0.11.2 → "
        "0.12.0.1; built-in contracts (reported only): 24 checks in 7 contracts changed (3 improvements), all from "
        "optax 0.2.6 → 0.2.8")
    first = verdict.own_changes[0]
    assert first.change.check_id == "training/test_training_trajectory[full_batch]"
    assert first.change.mark == Mark.VALUE_CHANGED and first.cause == "jax/jaxlib 0.11.2 → 0.12.0.1"
    own_part = render.text(verdict).split("\n  Your contracts", 1)[1].split("Built-in contracts changed", 1)[0]
    assert f"VALUE CHANGED  {first.change.check_id}  [{first.change.size}]" in own_part and first.change.size
    assert "cause: jax/jaxlib 0.11.2 → 0.12.0.1" in own_part
    # Judged, the same reports count it among the 25, and the own section still comes first.
    judged = _judge(docs, BuiltinMode.JUDGE)
    assert judged.exit_status == 1
    assert judged.headline.startswith("CHANGED: 25 checks in 8 contracts (3 improvements), 1 of them in your own")
    page = markdown.markdown(judged)
    assert page.index("`training/test_training_trajectory[full_batch]`") < page.index("### Built-in contracts changed")
    assert len(page) <= markdown.COMMENT_BUDGET


def test_the_upgrade_log_counts_what_the_headline_counts_and_the_bits_apart(verdict):
    # The headline says 24 checks changed; the attribution re-runs the 9 bits-only moves too (the candidate's
    # row: "..., 3 improved, 9 bits changed").
    assert views.entry_rows(verdict)[1].result.endswith(", 9 bits changed")
    assert compare.changed_text(verdict.entries[0]) == "24 checks changed and 9 moved bits only"


def test_the_cause_of_one_check_names_each_bump_that_moves_it(verdict):
    candidate, jax_only, optax_only = verdict.entries
    moved = next(c for c in candidate.contract_changes if c.check_id.startswith("accumulation/test_bfloat16"))
    base = verdict.baseline.environment.versions
    assert cause.of_check(base, verdict.entries, moved.check_id) == "optax 0.2.6 → 0.2.8"
    jax_too = dataclasses.replace(jax_only, changes=[moved if c.check_id == moved.check_id else c
                                                     for c in jax_only.changes])
    assert moved in jax_too.changes
    assert cause.of_check(base, [candidate, jax_too, optax_only], moved.check_id) == \
        "jax/jaxlib 0.11.2 → 0.12.0.1 and optax 0.2.6 → 0.2.8 (each alone)"
    optax_lost = dataclasses.replace(optax_only, changes=[c for c in optax_only.changes if c.check_id != moved.check_id])
    assert cause.of_check(base, [candidate, jax_only, optax_lost], moved.check_id) == "only with the bumps together"


def test_the_cause_of_a_fixed_check_is_the_bump_that_fixes_it_alone(verdict):
    """A check the baseline fails and the candidate passes (accepted on a branch: its golden values are the
    candidate's) moved as the candidate moved it only on a single entry that passes it too: one that still fails
    it, as the baseline does, did not move it (tests/integration/test_pull_request_flow.py found the accepted rows
    naming both bumps, "each alone", where the jax bump alone made the base differ)."""
    candidate, jax_only, optax_only = verdict.entries
    moved = candidate.contract_changes[0]
    base = verdict.baseline.environment.versions

    def marked(entry, mark):
        return dataclasses.replace(entry, changes=[c for c in entry.changes if c.check_id != moved.check_id]
                                   + [dataclasses.replace(moved, mark=mark)])

    entries = [marked(candidate, Mark.FIXED), marked(jax_only, Mark.FIXED), marked(optax_only, Mark.FAILING_BOTH)]
    assert cause.of_check(base, entries, moved.check_id) == "jax/jaxlib 0.11.2 → 0.12.0.1"
    entries[1] = marked(jax_only, Mark.FAILING_BOTH)  # fixed only with both bumps
    assert cause.of_check(base, entries, moved.check_id) == "only with the bumps together"
