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
from harness.stack.interpreters import find_python
from harness.stack.matrix import Entry

LOCK_COMMAND = "nox -s lock"


def harness_requirements() -> list[str]:
    """What the contract suite needs besides the stack: the harness's own dependencies (pyproject)."""
    data = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())
    return [d for d in data["project"]["dependencies"] if not d.startswith("numpy")]


def lock_input(entry: Entry) -> str:
    return "\n".join(entry.requirements + harness_requirements()) + "\n"


def lock_path(entry: Entry) -> Path:
    if entry.lock_file:  # resolved by the upgrade's plan
        return Path(entry.lock_file)
    return (paths.LOCKS if entry.locked else paths.ADHOC_LOCKS) / f"{entry.name}.txt"


def uv() -> str | None:
    """The uv executable: the runner's own (locks/runner.txt installs it beside nox), else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def uv_compile(requirements: str, python: str, output: Path | None = None, header_command: str | None = None,
               prerelease: bool = False, universal: bool = True) -> subprocess.CompletedProcess:
    """`uv pip compile` of requirement lines for the matrix's Python; the lock on stdout or in `output`.

    uv is handed the interpreter itself: with only --python-version and no python3.12 on PATH (pyenv),
    it would first try to download one (about 9 s lost on a machine without that network access)."""
    found = uv()
    if found is None:
        raise HarnessError("uv is not installed; install it with `python3 -m pip install uv` to resolve stacks.")
    cmd = [found, "pip", "compile", "-", "--python-version", python, "--python", find_python(python),
           "--quiet", "--no-python-downloads"] + (["--universal"] if universal else [])
    cmd += ["-o", str(output)] if output else ["--no-annotate"]
    cmd += ["--custom-compile-command", header_command] if header_command else ["--no-header"]
    cmd += ["--prerelease", "allow"] if prerelease else []
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.run(cmd, input=requirements, capture_output=True, text=True, check=False)


def uv_reason(done: subprocess.CompletedProcess) -> str:
    """uv's explanation of a failed resolution, without blank lines."""
    return "\n".join(line for line in done.stderr.strip().splitlines() if line.strip())[-1500:]


def compile_lock(entry: Entry, output: Path, header_command: str | None = None) -> None:
    """Resolve an entry's full dependency set with uv; HarnessError with uv's words if it cannot."""
    done = uv_compile(lock_input(entry), entry.python, output, header_command)
    if done.returncode != 0:
        raise HarnessError(
            f"cannot resolve matrix entry {entry.name!r} ({entry.pin_text}): {uv_reason(done)}\n"
            "Check that every pinned version exists on the package index and that the pins fit together "
            "(e.g. jax 0.11.x needs the same jaxlib version)."
        )


def write_locks(session, entries: list[Entry]) -> None:
    for entry in entries:
        compile_lock(entry, lock_path(entry), header_command=LOCK_COMMAND)
        session.log(f"wrote {lock_path(entry).relative_to(paths.ROOT)} for {entry.name}: {entry.pin_text}")
