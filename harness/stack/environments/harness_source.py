"""What each entry installs as the harness itself (--no-deps: its dependencies are in the entry's lock).

- The harness running from a checkout (this repository, or a tool installed editable from one): that
  checkout, editable. It is the code the host itself runs, so it cannot be moved or deleted under a
  run, an edit reaches every entry without a rebuild, and hatchling's editable install writes nothing
  into it (a .pth file in the entry's environment).
- Any other install (from a path, a git URL or the index): one wheel built from the installed package
  (harness.stack.environments.harness_wheel), never from where it was installed from. `nox -s upgrade` builds it
  once and hands its path to the child sessions (RunOptions.wheel, in each session's job file); a session run alone finds it in the
  cache under the project's .nox/.
"""

from __future__ import annotations

from pathlib import Path

from harness.stack import paths
from harness.stack.environments import harness_wheel
from harness.stack.environments.uv_program import uv
from harness.stack.workspace import Workspace


def runs_from_checkout() -> bool:
    return (paths.SOURCE / "pyproject.toml").is_file()


def install_args(ws: Workspace) -> list[str]:
    """The installer's arguments for the harness; HarnessError when its wheel cannot be built (into the
    workspace's wheel cache)."""
    if runs_from_checkout():
        return ["-e", str(paths.SOURCE)]
    passed = ws.options.wheel  # built once by the upgrade that started this session
    if passed is not None and passed.is_file():
        return [str(passed)]
    return [str(_built(ws))]


def wheel_for_entries(ws: Workspace) -> Path | None:
    """The wheel an upgrade's entries install, built here once (None from a checkout: it installs itself
    editable); the entries are told it (RunOptions.wheel)."""
    return None if runs_from_checkout() else _built(ws)


def _built(ws: Workspace) -> Path:
    """The installed package's wheel, from the workspace's wheel cache (built there when missing)."""
    return harness_wheel.wheel(paths.PACKAGE, ws.wheel_cache, uv(), offline=ws.options.offline)
