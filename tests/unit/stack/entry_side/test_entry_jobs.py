"""An upgrade tells each entry's session one variable, its job file's path (harness.model.entry_job): the
session registers and runs its entry from it, without the plan or the matrix, and the variables the job
replaced never reach the child, whatever this process's environment holds."""

from __future__ import annotations


import pytest

from harness import env_vars, run_options
from harness.model import entry_job
from harness.run_options import RunOptions
from harness.stack import paths, sessions
from harness.stack.entry_side import entry_jobs
from harness.stack.pins import current, matrix, plan
from harness.stack.run import entry_runs
from harness.stack.run.run_directory import RunDirectory
from harness.stack.workspace import Workspace

RESOLVED = matrix.Entry("jax-only", {"jax": "0.12.0.1", "optax": "0.2.6"}, "baseline with only jax bumped",
                        python="3.12", locked=False, lock_file="/run/locks/jax-only.txt",
                        notes=("flax 0.12.12 -> 0.12.6: fits jax",), resolved_at="2026-12-03T19:00:00+00:00",
                        pins_from="--candidate jax==0.12.0.1")


RUN = RunOptions(run_id="run-J")  # an upgrade's run options, as its workspace carries them


@pytest.fixture(autouse=True)
def found_python(monkeypatch):
    """The host's look-up of an entry's Python (a subprocess), made a name."""
    monkeypatch.setattr(entry_jobs, "find_python", lambda version: f"/found/python{version}")


def test_an_entry_survives_its_job_unchanged_problem_and_all():
    assert entry_jobs.entry_of(entry_jobs.job_of(RESOLVED, run_options.RunOptions())) == RESOLVED
    unbuilt = matrix.Entry("optax-only", {"optax": "9"}, "x", locked=False, problem="does not resolve")
    assert entry_jobs.entry_of(entry_jobs.job_of(unbuilt, run_options.RunOptions())) == unbuilt


def test_the_child_is_told_its_job_and_none_of_the_variables_it_replaces(monkeypatch, tmp_path):
    replaced = [s.env for s in run_options.specs(run_options.JOB).values()]
    assert {env_vars.RUN_ID, env_vars.SEED, env_vars.REPORTS_DIR, env_vars.ONLY, env_vars.BUILTIN_TESTS, env_vars.REPLAY,
            env_vars.REUSED_PARTS, env_vars.REPORT_NAME, env_vars.ROLLBACK_FROM, env_vars.WHEEL, env_vars.PROGRESS,
            env_vars.PHASES_DIR} == set(replaced)
    for name in [*replaced, env_vars.PLAN]:
        monkeypatch.setenv(name, "left in the shell")
    ws = Workspace.of(paths.SOURCE, tmp_path).with_options(RUN)
    run = entry_runs.Run(RESOLVED, only=tmp_path / "only.txt")
    child = run.environment(ws, 7)
    assert child[env_vars.JOB] == str(RunDirectory.of(ws).job("jax-only")) == str(tmp_path / "jobs" / "jax-only.json")
    assert not {name for name in [*replaced, env_vars.PLAN] if name in child}
    assert child[env_vars.RUN_PID]  # it still dies with the run
    job = run.job(ws, 7, progress=tmp_path / "p.json")
    assert job.interpreter == "/found/python3.12"  # looked up once by the host, for the session to use
    told = job.options
    assert (told.run_id, told.seed, told.only, told.reports_dir, told.progress) == (
        "run-J", 7, tmp_path / "only.txt", tmp_path, tmp_path / "p.json")


def test_a_rollback_of_several_writers_is_one_job_naming_every_folder(tmp_path):
    folders = (tmp_path / "checkpoints" / "candidate", tmp_path / "checkpoints" / "jax-only")
    run = entry_runs.Run(RESOLVED, rollback=folders)
    assert run.job(Workspace.of(paths.SOURCE, tmp_path).with_options(RUN), 1).options.rollback_from == folders
    one = run.job(Workspace.of(paths.SOURCE, tmp_path).with_options(RUN), 1, folders[:1]).options
    assert (one.rollback_from, one.report_name) == (folders[:1], "baseline-rollback-candidate")


