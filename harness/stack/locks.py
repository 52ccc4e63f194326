"""Lock files: each matrix entry's full resolved dependency set, resolved with uv.

Committed entries install from locks/<entry>.txt (`nox -s lock` writes them); an ad-hoc candidate
is resolved live into .nox/adhoc-locks/.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

from harness.errors import HarnessError
from harness.stack import paths
from harness.stack.matrix import Entry

LOCK_COMMAND = "nox -s lock"


def harness_requirements() -> list[str]:
    """What the contract suite needs besides the stack: the harness's own dependencies (pyproject)."""
    data = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())
    return [d for d in data["project"]["dependencies"] if not d.startswith("numpy")]


def lock_input(entry: Entry) -> str:
    return "\n".join(entry.requirements + harness_requirements()) + "\n"


def lock_path(entry: Entry) -> Path:
    return (paths.LOCKS if entry.locked else paths.ADHOC_LOCKS) / f"{entry.name}.txt"


def uv() -> str | None:
    """The uv executable: the runner's own (locks/runner.txt installs it beside nox), else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def compile_lock(entry: Entry, output: Path, header_command: str | None = None) -> None:
    """Resolve an entry's full dependency set with uv; HarnessError with uv's words if it cannot."""
    found = uv()
    if found is None:
        raise HarnessError("uv is not installed; install it with `python3 -m pip install uv` to resolve stacks.")
    output.parent.mkdir(parents=True, exist_ok=True)
    cmd = [found, "pip", "compile", "-", "-o", str(output), "--python-version", entry.python, "--universal",
           "--quiet"]
    cmd += ["--custom-compile-command", header_command] if header_command else ["--no-header"]
    done = subprocess.run(cmd, input=lock_input(entry), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = "\n".join(line for line in done.stderr.strip().splitlines() if line.strip())[-1500:]
        raise HarnessError(
            f"cannot resolve matrix entry {entry.name!r} ({entry.pin_text}): {detail}\n"
            "Check that every pinned version exists on the package index and that the pins fit together "
            "(e.g. jax 0.11.x needs the same jaxlib version)."
        )


def write_locks(session, entries: list[Entry]) -> None:
    for entry in entries:
        compile_lock(entry, lock_path(entry), header_command=LOCK_COMMAND)
        session.log(f"wrote {lock_path(entry).relative_to(paths.ROOT)} for {entry.name}: {entry.pin_text}")
