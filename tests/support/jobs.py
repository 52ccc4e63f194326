"""How a test tells a contract run its run's options: a job file as an entry's session writes it for its
pytest run (harness.model.entry_job), named by HARNESS_JOB, the one variable the contract side reads them from
(harness.contract.job)."""

from __future__ import annotations

import platform
from pathlib import Path

from harness import env_vars
from harness.contract import job
from harness.model import entry_job
from harness.model.entry_job import EntryJob, JobOptions
from harness.model.report import EntryInfo


def tell(monkeypatch, directory: Path, entry: str = "local", **options) -> Path:
    """Write a job for entry `entry` with `options` (JobOptions' fields) into `directory` and name it in this
    process's HARNESS_JOB (the pytest runs a test starts inherit it); its path."""
    path = Path(directory) / f"job-{entry}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry_job.write(path, EntryJob(entry=EntryInfo(entry, platform.python_version(), {}, False), description="",
                                   lock_file=None, problem=None, pins_from=None, options=JobOptions(**options)))
    monkeypatch.setenv(env_vars.JOB, str(path))
    job.forget()  # an in-process run reads the new one
    return path
