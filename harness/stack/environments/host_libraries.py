"""The host side's own libraries, checked before an upgrade runs: a nox installed on its own (not from the
runner lock) lacks them, and the upgrade would run every entry before the API diff found griffe missing.

Which libraries: this checkout's runner lock (locks/runner.txt), else, in a team's installed tool, the
package's declared dependencies (pyproject.toml's, its extras not). Nothing here names one, except that
uv, which the harness runs as a program, may also be one on PATH (harness.stack.environments.uv_program).
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from harness.stack import paths
from harness.stack.environments import uv_program

RUNNER_LOCK = paths.SOURCE / "locks" / "runner.txt"  # in this checkout only: a tool's wheel has no locks/
DISTRIBUTION = "upgrade-harness"  # the installed tool's distribution, whose dependencies it declares
_PROGRAMS = {"uv": lambda: uv_program.uv()}  # also found outside this interpreter, as the harness finds them


@dataclasses.dataclass(frozen=True)
class Required:
    """What the host side needs, as requirements, and the command that installs what is missing."""

    requirements: list[Requirement]
    from_lock: bool  # locks/runner.txt (this checkout), else the tool's declared dependencies


def _requirements(lines: list[str]) -> list[Requirement]:
    """The requirements of `lines` (a lock's, or declared ones) that apply here: no extras, no options."""
    found = []
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if not text or text.startswith("-"):
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue  # a lock's damage is told where the lock is read
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.append(requirement)
    return found


def required() -> Required:
    """This checkout's runner lock, else the installed tool's declared dependencies (none known: none)."""
    if RUNNER_LOCK.is_file():
        return Required(_requirements(RUNNER_LOCK.read_text().splitlines()), from_lock=True)
    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        declared = []
    return Required(_requirements(declared), from_lock=False)


def _installed(name: str) -> bool:
    try:
        metadata.version(name)
        return True
    except metadata.PackageNotFoundError:
        program = _PROGRAMS.get(name.lower())
        return program is not None and program() is not None


def problem() -> str | None:
    """What is missing and how to install it, or None when every library the host side needs is here."""
    found = required()
    missing = sorted((r for r in found.requirements if not _installed(r.name)), key=lambda r: r.name.lower())
    if not missing:
        return None
    names = ", ".join(r.name for r in missing)
    said = f"{names} {'is' if len(missing) == 1 else 'are'} not installed for {sys.executable}"
    if found.from_lock:
        return (f"the runner tools are incomplete: {said} (a nox installed on its own, not from the runner lock, lacks them); "
                "install them with `.venv/bin/pip install -r locks/runner.txt` (after `python3 -m venv .venv`) "
                "and run `.venv/bin/nox -s upgrade`.")
    pins = " ".join(shlex.quote(str(r)) for r in missing)
    return (f"the upgrade-harness tool's dependencies are incomplete: {said}; install them into the tool's "
            f"environment with `{Path(sys.executable)} -m pip install {pins}`, or reinstall upgrade-harness "
            "with its dependencies.")
