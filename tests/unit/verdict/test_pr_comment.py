"""The PR comment says what concerns the team (issue 59): the built-in changes in tests of a callable its code calls
are marked with the call site, its own checks that held are named, one "Next:" line says what the pull request
waits for, re-recorded golden values are counted in the headline with their reason even when green, and the
"this host" line says whose values each recording host recorded. Verdicts built from the fixture reports, a family
of them made the team's own where a test needs contracts of its own."""

from __future__ import annotations

import dataclasses
import re

import pytest

from harness.model.enums import BuiltinMode
from harness.model.golden_changes import GoldenChanges, Policy, ValueChange, ValueChangeKind, Writer
from harness.model.host import Host
from harness.model.report import STACK_VERSION_KEYS
from harness.model.verdict import TeamCall
from harness.verdict import compare, host_drift, html, markdown, render, rerecorded

MULTISTEPS = TeamCall("optax.MultiSteps", "trainer/optim.py:8", ("shapes/test_mismatched_grads",))
HERE = Host(cpu="AMD EPYC", machine="x86_64", numerics_features=["avx512_bf16"], vector="AVX512", fma=True,
            blas="Haswell")
ELSEWHERE = dataclasses.replace(HERE, blas="SkylakeX")


def _row(md: str, contract: str) -> list[str]:
    """The comment's table rows of a built-in contract."""
    return [line for line in md.splitlines() if line.startswith("| **") and f"`{contract}`" in line]


def _owned(report, family: str, keep: int | None = None):
    """The report with `family`'s checks made the project's own (its first `keep` of them only, when given)."""
    ids = [c.id for c in report.checks if c.family == family][:keep]
    checks = [dataclasses.replace(c, own=True) if c.id in ids else c for c in report.checks
              if c.family != family or c.id in ids]
    return dataclasses.replace(report, checks=checks, own_families=[family])


def _team_verdict(reports, family: str, keep: int | None = None):
    base, candidate = (_owned(reports[name], family, keep) for name in ("baseline", "candidate"))
    return compare.judge(base, [candidate], builtin=BuiltinMode.REPORT)


def _next(md: str) -> list[str]:
    return [line for line in md.splitlines() if line.startswith("**Next:")]


# --- built-in rows on a callable the team calls --------------------------------------------------------------------

def test_a_built_in_row_in_tests_of_a_callable_the_team_calls_is_marked_with_the_call_site(verdict):
    marked = dataclasses.replace(verdict, team_calls=[MULTISTEPS])
    md = markdown.markdown(marked)
    rows = _row(md, "shapes/test_mismatched_grads")
    assert len(rows) >= 2  # the fixture's candidate changes it two ways: now silent, error type changed
    assert all("your code: trainer/optim.py:8 (optax.MultiSteps)" in row for row in rows)
    others = [line for line in md.splitlines() if line.startswith("| **") and "shapes/test_mismatched_grads" not in line]
    assert others and not any("your code" in line for line in others)
    assert "your code" not in markdown.markdown(verdict)  # no call sites: this checkout's comment as before
    assert "      your code: trainer/optim.py:8 (optax.MultiSteps)" in render.text(marked)
    assert "<div class='your-code'><b>your code: trainer/optim.py:8 (optax.MultiSteps)</b></div>" in html.page(marked, [])
    assert render.as_json(marked)["team_calls"] == [
        {"callable": "optax.MultiSteps", "where": "trainer/optim.py:8", "tests": ["shapes/test_mismatched_grads"]}]


def test_a_call_site_covering_one_parametrization_marks_its_row_and_more_sites_are_counted(verdict):
    one_case = TeamCall("optax.sgd", "trainer/optim.py:9", ("accumulation/test_float16_grads_on_float32_params"
                                                            "[multisteps_adam]",))
    md = markdown.markdown(dataclasses.replace(verdict, team_calls=[one_case, MULTISTEPS, dataclasses.replace(
        MULTISTEPS, callable="optax.chain", where="trainer/loop.py:30")]))
    # Its multisteps_adam case's values changed, its multisteps_sgd case is now silent: a row each, one of them covered.
    (covered,) = [r for r in _row(md, "accumulation/test_float16_grads_on_float32_params") if "value changed" in r]
    (other,) = [r for r in _row(md, "accumulation/test_float16_grads_on_float32_params") if "now silent" in r]
    assert "your code: trainer/optim.py:9 (optax.sgd)" in covered and "more" not in covered
    assert "your code" not in other
    assert all("your code: trainer/optim.py:8 (optax.MultiSteps) +1 more" in r
               for r in _row(md, "shapes/test_mismatched_grads"))


