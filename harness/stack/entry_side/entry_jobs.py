"""An entry as its job file carries it (harness.model.entry_job): made from the plan's matrix.Entry by the host,
turned back into one by the entry's session, and written beside the entry's environment for its pytest run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.errors import HarnessError
from harness.model import entry_job
from harness.model.entry_job import EntryJob
from harness.model.enums import BuiltinMode
from harness.model.report import EntryInfo
from harness.run_options import RunOptions
from harness.stack import project
from harness.stack.environments.interpreters import find_python
from harness.stack.pins.matrix import Entry

JOBS = "harness-jobs"  # in the entry's environment: the job file of each report its pytest runs write


def entry_info(entry: Entry) -> EntryInfo:
    """The entry as its report describes it."""
    return EntryInfo(name=entry.name, python=entry.python, requested=dict(entry.pins), locked=entry.locked,
                     resolved_at=entry.resolved_at, notes=list(entry.notes) or None)


def job_of(entry: Entry, options: RunOptions, interpreter: str | None = None) -> EntryJob:
    """The job of a session running `entry`, told the JOB group of `options` (and its Python, when known)."""
    return EntryJob(entry=entry_info(entry), description=entry.description, lock_file=entry.lock_file,
                    problem=entry.problem, pins_from=entry.pins_from, options=entry_job.options_of(options),
                    interpreter=interpreter, locked_with=entry.locked_with)


def interpreter(entry: Entry) -> str | None:
    """The entry's Python, looked up once in this process (None: none found; its session says why)."""
    try:
        return find_python(entry.python)
    except HarnessError:
        return None


def entry_of(job: EntryJob) -> Entry:
    """The entry a job names, as the plan resolved it."""
    info = job.entry
    return Entry(name=info.name, pins=dict(info.requested), description=job.description, python=info.python,
                 locked=info.locked, lock_file=job.lock_file, notes=tuple(info.notes or ()),
                 resolved_at=info.resolved_at, problem=job.problem, pins_from=job.pins_from,
                 locked_with=tuple(job.locked_with))


def write_beside(venv: str, report: str, entry: Entry, options: RunOptions) -> Path:
    """The job of the pytest run writing report `report`, in the entry's environment (one per report: two
    sessions of one entry, the replay and a rollback, may run at once); its path."""
    path = Path(venv) / JOBS / f"{report}.json"
    entry_job.write(path, job_of(entry, options))
    return path


def with_builtin_tests(options: RunOptions, found: project.Project, venv: str, stem: str) -> RunOptions:
    """`options` telling pytest the built-in tests the project's selection keeps of the families it takes in
    part (harness.stack.selection), in a file beside its job; unchanged when every family taken runs whole."""
    tests = found.selection.tests if found.selection is not None else None
    if tests is None or found.builtin == BuiltinMode.OFF:
        return options
    path = Path(venv) / JOBS / f"{stem}.builtin-tests.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{t}\n" for t in tests))
    return dataclasses.replace(options, builtin_tests=path)
