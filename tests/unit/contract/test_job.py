"""The contract side reads its run's options (group JOB) from the job file its session wrote (HARNESS_JOB), the
one variable: the seed, the replayed examples, the selection, the progress file, the phases directory, the run's
id and the checkpoints restored; a pytest option given by hand over the job's; a run by hand has no job."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from harness import env_vars, run_options
from harness.contract import hypothesis_profiles, job, options, replay
from harness.contract.progress import ProgressWriter
from harness.model import entry_job
from harness.model.entry_job import JobOptions
from support import jobs


def _config(**given):
    """A pytest config whose command line gave `given` (pytest option -> value); every other option unset."""
    return SimpleNamespace(getoption=lambda name, default=None: given.get(name, default))


@pytest.fixture
def no_job_variables(monkeypatch):
    """None of the variables that carried the JOB group before its file did, nor a job of the shell's."""
    for spec in run_options.specs(run_options.JOB).values():
        monkeypatch.delenv(spec.env, raising=False)
    monkeypatch.delenv(env_vars.JOB, raising=False)
    job.forget()


@pytest.fixture
def told(tmp_path, monkeypatch, no_job_variables):
    """A job file whose options set every option the contract side reads, named by HARNESS_JOB."""
    (tmp_path / "only.txt").write_text("accumulation/test_a\nschedules/test_b[1]\n")
    (tmp_path / "examples.json").write_text(json.dumps({"accumulation/test_a": "'6.1.0', b'AAE='"}))
    given = dict(run_id="20260101T000000-1-abcdef", seed=4242, only=tmp_path / "only.txt",
                 replay=tmp_path / "examples.json", rollback_from=(tmp_path / "checkpoints" / "candidate",),
                 progress=tmp_path / "progress.json", phases_dir=tmp_path / "phases")
    jobs.tell(monkeypatch, tmp_path, "candidate", **given)
    return JobOptions(**given)


def test_each_option_is_read_from_the_job_with_no_variable_set(told, tmp_path):
    config = _config()
    assert job.options(config) == told
    assert job.current().entry.name == "candidate"
    assert hypothesis_profiles.run_seed(config) == 4242
    assert replay.examples(config) == {"accumulation/test_a": ("6.1.0", b"AAE=")}
    assert options.selection(config) == ["accumulation/test_a", "schedules/test_b[1]"]
    assert ProgressWriter.of(config).path == tmp_path / "progress.json"
    assert job.options(config).phases_dir == tmp_path / "phases"


def test_a_pytest_option_given_by_hand_is_taken_over_the_jobs(told, tmp_path):
    (tmp_path / "mine.txt").write_text("clipping/test_c\n")
    config = _config(**{"--harness-only": str(tmp_path / "mine.txt"), "--harness-rollback-from": str(tmp_path / "x")})
    assert options.selection(config) == ["clipping/test_c"]
    assert job.options(config).rollback_from == (tmp_path / "x",)
    assert job.options(config).seed == 4242  # what the command line does not give stays the job's


def test_a_run_by_hand_has_no_job_and_every_option_at_its_default(no_job_variables, tmp_path):
    assert job.current() is None
    assert job.options(_config()) == JobOptions()
    assert replay.examples(_config()) == {} and options.selection(_config()) is None
    assert ProgressWriter.of(_config()).path is None
    (tmp_path / "mine.txt").write_text("masks/test_m\n")
    assert options.selection(_config(**{"--harness-only": str(tmp_path / "mine.txt")})) == ["masks/test_m"]


def test_the_job_is_decoded_once_per_process(told, monkeypatch):
    reads = []
    real = entry_job.read
    monkeypatch.setattr(entry_job, "read", lambda path: reads.append(path) or real(path))
    job.forget()
    for _ in range(3):
        job.options(_config())
    assert len(reads) == 1


def test_a_job_file_that_cannot_be_read_is_a_usage_error_naming_it(no_job_variables, tmp_path, monkeypatch):
    broken = tmp_path / "job.json"
    broken.write_text("{not json")
    monkeypatch.setenv(env_vars.JOB, str(broken))
    with pytest.raises(pytest.UsageError, match=f"entry job {broken}: not JSON"):
        job.options(_config())
