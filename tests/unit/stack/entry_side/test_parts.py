"""A team's report in two parts (harness.stack.entry_side.parts): the built-in contracts in a process without the
team's code, then its own contracts, joined into the entry's one report; a part the job names as reused is not
run; a part that fails does not stop the other, and the report says which part ended how."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness import env_vars
from harness.model import report_io, report_merge
from harness.model.enums import BuiltinMode, ReportPart, Status
from harness.model.host import Host
from harness.model.report import Report
from harness.model.reuse import ReusedFrom
from harness.run_options import RunOptions
from harness.stack import project
from harness.stack.entry_side import entry as stack_entry, parts
from harness.stack.selection.select import Scope, select
from harness.stack.selection.team_code import TeamCode, Use
from unit.stack.entry_side.test_data_parallel_wiring import _entry_run, _report

ORIGIN = ReusedFrom("20261202T004000-1-abc", "2026-12-02T00:40:12+00:00", "k" * 24, "baseline")


def _team(tmp_path: Path) -> project.Project:
    """A team's project with contracts of its own, its code calling MultiSteps (no sharding: no family process)."""
    (tmp_path / "contracts").mkdir(exist_ok=True)
    code = TeamCode((Use("optax.MultiSteps", "trainer/optim.py:3"),), imports_flax=False)
    return project.Project(root=tmp_path, own_contracts=(tmp_path / "contracts",), golden=tmp_path / "golden",
                           locks=tmp_path / "locks", builtin=BuiltinMode.REPORT, baseline_from=None,
                           pythonpath=(tmp_path,), builtin_scope=Scope.USED, selection=select(Scope.USED, code))


def _split(report: Report) -> tuple[Report, Report]:
    """A real report cut in two: its first checks as the built-in part's, the rest as the team's."""
    own = dataclasses.replace(report.checks[-1], id="team/test_loss", family="team", nodeid="contracts/t.py::a")
    builtin = report.checks[:5]
    return (dataclasses.replace(report, checks=builtin, summary=report_merge.Summary.of(builtin), own_families=None),
            dataclasses.replace(report, checks=[own], summary=report_merge.Summary.of([own]), own_families=["team"]))


def _run(tmp_path, monkeypatch, act, options=RunOptions()):
    return _entry_run(tmp_path, monkeypatch, act, options, found=_team(tmp_path))


def _acting(builtin: Report, own: Report, codes=(0, 0)):
    def act(args, env):
        first = "--noconftest" in args
        report_io.write(env[env_vars.REPORT], builtin if first else own)
        return codes[0] if first else codes[1]
    return act


def test_the_built_in_part_runs_without_the_teams_code_then_the_teams_and_the_two_are_joined(tmp_path, monkeypatch):
    builtin, own = _split(_report())
    session, run = _run(tmp_path, monkeypatch, _acting(builtin, own))
    run()
    (first, env1), (second, env2) = session.commands
    assert "--noconftest" in first and not [a for a in first if "pythonpath" in a or a.endswith("contracts")]
    assert "harness.builtin.test_accumulation" in first
    assert env1[env_vars.REPORT] == str(tmp_path / parts.PARTS / "baseline.builtin.json")
    # Its checkpoints are the entry's (a rollback reads them from there), the team's part writes none.
    assert env1[env_vars.CHECKPOINTS] == str(stack_entry.checkpoints_folder(tmp_path / "baseline.json"))
    assert env_vars.CHECKPOINTS not in env2 and str(tmp_path / "contracts") in second
    assert f"pythonpath={tmp_path}" in second
    joined = report_io.load(tmp_path / "baseline.json")
    assert [c.id for c in joined.checks] == [c.id for c in builtin.checks] + ["team/test_loss"]
    assert joined.own_families == ["team"] and joined.reused_parts is None and joined.status == Status.COMPLETE


def test_a_part_the_job_names_as_reused_is_not_run_and_the_report_says_so(tmp_path, monkeypatch):
    builtin, own = _split(_report())
    kept = parts.part_file(tmp_path / "baseline.json", ReportPart.BUILTIN)
    report_io.write(kept, dataclasses.replace(builtin, reused=ORIGIN))  # as the host writes a kept part
    session, run = _run(tmp_path, monkeypatch, _acting(builtin, own), RunOptions(reused_parts=(kept,)))
    run()
    (only, _), = session.commands
    assert "--noconftest" not in only  # the team's part alone
    joined = report_io.load(tmp_path / "baseline.json")
    assert joined.reused is None and joined.reused_parts == {"builtin": ORIGIN}
    assert joined.summary.total == builtin.summary.total + 1


