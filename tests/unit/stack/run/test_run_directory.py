"""A run's directory (harness.stack.run.run_directory): one object per run, handed down with the run's
workspace; its file names those the entry side writes and the verdict writes."""

from __future__ import annotations

from harness.stack import paths
from harness.stack.entry_side import entry as stack_entry
from harness.stack.pins import matrix
from harness.stack.run import run_directory
from harness.stack.run.run_directory import SUMMARY_FILES, RunDirectory, entry_files
from harness.stack.workspace import Workspace
from harness.verdict import judgement


def test_a_run_hands_down_one_run_directory(tmp_path):
    ws = run_directory.start(Workspace.of(paths.SOURCE, tmp_path / "reports"), "run-1")
    found = RunDirectory.of(ws)
    assert found.path == tmp_path / "reports" / run_directory.RUNS / "run-1" == ws.reports
    assert RunDirectory.of(ws) is found  # what the run read is held across its steps
    elsewhere = ws.with_reports(tmp_path / "other")
    assert RunDirectory.of(elsewhere).path == tmp_path / "other" and RunDirectory.of(elsewhere) is not found
    assert RunDirectory.of(Workspace.of(paths.SOURCE, tmp_path / "x")).loaded is not found.loaded


def test_its_names_are_those_the_entry_side_and_the_verdict_write(tmp_path):
    run = RunDirectory(tmp_path)
    entry = matrix.Entry("candidate", {"optax": "0.2.8"}, "c")
    assert run.report_file("candidate") == stack_entry.report_path(tmp_path, entry)
    assert run.checkpoints_of("candidate") == stack_entry.checkpoints_folder(run.report_file("candidate"))
    assert [run.report_file("x").name, run.junit("x").name, run.log("x").name] == entry_files("x")
    summary = run.summary
    assert summary == judgement.Outputs.beside(tmp_path)
    assert {p.name for p in (summary.markdown, summary.json, summary.html, run.plan, run.bisection, run.api_diff,
                             run.examples, run.replay_selection, run.attribution_selection,
                             run.rollback_selection, run.bisect_selection, run.golden_changes)} == set(SUMMARY_FILES)
