"""`nox -s accept`'s steps that reach outside the process (git, uv, the golden session, the clock, moving
files), as one seam: tests pass fakes, and count them to stop accept at each one."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from harness import env_vars
from harness.errors import HarnessError
from harness.stack import boundary, staging
from harness.stack.pins import locks, matrix
from harness.stack.workspace import Workspace


def git(root: Path, args: list[str]) -> str:
    """git's output in the checkout; HarnessError when git is missing or this is not a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise HarnessError("git is not installed; accept needs it to check golden/ and to list what changed.") from None
    if done.returncode != 0:
        raise HarnessError(f"`git {' '.join(args)}` failed in {root} ({done.stderr.strip()}); "
                           "run accept in the project's git checkout.")
    return done.stdout


def record_golden(stage: staging.Stage, team: bool = False, reason: str | None = None) -> int:
    """`nox -s golden -- --accept-changes` as a child nox session reading the staged pins and locks and
    writing the staged golden/ (HARNESS_STAGE); its output goes to reports/golden-recording.log. In a
    team's project (`team`), the package's own sessions, told the project, as `upgrade-harness golden` runs them."""
    root = stage.root
    env = boundary.child_environment()  # the new pins, never a run's plan, selection or replay
    env[env_vars.STAGE] = str(stage.files)
    noxfile = ["-f", str(root / "noxfile.py")]
    if team:
        env[env_vars.PROJECT] = str(root)
        noxfile = ["-f", str(Path(__file__).resolve().parents[1] / "sessions.py"), "--envdir", str(root / ".nox")]
    cmd = [sys.executable, "-m", "nox", *noxfile, "-s", "golden", "--", "--accept-changes"]
    cmd += ["--reason", reason] if reason else []
    (root / "reports").mkdir(exist_ok=True)
    with open(root / "reports" / "golden-recording.log", "w") as log:
        return subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root, check=False).returncode


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Printer:
    """A stand-in for the nox session's logger when accept runs outside nox."""

    @staticmethod
    def log(message: str) -> None:
        print(f"accept: {message}", flush=True)


@dataclasses.dataclass(frozen=True)
class Steps:
    """The expensive or outside-world steps; tests pass fakes (and count them, to stop accept at each)."""

    lock: Callable[[staging.Stage, list[matrix.Entry]], None]  # write these entries' lock files, staged
    # Record golden values from the staged baseline, with the accept's reason (None: none given); the exit status.
    record_golden: Callable[[staging.Stage, str | None], int]
    git: Callable[[Path, list[str]], str] = git
    clock: Callable[[], dt.datetime] = _now  # the changelog entry's time
    replace: Callable[[Path, Path], None] = os.replace  # move one staged file into place

    @classmethod
    def real(cls, ws: Workspace, log=None) -> Steps:
        def lock(stage: staging.Stage, entries: list[matrix.Entry]) -> None:
            locks.write_locks(ws.staged(stage.files), log or Printer(), entries)

        return cls(lock=lock, record_golden=lambda stage, reason: record_golden(stage, team=not ws.is_checkout,
                                                                                reason=reason))
