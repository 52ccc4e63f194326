"""An entry's session, under `upgrade --harness-phases`, writes its own phases where its job says (the job's
phases directory): the upgrade tells the session nothing else, HARNESS_PHASES_DIR included."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

from harness import env_vars, run_options
from harness.model import entry_job, phase_times
from harness.stack import sessions
from harness.stack.entry_side import entry_jobs
from harness.stack.pins import matrix

ENTRY = matrix.Entry("candidate", {"optax": "0.2.8"}, "the candidate", python="3.12")


def _entry_session(monkeypatch):
    """The function of the entry's nox session, its entry's run faked."""
    registered = []
    monkeypatch.setattr(sessions, "stack_session", lambda name, tags=(): registered.append)
    monkeypatch.setattr(sessions, "require_python", lambda session: None)
    monkeypatch.setattr(sessions.lifeline, "follow_run", lambda: None)
    monkeypatch.setattr(sessions.report_cache, "reused_or_run", lambda *a, **k: contextlib.nullcontext(a[0]))
    monkeypatch.setattr(sessions.stack_entry, "run_entry", lambda *a, **k: None)
    sessions._entry_session(ENTRY)
    return registered[0]


def test_the_session_writes_its_phases_into_its_jobs_directory(monkeypatch, tmp_path):
    phases = tmp_path / "phases"
    phases.mkdir()
    job = tmp_path / "job.json"
    entry_job.write(job, entry_jobs.job_of(ENTRY, run_options.RunOptions(phases_dir=phases, reports_dir=tmp_path)))
    for spec in run_options.specs(run_options.JOB).values():
        monkeypatch.delenv(spec.env, raising=False)
    monkeypatch.setenv(env_vars.JOB, str(job))
    _entry_session(monkeypatch)(SimpleNamespace(posargs=[], log=print))
    assert [p.source for p in phase_times.read(phases)] == [phase_times.Source.SESSION]


def test_without_a_phases_directory_the_session_writes_none(monkeypatch, tmp_path):
    job = tmp_path / "job.json"
    entry_job.write(job, entry_jobs.job_of(ENTRY, run_options.RunOptions(reports_dir=tmp_path)))
    monkeypatch.setenv(env_vars.JOB, str(job))
    monkeypatch.setenv(env_vars.PHASES_DIR, str(tmp_path))  # left in the shell: not the session's job
    _entry_session(monkeypatch)(SimpleNamespace(posargs=[], log=print))
    assert phase_times.read(tmp_path) == []