def test_a_part_that_crashes_leaves_the_other_to_run_and_the_report_says_which_ended_how(tmp_path, monkeypatch):
    builtin, own = _split(_report())
    crashed = dataclasses.replace(builtin, status=Status.PARTIAL, finished_at=None, exit_status=None)
    session, run = _run(tmp_path, monkeypatch, _acting(crashed, own, codes=(-9, 0)))
    with pytest.raises(Exception) as failed:
        run()
    assert failed.value.return_code == -9 and len(session.commands) == 2
    joined = report_io.load(tmp_path / "baseline.json")
    assert joined.status == Status.PARTIAL
    assert joined.problem.startswith("the built-in contracts' process was killed by SIGKILL"), joined.problem


@pytest.mark.parametrize("builtin, contracts, only, whole, expected", [
    (BuiltinMode.REPORT, True, None, False, parts.SPLIT),
    (BuiltinMode.REPORT, True, None, True, (ReportPart.ALL,)),  # a recording: one process
    (BuiltinMode.OFF, True, None, False, (ReportPart.ALL,)),  # one kind of contracts
    (BuiltinMode.REPORT, False, None, False, (ReportPart.ALL,)),
    (BuiltinMode.REPORT, True, "team/test_loss\n", False, (ReportPart.OWN,)),  # an attribution of the team's
    (BuiltinMode.REPORT, True, "masks/test_bad_mask\n", False, (ReportPart.BUILTIN,)),
    (BuiltinMode.REPORT, True, "masks/test_bad_mask\nteam/test_loss\n", False, parts.SPLIT),
], ids=["team", "recording", "no-builtin", "no-contracts", "own-only", "builtin-only", "both"])
def test_the_parts_of_a_run(tmp_path, builtin, contracts, only, whole, expected):
    found = dataclasses.replace(_team(tmp_path), builtin=builtin,
                                own_contracts=(tmp_path / "contracts",) if contracts else ())
    options = RunOptions()
    if only is not None:
        (tmp_path / "only.txt").write_text(only)
        options = RunOptions(only=tmp_path / "only.txt")
    assert parts.of_run(found, options, whole) == expected
    # A replay of the same properties: the same parts (the built-in contracts' never in the team's process).
    replay = dataclasses.replace(options, replay=tmp_path / "x.json")
    assert parts.of_run(found, replay, whole) == expected


def test_joining_adds_up_and_refuses_a_check_run_twice():
    builtin, own = _split(_report())
    joined = report_merge.joined(builtin, own)
    assert joined.summary.total == builtin.summary.total + own.summary.total
    assert joined.timings.total_s == pytest.approx(builtin.timings.total_s + own.timings.total_s)
    assert report_merge.joined(builtin, dataclasses.replace(own, status=Status.UNCOLLECTED)).status == \
        Status.UNCOLLECTED
    with pytest.raises(ValueError, match="same checks"):
        report_merge.joined(builtin, builtin)


# What a part's process may write in a report's optional fields, one sample each; the runner sets the rest on the
# joined report itself (AFTER_JOINING). A new optional field needs a sample here, so that joining is tested on it.
SAMPLES = {"own_families": ["team"], "run_id": "20261206T040000-1-abc",
           "golden_stacks": {"team": {"python": "3.12.1", "jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.8",
                                      "flax": "0.12.12", "numpy": "2.5.5"}},
           "golden_hosts": {"team": Host(cpu="AMD EPYC", machine="x86_64", numerics_features=["fma"], blas="Haswell")}}
AFTER_JOINING = {"reused", "reused_parts"}  # parts.run writes them on the joined report, no part's process does


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Report)
                                   if f.default is not dataclasses.MISSING and f.name not in AFTER_JOINING])
@pytest.mark.parametrize("holder", ["builtin part", "own part"])
def test_what_either_part_wrote_in_an_optional_field_is_kept_in_the_joined_report(field, holder):
    """golden_stacks, written by the own part alone, was dropped by the join: after an accept on the branch the
    PR check could no longer tell accepted values from a code change."""
    assert field in SAMPLES, f"Report.{field}: add a sample value a part's process would write"
    builtin, own = (dataclasses.replace(r, **{f: None for f in SAMPLES}) for r in _split(_report()))
    builtin, own = ((dataclasses.replace(builtin, **{field: SAMPLES[field]}), own) if holder == "builtin part"
                    else (builtin, dataclasses.replace(own, **{field: SAMPLES[field]})))
    assert getattr(report_merge.joined(builtin, own), field) == SAMPLES[field]
