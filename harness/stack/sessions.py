"""The nox sessions of a project: one per matrix entry, and one per command harness.stack.commands declares
with a session (golden, upgrade, lock, accept, plan, followups, judge, sensitivity).

This checkout's noxfile.py imports them (and adds `tests`); a team's noxfile, written by
`upgrade-harness init`, imports them too; `upgrade-harness` runs the entries' child sessions from
this file. Importing it registers the sessions with nox.

  nox -s upgrade                 baseline vs candidate (+ single-package entries), then the verdict
  nox -s upgrade -- --candidate "jax==X jaxlib==X optax==Y flax==Z"
  nox -s baseline                one matrix entry's contracts -> reports/baseline.json
  nox -s golden                  record golden values from the baseline (shows what changed)
  nox -s lock                    regenerate the locks of the matrix's committed entries
  nox -s accept -- --reason ".." adopt the judged candidate as the baseline: pins, locks, golden values
  nox -s plan / followups / judge -- DIR   the upgrade's steps one by one, for CI (harness.stack.commands.fanout)
  nox -s sensitivity -- --sample 300 --seed 0   mutate Optax's in-scope modules: which changes go unnoticed
"""

from __future__ import annotations

from pathlib import Path

import nox

from harness import env_vars
from harness.errors import HarnessError
from harness.model import entry_job
from harness.stack import boundary, paths
from harness.stack.commands import frame, options
from harness.stack.entry_side import entry as stack_entry, entry_jobs, session_phases
from harness.stack.pins import matrix, plan
from harness.stack.run import report_cache, lifeline
from harness.stack.environments.interpreters import find_python
from harness.stack.workspace import Workspace

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["upgrade"]

def _registered() -> tuple[dict[str, matrix.Entry], str | None, str]:
    """The entries whose sessions this file registers, the Python they run in, and why none can be (""),
    from what this process was told (harness.stack.boundary): an upgrade's or a CI row's session is given
    its job (HARNESS_JOB), its one entry (and the Python the host found for it) in it, and reads nothing
    else; otherwise the plan a user names, else the matrix."""
    try:
        told = boundary.given(env_vars.JOB)
        if told:
            job = entry_job.read(Path(told))
            entry = entry_jobs.entry_of(job)
            found = job.interpreter if job.interpreter and Path(job.interpreter).is_file() else None
            return {entry.name: entry}, found or find_python(entry.python), ""
        stale = [name for name in env_vars.REPLACED_BY_JOB if boundary.present(name)]
        if stale:
            raise HarnessError(
                f"this session is told {', '.join(stale)} but no {env_vars.JOB}: an entry's session reads its "
                "replay, selection, rollback and report name from its job file, which an upgrade or a CI plan "
                "writes. Under CI, the workflow was written by an older upgrade-harness: write it again with "
                "`upgrade-harness init --ci github --force`. By hand, give `-- --harness-only FILE` instead, "
                f"and unset {', '.join(stale)}.")
        entries = plan.told_entries(Workspace.from_environment())
        return entries, find_python(entries[matrix.BASELINE].python), ""
    except HarnessError as exc:  # reported when a session that needs it runs, not when listing
        return {}, None, str(exc)


# nox registers sessions when it imports this file, so the entries are read here.
ENTRIES, PYTHON, NO_PYTHON = _registered()


def require_python(session: nox.Session) -> None:
    if PYTHON is None:
        raise HarnessError(NO_PYTHON)


def stack_session(name: str, tags: tuple[str, ...] = ()):
    """A session that runs in a Python of the matrix's version, or explains how to get one."""
    return nox.session(name=name, python=PYTHON or False, venv_backend=None if PYTHON else "none", tags=list(tags))


def _entry_session(entry: matrix.Entry) -> None:
    @frame.session
    def run(session: nox.Session) -> None:
        lifeline.follow_run()  # started by `upgrade`: die with it, the installer and pytest too
        require_python(session)
        ws = Workspace.from_environment()
        # `upgrade` names the baseline's replay of the candidate's failing examples differently.
        report_name = ws.options.report_name
        # A CI matrix row: its report taken from the restored cache when nothing that determines it changed.
        with report_cache.reused_or_run(ws, entry, say=session.log) as told:
            if told is None:
                return
            # `upgrade --harness-phases`: this session's part of the run's profile, where its job says.
            with session_phases.recorded(told.options.phases_dir):
                stack_entry.run_entry(session, told, entry, pytest_args=session.posargs, report_name=report_name)

    run.__doc__ = f"{entry.pin_text}  ({entry.description})"
    stack_session(entry.name, tags=("matrix",))(run)


for _entry in ENTRIES.values():
    _entry_session(_entry)


def _unusable(name: str) -> None:
    """When the pins cannot be read, `nox -l` and `nox -s baseline` still say why, not "not found"."""
    @frame.session
    def run(session: nox.Session) -> None:
        raise HarnessError(NO_PYTHON)

    run.__doc__ = f"cannot be set up: {NO_PYTHON}"
    nox.session(name=name, python=False, tags=["matrix"])(run)


if not ENTRIES:
    for _name in (matrix.BASELINE, matrix.CANDIDATE):
        _unusable(_name)


def _command_session(command: options.Declaration) -> None:
    """A command's session (harness.stack.commands declares it): the command run in the frame, told the
    project's workspace, the session's arguments and where nox was run from."""
    @frame.session
    def run(session: nox.Session) -> None:
        if command.session is options.Session.STACK:
            require_python(session)
        code = command.run(options.Invocation(Workspace.from_environment(), tuple(session.posargs),
                                              paths.invoked_from(session.invoked_from), session))
        if code:
            raise SystemExit(code)  # nox maps every failure to 1; 1 changed and 2 cannot judge must survive

    run.__doc__ = command.summary
    if command.session is options.Session.STACK:
        stack_session(command.name)(run)
    else:
        nox.session(name=command.name, python=False)(run)


for _command in options.declared().values():
    if _command.session is not options.Session.NONE:
        _command_session(_command)