# --- the team's checks that held ----------------------------------------------------------------------------------

def test_the_teams_checks_that_held_are_named_on_a_line_when_few(reports):
    verdict = _team_verdict(reports, "masks", keep=3)
    held = [c.id for c in reports["baseline"].checks if c.family == "masks"][:3]
    md = markdown.markdown(verdict)
    assert "- 3 held on candidate: " + ", ".join(f"`{i}`" for i in held) in md


def test_many_held_checks_are_folded_every_one_named(reports):
    verdict = _team_verdict(reports, "masks")
    held = [c.id for c in reports["baseline"].checks if c.family == "masks"]
    md = markdown.markdown(verdict)
    assert f"<details><summary>Your {len(held)} held on candidate</summary>" in md
    folded = md.split(f"<summary>Your {len(held)} held on candidate</summary>", 1)[1].split("</details>", 1)[0]
    assert re.findall(r"^- `([^`]+)`$", folded, re.MULTILINE) == held


# --- the Next: line -----------------------------------------------------------------------------------------------

def _recorded_on_candidate(verdict):
    """The verdict after `accept`: the team's golden values say they were recorded on the candidate's stack."""
    on = {k: verdict.entries[0].versions.get(k) for k in STACK_VERSION_KEYS}
    return dataclasses.replace(verdict, baseline=dataclasses.replace(
        verdict.baseline, golden_stacks={f.name: on for f in verdict.own_families}))


def test_a_green_bump_names_accept_right_under_the_headline_and_what_merging_without_it_leaves(reports):
    md = markdown.markdown(_team_verdict(reports, "masks"))
    (line,) = _next(md)
    assert md.index("Upgrade verdict: OK") < md.index("**Next:") < md.index("| entry |")
    assert line.startswith('**Next: to adopt this bump, `upgrade-harness upgrade && upgrade-harness accept --reason '
                           '"..."` on this branch')
    assert "Merged without it, the check stays green, but your golden values stay recorded on the old stack" in line


def test_a_green_verdict_once_accepted_or_without_a_bump_says_there_is_nothing_to_do(reports):
    assert _next(markdown.markdown(_recorded_on_candidate(_team_verdict(reports, "masks")))) == [
        "**Next: nothing to do.**"]
    base = _owned(reports["baseline"], "masks")
    unbumped = compare.judge(base, [dataclasses.replace(base, entry=reports["candidate"].entry)],
                             builtin=BuiltinMode.REPORT)
    assert unbumped.exit_status == 0 and _next(markdown.markdown(unbumped)) == ["**Next: nothing to do.**"]


def test_a_bump_that_changed_the_teams_checks_names_accept_and_what_merging_without_it_means(reports):
    verdict = _team_verdict(reports, "accumulation")
    assert verdict.exit_status == 1
    (line,) = _next(markdown.markdown(verdict))
    changed = len(verdict.own_families[0].changed)
    assert '`upgrade-harness upgrade && upgrade-harness accept --reason "..."` on this branch' in line
    assert (f"Merged without it, your golden values stay those of the old stack: the {changed} of your checks that "
            "changed here then fail on the baseline of every later pull-request check (exit 1)") in line


def test_values_re_recorded_without_a_reason_name_the_command_that_records_one(reports):
    green = _recorded_on_candidate(_team_verdict(reports, "masks"))
    judged = rerecorded.applied(green, _changes(reports, None), [reports["baseline"]])
    assert judged.exit_status == 1
    (line,) = _next(markdown.markdown(judged))
    assert 'give the re-recorded values a reason: `upgrade-harness golden --accept-changes --reason "..."`' in line


