"""An entry's job file (harness.model.entry_job): what an upgrade tells one session, round-tripped through the
model's codec, its options the RUN-to-entry options harness.run_options declares (group JOB), not a second list."""

import dataclasses
import json
from pathlib import Path

import pytest

from harness import run_options
from harness.errors import HarnessError
from harness.model import entry_job
from harness.model.entry_job import EntryJob, JobOptions
from harness.model.report import EntryInfo

INFO = EntryInfo(name="candidate", python="3.12", requested={"jax": "0.12.0.1", "optax": "0.2.8"}, locked=False,
                 resolved_at="2026-12-03T19:00:00Z", notes=["flax 0.12.12 -> 0.12.6: fits jax"])


def _job(**options) -> EntryJob:
    return EntryJob(entry=INFO, description="the candidate", lock_file="/r/locks/candidate.txt", problem=None,
                    pins_from="--candidate jax==0.12.0.1", options=JobOptions(**options))


def test_its_options_are_the_declared_job_group_with_their_types_and_defaults():
    declared = run_options.specs(run_options.JOB)
    assert [f.name for f in dataclasses.fields(JobOptions)] == list(declared)
    assert {"run_id", "seed", "reports_dir", "only", "builtin_tests", "reused_parts", "replay", "report_name", "rollback_from",
            "wheel", "progress", "phases_dir"} == set(declared)
    assert JobOptions() == JobOptions(**{n: getattr(run_options.RunOptions(), n) for n in declared})


def test_a_job_round_trips_through_the_codec_with_paths_tuples_and_a_seed_of_zero(tmp_path):
    job = _job(run_id="20261203T190000-1-abc", seed=0, reports_dir=tmp_path, only=tmp_path / "only.txt",
               replay=None, report_name="baseline-rollback-candidate",
               rollback_from=(tmp_path / "checkpoints" / "candidate", tmp_path / "checkpoints" / "jax-only"),
               progress=tmp_path / "p.json")
    path = tmp_path / "jobs" / "candidate.json"
    entry_job.write(path, job)
    back = entry_job.read(path)
    assert back == job
    assert isinstance(back.options.rollback_from, tuple) and isinstance(back.options.only, Path)
    assert back.options.seed == 0
    # In the file, the folders beside its jobs/ folder are named relative to the job (moved with it).
    assert json.loads(path.read_text())["options"]["rollback_from"] == ["../checkpoints/candidate",
                                                                         "../checkpoints/jax-only"]


def test_the_options_it_carries_over_a_runs_options(tmp_path):
    job = _job(run_id="r1", seed=5, reports_dir=tmp_path)
    given = run_options.RunOptions(builtin="report", run_id="stale", only=tmp_path / "stale.txt")
    told = entry_job.told(given, job)
    assert (told.builtin, told.run_id, told.seed, told.reports_dir, told.only) == ("report", "r1", 5, tmp_path, None)


@pytest.mark.parametrize("text, problem", [("{not json", "not JSON"), ('{"entry": {}}', "not an entry's job")])
def test_an_unreadable_job_says_which_file_and_what_to_do(tmp_path, text, problem):
    path = tmp_path / "baseline.json"
    path.write_text(text)
    with pytest.raises(HarnessError) as raised:
        entry_job.read(path)
    assert str(path) in str(raised.value) and problem in str(raised.value)
    with pytest.raises(HarnessError, match="no such file"):
        entry_job.read(tmp_path / "missing.json")


def test_a_job_read_where_its_directory_was_moved_names_the_files_moved_with_it(tmp_path, monkeypatch):
    """CI's plan job writes the rows' jobs into its reports directory, which each row's job downloads into its
    own workspace (another path on a self-hosted runner or in a container): what lies in that directory is
    named relative to the job, what lies outside it stays where it was, and a relative path given to the host
    is the host's (made absolute before it is written)."""
    written, outside = tmp_path / "plan-job" / "reports", tmp_path / "elsewhere"
    monkeypatch.chdir(tmp_path)
    job = dataclasses.replace(
        _job(reports_dir=written, only=written / "attribution-selection.txt",
             rollback_from=(written / "checkpoints" / "candidate",), wheel=outside / "harness.whl",
             replay=Path("plan-job/reports/replay-examples.json")),
        lock_file=str(written / "locks" / "candidate.txt"))
    entry_job.write(written / "jobs" / "candidate.json", job)
    moved = tmp_path / "row-job" / "reports"
    moved.parent.mkdir()
    written.rename(moved)
    back = entry_job.read(moved / "jobs" / "candidate.json")
    assert back.options.reports_dir == moved and back.options.only == moved / "attribution-selection.txt"
    assert back.options.rollback_from == (moved / "checkpoints" / "candidate",)
    assert back.options.replay == moved / "replay-examples.json"
    assert back.lock_file == str(moved / "locks" / "candidate.txt")
    assert back.options.wheel == outside / "harness.whl"
