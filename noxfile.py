"""Sessions of upgrade-harness. `nox -l` lists them with their pins.

  nox -s upgrade                 baseline vs candidate (+ single-package entries), then the verdict
  nox -s upgrade -- --candidate "jax==X jaxlib==X optax==Y flax==Z"
  nox -s baseline                one matrix entry's contract suite -> reports/baseline.json
  nox -s golden                  record golden values from the baseline (shows what changed)
  nox -s tests                   the harness's own tests and the contract suite on the baseline
  nox -s lock                    regenerate locks/<entry>.txt for every matrix entry
  nox -s accept -- --reason ".." adopt the judged candidate as the baseline: pins, locks, golden values
  nox -l --json -t matrix        the matrix entries as JSON (the nightly workflow fans out over it)

The matrix (harness/stack/matrix.py) is the single source of the entries and their pins.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nox

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import env_vars  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from harness.stack import entry as stack_entry, locks, matrix, plan, upgrade as upgrade_run  # noqa: E402
from harness.stack.interpreters import find_python  # noqa: E402

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["upgrade"]

# `nox -s upgrade` resolves every entry first and hands its children the plan; otherwise the matrix.
ENTRIES = (plan.read(Path(os.environ[env_vars.PLAN])) if os.environ.get(env_vars.PLAN)
           else matrix.entries(os.environ.get(env_vars.CANDIDATE)))

try:
    PYTHON: str | None = find_python(matrix.PYTHON)
    NO_PYTHON = ""
except HarnessError as exc:  # reported when a session that needs it runs, not when listing
    PYTHON, NO_PYTHON = None, str(exc)


def _require_python(session: nox.Session) -> None:
    if PYTHON is None:
        session.error(NO_PYTHON.rstrip("."))  # nox ends the sentence itself


def _stack_session(name: str, tags: tuple[str, ...] = ()):
    """A session that runs in a Python of the matrix's version, or explains how to get one."""
    return nox.session(name=name, python=PYTHON or False, venv_backend=None if PYTHON else "none", tags=list(tags))


def _entry_session(entry: matrix.Entry) -> None:
    def run(session: nox.Session) -> None:
        _require_python(session)
        # `upgrade` names the baseline's replay of the candidate's failing examples differently.
        report_name = os.environ.get(env_vars.REPORT_NAME) or None
        stack_entry.run_entry(session, entry, pytest_args=session.posargs, report_name=report_name)

    run.__doc__ = f"{entry.pin_text}  ({entry.description})"
    _stack_session(entry.name, tags=("matrix",))(run)


for _entry in ENTRIES.values():
    _entry_session(_entry)


@_stack_session("golden")
def golden(session: nox.Session) -> None:
    """Record golden values from the baseline entry; refuses to change values without --accept-changes."""
    _require_python(session)
    args = ["--harness-record-golden"]
    if "--accept-changes" in session.posargs:
        args.append("--harness-accept-changes")
    stack_entry.run_entry(session, ENTRIES[matrix.BASELINE], pytest_args=args, report_name="golden-recording")


@_stack_session("tests")
def tests(session: nox.Session) -> None:
    """Layer contracts, the contract suite in the baseline stack, then the harness's own tests (CI runs this)."""
    _require_python(session)
    stack_entry.install_entry(session, ENTRIES[matrix.BASELINE])
    session.install("-r", "locks/tests.txt")
    stack_entry.ensure_chromium(session)
    session.run("lint-imports")  # the layer contracts in pyproject.toml
    # The contract suite first: the harness's tests read its report (every allowance named).
    stack_entry.run_entry(session, ENTRIES[matrix.BASELINE], report_name="tests-baseline", install=False)
    session.run("python", "-m", "pytest", "tests/harness", "-q", *session.posargs,
                env={env_vars.BASELINE_REPORT: str(stack_entry.report_path(ENTRIES[matrix.BASELINE], "tests-baseline"))})


@nox.session(python=False)
def upgrade(session: nox.Session) -> None:
    """Baseline vs candidate (and single-package entries), then the verdict. Exit 0/1/2."""
    code = upgrade_run.upgrade(session.posargs, invoked_from=session.invoked_from)
    if code:
        # nox maps every failure to 1; the verdict's status (1 regressed, 2 cannot judge) must survive.
        raise SystemExit(code)


@nox.session(python=False)
def lock(session: nox.Session) -> None:
    """Regenerate locks/<entry>.txt (the full resolved stack of each matrix entry) with uv."""
    locks.write_locks(session, [e for e in ENTRIES.values() if e.locked])


@nox.session(python=False)
def accept(session: nox.Session) -> None:
    """Adopt the judged candidate as the new baseline: matrix.toml pins, locks, golden values, golden/CHANGELOG.md."""
    from harness.stack import accept as accept_run

    code = accept_run.accept(session.posargs, log=session)
    if code:
        raise SystemExit(code)  # nox maps every failure to 1; a refusal is 2
