"""CI reuses what has not changed: a fan-out row's session (one `nox -s <entry>` job) looks in the reports
directory's .cache/, which the workflows restore with actions/cache (the newest the default branch saved)
and save after the row. Simulated here as the jobs do it, with test_fanout's made-up entries: a first run
(the default branch) keeps its reports in its cache; that cache, copied into a fresh reports directory (the
restore), serves the next run's baseline, which does not run; its verdict's Markdown says the baseline was
reused and from which run."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from harness import env_vars
from harness.model import entry_job
from harness.stack.run import run_verdict
from harness.stack.entry_side import entry_jobs
from harness.stack.run import entry_runs, report_cache
from harness.stack.workspace import Workspace

from integration.test_fanout import CHECKOUT, Sessions, _follow_ups, _plan, _sources, _step, libraries  # noqa: F401


def _plan_run(directory: Path, tmp_path, monkeypatch, capsys) -> tuple[dict, list[dict]]:
    """The plan job into `directory`: its outputs and its rows."""
    code, first, out = _step(_plan(tmp_path / "unused"), ["--reports", str(directory)], capsys, tmp_path, monkeypatch)
    assert code == 0, capsys.readouterr()
    return out, first["include"]


def _row_job(directory: Path, row: dict, out: dict, sessions: Sessions, monkeypatch, said: list[str]) -> bool:
    """One entry job: its session told what the workflow tells it (its job file); reused (True) or run (its
    report written by the made-up session, then kept)."""
    environ = {env_vars.JOB: row["job"]}
    ws = Workspace.from_environment(environ)  # as the row's session reads its options: from its job
    entry = entry_jobs.entry_of(entry_job.read(Path(row["job"])))
    assert entry.name == row["entry"] and ws.reports == directory.absolute()
    with report_cache.reused_or_run(ws, entry, environ, say=said.append) as told:
        if told is not None:
            sessions.write(directory, entry, row["report"], out["run_id"])
    return told is None


@pytest.fixture
def no_upgrade_around(monkeypatch):
    for name in (env_vars.RUN_PID, env_vars.PLAN, env_vars.JOB, env_vars.RUN_ID, env_vars.REPORTS_DIR):
        monkeypatch.delenv(name, raising=False)


def test_a_restored_cache_serves_the_baseline_and_the_markdown_names_its_run(tmp_path, monkeypatch, capsys,
                                                                              no_upgrade_around):
    sessions = Sessions(_sources(changed=True))
    # The default branch's run: both rows run, and keep their reports under their keys.
    main = tmp_path / "main-reports"
    first_out, rows = _plan_run(main, tmp_path, monkeypatch, capsys)
    said: list[str] = []
    assert [_row_job(main, r, first_out, sessions, monkeypatch, said) for r in rows] == [False, False]
    assert sessions.runs == ["baseline", "candidate"]
    kept = sorted(p.name for p in (main / report_cache.CACHE).glob(report_cache.RECORDS))
    assert len(kept) == 2
    # The pull request's run: a fresh checkout, the cache restored (actions/cache), a new plan and run id.
    pr = tmp_path / "pr-reports"
    pr.mkdir()
    shutil.copytree(main / report_cache.CACHE, pr / report_cache.CACHE)
    out, rows = _plan_run(pr, tmp_path, monkeypatch, capsys)
    assert out["run_id"] != first_out["run_id"]
    baseline_row = next(r for r in rows if r["entry"] == "baseline")
    assert _row_job(pr, baseline_row, out, sessions, monkeypatch, said) is True
    assert sessions.runs == ["baseline", "candidate"]  # the baseline did not run again
    assert said[-1].startswith(f"baseline: reused the report of run {first_out['run_id']} (entry baseline, ")
    report = json.loads((pr / "baseline.json").read_text())
    assert report["run_id"] == out["run_id"]  # judged as this run's
    assert report["reused"]["run_id"] == first_out["run_id"]
    # The candidate changed in the pull request (here: the cache lost its record): it runs.
    for record in (pr / report_cache.CACHE).glob(report_cache.RECORDS):
        if json.loads(gzip.decompress(record.read_bytes()))["entry"] == "candidate":
            record.unlink()
    candidate_row = next(r for r in rows if r["entry"] == "candidate")
    assert _row_job(pr, candidate_row, out, sessions, monkeypatch, said) is False
    assert sessions.runs == ["baseline", "candidate", "candidate"]
    # The judge job, after the follow-ups (their rows run as the workflow's jobs do): the Markdown verdict
    # says the baseline was reused, from which run and when.
    monkeypatch.setenv(env_vars.RUN_ID, out["run_id"])
    code, follow, _ = _step(_follow_ups, [str(pr)], capsys, tmp_path, monkeypatch)
    assert code == 0
    sessions.run_rows(pr, follow["include"], out["run_id"])
    assert run_verdict.judge(CHECKOUT, pr) == 1
    markdown = (pr / "upgrade-summary.md").read_text()
    finished = report["reused"]["finished_at"]
    line = next(ln for ln in markdown.splitlines() if ln.startswith("Reused: "))
    assert line == (f"Reused: baseline: not run, its report reused from run {first_out['run_id']} (finished "
                    f"{finished[:10]} {finished[11:16]} UTC; nothing that determines it changed)")
    assert "| baseline |" in markdown and "reused from" in markdown


def test_a_row_started_by_an_upgrade_or_by_hand_never_looks(tmp_path, no_upgrade_around):
    ws = Workspace.of(tmp_path, tmp_path / "reports")
    assert not report_cache.is_fanout_row({})  # by hand: no job
    assert not report_cache.is_fanout_row({env_vars.PLAN: "p"})  # a plan a user names: still by hand
    assert not report_cache.is_fanout_row({env_vars.JOB: "j", env_vars.RUN_PID: "1"})  # an upgrade's child
    assert report_cache.is_fanout_row({env_vars.JOB: "j"})
    with report_cache.reused_or_run(ws, object(), {env_vars.JOB: "j", env_vars.RUN_PID: "1"}) as told:
        assert told is ws  # run as told, nothing reused
    assert not (tmp_path / "reports").exists()  # nothing looked up or kept


def test_an_actions_run_names_itself_in_the_run_id(monkeypatch):
    monkeypatch.setenv("GITHUB_RUN_ID", "9876543210")
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "2")
    assert "-actions-9876543210.2-" in entry_runs.new_run_id()
    monkeypatch.delenv("GITHUB_RUN_ID")
    assert "actions" not in entry_runs.new_run_id()


def test_a_row_whose_built_in_part_was_kept_runs_the_other_part_and_keeps_it(tmp_path, no_upgrade_around,
                                                                            monkeypatch):
    """As an upgrade's entry: the kept part written where its session writes it, the session told (the workspace
    it yields names the part), and after the run the part it ran kept."""
    from harness.model.entry_job import JobOptions
    from harness.stack.run import report_cache, report_key

    kept = tmp_path / "reports" / "parts" / "baseline.builtin.json"
    looked = report_cache.Attempt(report_key.ReportKey({"lock": "a"}), keys={}, reused_parts=(kept,))
    monkeypatch.setattr(report_cache, "attempt", lambda *a, **k: looked)
    monkeypatch.setattr(entry_job, "options_of", lambda options: JobOptions())
    stored = []
    monkeypatch.setattr(report_cache, "keep", lambda ws, cache, done, *a: stored.append(done))
    ws = Workspace.of(tmp_path, tmp_path / "reports")
    entry = type("E", (), {"name": "baseline"})()
    with report_cache.reused_or_run(ws, entry, {env_vars.JOB: "j"}, say=lambda line: None) as told:
        assert told is not None and told.options.reused_parts == (kept,)
    assert stored == [looked]