def test_own_checks_failing_on_the_baseline_name_the_recording_of_the_codes_change(reports):
    verdict = _team_verdict(reports, "masks")
    failing = dataclasses.replace(verdict, exit_status=1, own_families=[dataclasses.replace(
        verdict.own_families[0], failing_on_baseline=["masks/test_x"])])
    (line,) = _next(markdown.markdown(failing))
    assert line.startswith("**Next: your checks failing on the baseline above moved with your code; if that is "
                           'intended, `upgrade-harness golden --accept-changes --reason "..."` records')


def test_no_next_line_where_the_verdict_cannot_judge_or_the_comment_is_this_checkouts(reports, verdict):
    cannot = dataclasses.replace(_team_verdict(reports, "masks"), exit_status=2, headline="CANNOT JUDGE: x")
    assert _next(markdown.markdown(cannot)) == [] and _next(markdown.markdown(verdict)) == []


# --- re-recorded golden values in the headline --------------------------------------------------------------------

def _changes(reports, reason: str | None, count: int = 3) -> GoldenChanges:
    labels = [(c.family, comp.label.removeprefix("golden:")) for c in reports["baseline"].checks
              for comp in c.comparisons if comp.label.startswith("golden:")][:count]
    writer = Writer("golden --accept-changes", reason)
    return GoldenChanges("origin/main", "golden", Policy.FAIL, tuple(
        ValueChange(family, key, f"golden/{family}.json", ValueChangeKind.CHANGED, "1.0", "1.5", "float32", 1, 1,
                    4.0, 0.5, writer) for family, key in labels))


def test_re_recorded_values_are_counted_in_a_green_headline_with_their_reason(reports):
    green = _team_verdict(reports, "masks")
    judged = rerecorded.applied(green, _changes(reports, "weight decay doubled"), [reports["baseline"]])
    assert judged.exit_status == 0
    first = markdown.markdown(judged).splitlines()[0]
    assert first == (f"## ✅ Upgrade verdict: {green.headline}; golden values against origin/main's: 3 changed "
                     "(reason: weight decay doubled)")


def test_a_headline_that_already_counts_values_without_a_reason_does_not_count_them_twice(reports):
    judged = rerecorded.applied(_team_verdict(reports, "masks"), _changes(reports, None), [reports["baseline"]])
    first = markdown.markdown(judged).splitlines()[0]
    assert first.startswith("## ❌ Upgrade verdict: RE-RECORDED: 3 golden values") and "against origin/main's:" not in first


# --- whose values each recording host recorded --------------------------------------------------------------------

@pytest.mark.parametrize("own_host, builtin_host, said", [
    (HERE, ELSEWHERE, "golden values recorded: yours on this host; the built-in contracts' on AMD EPYC (x86_64, "
                      "AVX512, FMA, avx512_bf16; OpenBLAS SkylakeX): BLAS kernel Haswell here, SkylakeX where recorded"),
    (ELSEWHERE, HERE, "golden values recorded: yours on AMD EPYC (x86_64, AVX512, FMA, avx512_bf16; OpenBLAS "
                      "SkylakeX): BLAS kernel Haswell here, SkylakeX where recorded; the built-in contracts' on this host"),
])
def test_the_host_line_says_which_recording_host_holds_the_teams_values_and_which_the_tools(
        reports, own_host, builtin_host, said):
    base = _owned(reports["baseline"], "masks")
    base = dataclasses.replace(base, environment=dataclasses.replace(base.environment, host=HERE),
                               golden_hosts={"masks": own_host, "shapes": builtin_host, "clipping": builtin_host})
    assert host_drift.host_row(base) == "this host: AMD EPYC (x86_64, AVX512, FMA, avx512_bf16; OpenBLAS Haswell); " + said


def test_one_kind_of_values_keeps_the_host_line_unlabelled(reports):
    base = dataclasses.replace(reports["baseline"], environment=dataclasses.replace(
        reports["baseline"].environment, host=HERE), golden_hosts={"shapes": ELSEWHERE, "masks": ELSEWHERE})
    assert host_drift.host_row(base) == (
        "this host: AMD EPYC (x86_64, AVX512, FMA, avx512_bf16; OpenBLAS Haswell); golden values recorded on AMD EPYC "
        "(x86_64, AVX512, FMA, avx512_bf16; OpenBLAS SkylakeX): BLAS kernel Haswell here, SkylakeX where recorded")
