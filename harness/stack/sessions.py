"""The nox sessions of a project: one per matrix entry, golden, upgrade, lock and accept.

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

from harness import env_vars, run_options
from harness.errors import HarnessError
from harness.model import entry_job
from harness.model.enums import BuiltinMode
from harness.stack import boundary, paths, project
from harness.stack.commands import frame, golden_record, options as command_options, project_options
from harness.stack.commands import upgrade as upgrade_run
from harness.stack.entry_side import entry as stack_entry, entry_jobs, noise_runs
from harness.stack.pins import current, locks, matrix, plan
from harness.stack.run import report_cache, lifeline, run_plan, run_directory
from harness.stack.entry_side import session_phases
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


@stack_session("golden")
@frame.session
def golden(session: nox.Session) -> None:
    """Record golden values from the baseline entry; refuses to change values without --accept-changes.
    In a team's project only its own contracts are recorded: the built-in ones are judged against the
    tool's own values unless --record-builtin records the team's copy (a baseline unlike the tool's)."""
    require_python(session)
    told = Workspace.from_environment()
    options = project_options.parse_golden(session.posargs, prog=command_options.prog(told, "golden"))
    given = run_options.absolute(run_options.from_namespace(options), paths.invoked_from(session.invoked_from))
    ws = told.with_options(given)
    if options.record_builtin:
        if options.builtin == BuiltinMode.OFF.value:
            raise HarnessError("--record-builtin records the built-in contracts' values, --no-builtin skips "
                               "them: give one of the two.")
        # Run them, whatever the table's builtin says.
        ws = ws.with_options(run_options.RunOptions(builtin=BuiltinMode.JUDGE.value))
    elif not ws.is_checkout:
        ws = ws.with_options(run_options.RunOptions(builtin=BuiltinMode.OFF.value))
        try:
            project.load(ws)
        except HarnessError as exc:
            raise HarnessError(f"{str(exc).rstrip('.')}; the built-in contracts are judged against the tool's "
                               "own golden values (`--record-builtin` records your copy, for a baseline unlike "
                               "the tool's).") from None
    if options.reason is not None and not options.accept_changes:
        raise HarnessError("--reason says why recorded golden values change: give it with --accept-changes "
                           "(values only added need no reason).")
    if options.reason is not None and not options.reason.strip():
        raise HarnessError('--reason is empty: say why the values change, e.g. --reason "weight decay doubled".')
    accepting = run_options.specs()["accept_changes"].pytest  # the contract side's spelling of --accept-changes
    args = ["--harness-record-golden"] + ([accepting] if options.accept_changes else [])
    if options.accept_changes:  # what wrote the changed files, and why (harness.model.golden_changes reads it)
        args += [f"--harness-accepted-by={'accept' if ws.stage else 'golden --accept-changes'}"]
        args += [f"--harness-accept-reason={options.reason}"] if options.reason else []
    baseline = current.entries(ws)[matrix.BASELINE]  # read now: --baseline-from may have just been given
    # Where it writes, before it records: a file in place of either was a traceback after the recording.
    run_directory.check_writable(ws.reports)
    if problem := run_plan.store_problem(project.load(ws).golden):
        raise HarnessError(problem)
    def recording(staged: Workspace) -> None:
        stack_entry.install_entry(session, staged, baseline, ["golden-recording"])
        # Your contracts compiled to round differently first: each value's numerical noise is recorded beside it;
        # then every contract recorded on each host this machine emulates: each value's host noise beside it.
        noise = [f"--harness-noise-from={f}" for f in noise_runs.record_perturbed(session, staged, baseline)]
        noise += noise_runs.record_emulated(session, staged, baseline)
        # The recorded checkpoints go to golden/; the run's own are no rollback's to read: none kept in reports/.
        stack_entry.run_entry(session, staged, baseline, pytest_args=args + noise, report_name="golden-recording",
                              install=False, rollback_reads=False, whole=True)  # one process records every family

    # Both pytest processes and the checkpoints write into a staged copy, moved into place only if all succeed.
    golden_record.record(ws, recording, lambda line: print(line, flush=True))  # beside the contract side's lines


@nox.session(python=False)
def upgrade(session: nox.Session) -> None:
    """Baseline vs candidate (and single-package entries), then the verdict. Exit 0/1/2."""
    code = upgrade_run.upgrade(Workspace.from_environment(), session.posargs,
                               invoked_from=str(paths.invoked_from(session.invoked_from)))
    if code:
        # nox maps every failure to 1; the verdict's status (1 changed, 2 cannot judge) must survive.
        raise SystemExit(code)


def _exit(code: int) -> None:
    if code:
        raise SystemExit(code)  # nox maps every failure to 1; 1 changed and 2 cannot judge must survive


@nox.session(name="plan", python=False)
def plan_session(session: nox.Session) -> None:
    """CI's first step: resolve the upgrade's plan once, print its baseline and candidate as a matrix."""
    from harness.stack.commands import fanout

    _exit(fanout.plan(Workspace.from_environment(), session.posargs,
                      invoked_from=str(paths.invoked_from(session.invoked_from))))


@nox.session(python=False)
def followups(session: nox.Session) -> None:
    """CI, after baseline and candidate: the replay and attribution runs DIR needs, as a matrix."""
    from harness.stack.commands import fanout

    _exit(fanout.follow_ups(Workspace.from_environment(), session.posargs, invoked_from=str(paths.invoked_from(session.invoked_from))))


@nox.session(python=False)
def judge(session: nox.Session) -> None:
    """The verdict on a directory of one run's reports (CI artifacts): as `upgrade` writes it. Exit 0/1/2."""
    from harness.stack.commands import fanout

    _exit(fanout.judge_directory(Workspace.from_environment(), session.posargs, invoked_from=str(paths.invoked_from(session.invoked_from))))


@nox.session(python=False)
@frame.session
def lock(session: nox.Session) -> None:
    """Regenerate the committed locks (the full resolved stack of each locked matrix entry) with uv."""
    ws = Workspace.from_environment()
    command_options.parse("lock", session.posargs, prog=command_options.prog(ws, "lock"))  # --help: nothing written
    if not ENTRIES:
        raise HarnessError(NO_PYTHON)
    locks.write_locks(ws, session, [e for e in ENTRIES.values() if e.locked])


@nox.session(python=False)
def accept(session: nox.Session) -> None:
    """Adopt the judged candidate as the new baseline: pins, locks, golden values, golden/CHANGELOG.md."""
    ws = Workspace.from_environment()
    if not ws.is_checkout:  # a team's pins are its own file's: harness.stack.commands.team_accept
        from harness.stack.commands import team_accept

        _exit(team_accept.accept(ws, session.posargs, invoked_from=paths.invoked_from(session.invoked_from)))
        return
    from harness.stack.commands import accept as accept_run

    code = accept_run.accept(ws, session.posargs, log=session, invoked_from=paths.invoked_from(session.invoked_from))
    if code:
        raise SystemExit(code)  # nox maps every failure to 1; a refusal is 2


@stack_session("sensitivity")
@frame.session
def sensitivity(session: nox.Session) -> None:
    """Mutate Optax's in-scope modules (cosmic-ray, in this session's own environment) and run the matching
    contracts on each mutant: reports/sensitivity.json and .md. `-- --sample N --seed S`, `--workers N`."""
    require_python(session)
    from harness.stack.commands import sensitivity as run_sensitivity
    from harness.stack.environments.envs import dir_name
    from harness.stack.sensitivity import disposable

    ws = Workspace.from_environment()
    if not ws.is_checkout:
        raise HarnessError("sensitivity measures the built-in contracts on this checkout's baseline; run it there.")
    options = run_sensitivity.parse(session.posargs)
    baseline = ENTRIES[matrix.BASELINE]
    # Never an entry's environment: cosmic-ray rewrites the files it mutates.
    disposable.check_disposable(Path(session.virtualenv.location),
                                [ws.envdir / dir_name(ws.envdir, e.name) for e in ENTRIES.values()])
    disposable.install(session, ws, locks.lock_path(ws, baseline))
    venv = session.virtualenv.location
    suite_env = stack_entry.suite_environment(baseline, "", venv, ws.root / "golden", ws.is_checkout,
                                              options=ws.options, job=entry_jobs.write_beside(
                                                  venv, "sensitivity", baseline, ws.options))
    run_sensitivity.run(session, options, paths.PACKAGE / "builtin", ws.root, suite_env,
                        Path(options.out) if options.out else ws.reports / "sensitivity.json")