def test_a_session_given_a_job_registers_its_entry_from_it_and_reads_no_plan(monkeypatch, tmp_path):
    def unread(*args, **kwargs):
        raise AssertionError("a job's session read the plan or the matrix")

    monkeypatch.setattr(plan, "read", unread)
    monkeypatch.setattr(current, "entries", unread)
    monkeypatch.setattr(sessions, "find_python", lambda version: f"/usr/bin/python{version}")
    job = tmp_path / "jobs" / "jax-only.json"
    entry_job.write(job, entry_jobs.job_of(RESOLVED, run_options.RunOptions(run_id="run-J")))
    monkeypatch.setenv(env_vars.JOB, str(job))
    monkeypatch.setenv(env_vars.PLAN, str(tmp_path / "no-such-plan.json"))
    entries, python, problem = sessions._registered()
    assert (entries, python, problem) == ({"jax-only": RESOLVED}, "/usr/bin/python3.12", "")
    assert Workspace.from_environment().options.run_id == "run-J"  # the session's options: the job's


def test_a_session_without_a_job_reads_the_plan_it_is_given(monkeypatch, tmp_path):
    read = []
    monkeypatch.setattr(plan, "read", lambda path: read.append(path) or {matrix.BASELINE: RESOLVED})
    monkeypatch.setattr(sessions, "find_python", lambda version: "/py")
    monkeypatch.delenv(env_vars.JOB, raising=False)
    monkeypatch.setenv(env_vars.PLAN, str(tmp_path / "upgrade-plan.json"))
    assert sessions._registered()[0] == {matrix.BASELINE: RESOLVED} and read == [tmp_path / "upgrade-plan.json"]


def test_an_unreadable_job_is_said_when_a_session_runs_not_as_a_traceback_at_import(monkeypatch, tmp_path):
    (tmp_path / "job.json").write_text("{")
    monkeypatch.setenv(env_vars.JOB, str(tmp_path / "job.json"))
    entries, python, problem = sessions._registered()
    assert (entries, python) == ({}, None) and "not JSON" in problem and str(tmp_path / "job.json") in problem


def test_a_session_registers_with_the_python_its_job_names_and_looks_only_when_it_is_gone(monkeypatch, tmp_path):
    looked = []
    monkeypatch.setattr(sessions, "find_python", lambda version: looked.append(version) or "/looked/up")
    python = tmp_path / "bin" / "python3.12"
    python.parent.mkdir()
    python.write_text("")
    job = tmp_path / "job.json"
    entry_job.write(job, entry_jobs.job_of(RESOLVED, run_options.RunOptions(), str(python)))
    monkeypatch.setenv(env_vars.JOB, str(job))
    assert sessions._registered()[1] == str(python) and looked == []
    python.unlink()  # another machine (a CI job after the plan's): the session looks itself
    assert sessions._registered()[1] == "/looked/up" and looked == ["3.12"]


def test_the_suites_pytest_is_told_its_job_and_none_of_the_jobs_options_as_variables(tmp_path):
    from pathlib import Path

    from harness.stack.entry_side import entry as stack_entry

    told = run_options.RunOptions(run_id="run-J", seed=7, reports_dir=tmp_path, only=tmp_path / "only.txt",
                                  replay=tmp_path / "examples.json", report_name="baseline-replay",
                                  rollback_from=(tmp_path / "checkpoints" / "candidate",), wheel=tmp_path / "h.whl",
                                  progress=tmp_path / "p.json", phases_dir=tmp_path / "phases")
    job = entry_jobs.write_beside(str(tmp_path), "baseline-replay", RESOLVED, told)
    env = stack_entry.suite_environment(RESOLVED, "r.json", str(tmp_path), Path("golden"), True, options=told, job=job)
    assert env[env_vars.JOB] == str(job) and entry_job.read(job).options == entry_job.options_of(told)
    assert not {s.env for s in run_options.specs(run_options.JOB).values()} & set(env)


@pytest.mark.parametrize("variable", [env_vars.REPORT_NAME, env_vars.ONLY, env_vars.REPLAY, env_vars.ROLLBACK_FROM])
def test_a_row_of_a_workflow_written_before_job_files_is_refused_not_run_as_another(monkeypatch, tmp_path, variable):
    """A team's workflow from an older tool (only UPGRADE_HARNESS_FROM bumped) still sets a row's replay,
    selection, rollback and report name as variables, now empty (the rows carry a job instead). Run on the
    plan, the replay row would run the whole baseline and the rollback row restore nothing: the session
    refuses, naming the fix."""
    monkeypatch.setattr(plan, "read", lambda path: {matrix.BASELINE: RESOLVED})
    monkeypatch.setattr(sessions, "find_python", lambda version: "/py")
    monkeypatch.delenv(env_vars.JOB, raising=False)
    monkeypatch.setenv(env_vars.PLAN, str(tmp_path / "upgrade-plan.json"))
    monkeypatch.setenv(variable, "")  # what GitHub gives a matrix column the row does not have
    entries, python, problem = sessions._registered()
    assert (entries, python) == ({}, None)
    assert variable in problem and "init --ci github --force" in problem and "--harness-only" in problem
