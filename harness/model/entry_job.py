"""One entry's job: what an upgrade (or a CI matrix row) tells the session it starts, in one file the host
writes and the session and its pytest run read (HARNESS_JOB names it), encoded with the model's codec.

It replaces the variables that carried the run's options one by one: the entry itself (its report's
description and the rest its session installs from: description, lock, problem, where its pins came from)
and the run's options of group JOB (harness.run_options declares them: its id, seed, reports directory,
selection, replay, report name, rollback folders, wheel, progress file, phases directory). Plain Python:
the contract side imports it in every pytest process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from pathlib import Path

from harness import env_vars, run_options
from harness.atomic import atomic_write_text
from harness.errors import HarnessError
from harness.model.codec import from_json, to_json
from harness.model.report import EntryInfo


def _options_class() -> type:
    """The job's options: the JOB group's fields of RunOptions, same names, types and defaults."""
    hints, defaults = typing.get_type_hints(run_options.RunOptions), run_options.RunOptions()
    made = dataclasses.make_dataclass(
        "JobOptions", [(name, hints[name], dataclasses.field(default=getattr(defaults, name)))
                       for name in run_options.specs(run_options.JOB)], frozen=True)
    made.__module__ = __name__  # make_dataclass's own `module` is Python 3.12's; the runner is 3.11
    return made


JobOptions = _options_class()
JobOptions.__doc__ = "The run's options an entry's session is told (harness.run_options, group JOB)."


@dataclasses.dataclass(frozen=True)
class EntryJob:
    """One session's job: its entry (`entry` as its report describes it, plus what only the session needs)
    and the run's options it is told."""

    entry: EntryInfo
    description: str
    lock_file: str | None  # the lock the plan resolved (installed as is)
    problem: str | None  # why the plan could not resolve it: reported unresolvable, never run
    pins_from: str | None
    options: JobOptions  # type: ignore[valid-type]
    # The entry's Python as the host found it (an upgrade looks it up once): its session registers with it
    # instead of starting an interpreter to ask its version (~0.15 s of CPU each). None: the session looks.
    interpreter: str | None = None
    # The rest of a team's locked set it installs (requirement lines): its committed lock is checked against it.
    locked_with: tuple[str, ...] = ()


def options_of(options: run_options.RunOptions) -> JobOptions:  # type: ignore[valid-type]
    """The JOB group's part of a run's options."""
    return JobOptions(**{name: getattr(options, name) for name in run_options.specs(run_options.JOB)})


def told(options: run_options.RunOptions, job: EntryJob) -> run_options.RunOptions:
    """`options` (what the process was told otherwise: the project's options) with the job's JOB group."""
    return dataclasses.replace(options, **{f.name: getattr(job.options, f.name)
                                           for f in dataclasses.fields(JobOptions)})


def write(path: Path, job: EntryJob) -> None:
    """Written whole or not at all (a session may start reading it at once). The files in the directory that
    holds the jobs' folder (a run's or a CI plan's reports) are named relative to the job, so a job still
    names them where that directory is moved or downloaded (a CI row's own workspace); the rest absolute."""
    folder = Path(os.path.abspath(path)).parent
    base = folder.parent

    def relative(value: Path) -> Path:
        absolute = Path(os.path.abspath(value))  # a relative path given to the host is the host's
        return Path(os.path.relpath(absolute, folder)) if absolute.is_relative_to(base) else absolute

    atomic_write_text(path, json.dumps(to_json(_paths(job, relative)), indent=1) + "\n")


def _paths(job: EntryJob, convert) -> EntryJob:
    """`job` with `convert` applied to every path it names (its options' and its lock's)."""
    changed = {}
    for field in dataclasses.fields(JobOptions):
        value = getattr(job.options, field.name)
        if isinstance(value, Path):
            changed[field.name] = convert(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, Path) for v in value):
            changed[field.name] = tuple(convert(v) for v in value)
    lock = str(convert(Path(job.lock_file))) if job.lock_file else job.lock_file
    return dataclasses.replace(job, options=dataclasses.replace(job.options, **changed), lock_file=lock)


def read(path: Path) -> EntryJob:
    """The job in `path`; HarnessError naming the file when it cannot be read."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise HarnessError(f"entry job {path}: no such file; an upgrade or a CI row writes it before it starts "
                           f"the session (unset {env_vars.JOB} to run the session by hand).") from None
    except (OSError, ValueError) as exc:
        raise HarnessError(f"entry job {path}: not JSON ({exc}); run the upgrade (or the CI plan) again to "
                           "write it.") from None
    folder = Path(os.path.abspath(path)).parent
    try:
        return _paths(from_json(EntryJob, data),
                      lambda value: value if value.is_absolute() else Path(os.path.normpath(folder / value)))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise HarnessError(f"entry job {path}: not an entry's job ({exc}); it was written by another version "
                           "of the harness: run the upgrade (or the CI plan) again.") from None
