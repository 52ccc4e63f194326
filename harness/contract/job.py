"""The job an entry's session wrote for this pytest run (harness.model.entry_job; HARNESS_JOB names it), and the
run's options of group JOB as the contract side uses them: the seed, the examples replayed, the selection, the
checkpoints restored, the progress file, the phases directory, the run's id.

The job is the one thing the session tells pytest about its run: it is decoded once per process (the
rollbacks' several sessions in one process share it). A pytest option given on the command line is taken over
the job's (`--harness-only FILE` by hand, each writer's `--harness-rollback-from` in harness.contract.rollbacks).
A run by hand (`pytest --pyargs harness.builtin`) has no job: its options are their defaults and its own.

harness.model.entry_job is imported only when needed: a team's own pytest runs, where the plugin is installed
too, never pay for the model.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness import env_vars, run_options

if TYPE_CHECKING:
    from harness.model.entry_job import EntryJob, JobOptions


def current() -> EntryJob | None:
    """This process's job; None in a run by hand (HARNESS_JOB unset). A job that cannot be read is a
    usage error naming the file."""
    path = os.environ.get(env_vars.JOB)
    return _read(path) if path else None


@functools.cache
def _read(path: str) -> EntryJob:
    from harness.model import entry_job
    from harness.errors import HarnessError

    try:
        return entry_job.read(Path(path))
    except HarnessError as exc:
        raise pytest.UsageError(str(exc)) from None


def forget() -> None:
    """Read the job again when next asked (a test that writes another job at the same path)."""
    _read.cache_clear()


def options(config) -> JobOptions:  # type: ignore[valid-type]
    """The JOB group's options of this pytest run: its job's (their defaults without one), with each pytest
    option the command line gives taken over the job's."""
    from harness.model.entry_job import JobOptions

    found = current()
    told = found.options if found is not None else JobOptions()
    given = {}
    for name, spec in run_options.specs(run_options.JOB).items():
        text = config.getoption(spec.pytest) if spec.pytest else None
        if text:
            given[name] = run_options.decode(str(text), spec)
    return dataclasses.replace(told, **given) if given else told


def of_entry(config) -> JobOptions | None:  # type: ignore[valid-type]
    """options(config) in an entry's run; None in a run without a job (what only a job sets, its progress file
    and phases directory, is then unset: nothing to read, no model imported)."""
    return options(config) if current() is not None else None
