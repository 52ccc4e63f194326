"""Lock files: each matrix entry's full resolved dependency set, resolved with uv.

Committed entries install from locks/<entry>.txt (`nox -s lock` writes them; a team's project keeps
its baseline's lock where its table says, resolved from its whole set: its pins and the rest of what its pins
file locks, Entry.locked_with, and refused when either moved since); an ad-hoc candidate is resolved live
into .nox/adhoc-locks/.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.errors import HarnessError
from harness.stack import paths, project
from harness.stack.environments import installed
from harness.stack.environments import uv_program
from harness.stack.environments.interpreters import find_python
from harness.stack.pins.matrix import Entry
from harness.stack.workspace import Workspace

LOCK_COMMAND = "nox -s lock"  # this checkout's
LOCK_COMMAND_PROJECT = "upgrade-harness lock"  # a team's project's
PIN_LINE = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)")


def harness_requirements() -> list[str]:
    """What the contract suite needs besides the stack: the harness's `contract` extra (pyproject.toml in
    this checkout, the installed package's metadata elsewhere); numpy comes from the entry's pins."""
    pyproject = paths.SOURCE / "pyproject.toml"
    if pyproject.is_file():
        needed = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["contract"]
    else:
        needed = list(installed.metadata(installed.installed_distribution(paths.PACKAGE)).extra("contract"))
    return [d for d in needed if not d.startswith("numpy")]


def parse_lock(text: str, source: str = "the lock", relock: str = LOCK_COMMAND) -> dict[str, str]:
    """name -> version of every requirement of a compiled lock (names normalized); HarnessError naming
    `source`, the line number and what is wrong when a line is not a requirement pinned to one version
    (a damaged lock would otherwise install some other stack, or fail minutes later), and the command that
    re-locks it (`relock`: lock_command of the workspace)."""
    return dict(locked_lines(text, source, relock))


def locked_lines(text: str, source: str = "the lock", relock: str = LOCK_COMMAND) -> list[tuple[str, str]]:
    """(name, version) of every requirement of a compiled lock, in order: a universal lock may hold a package
    twice, at a version for each platform or Python (its markers say which); parse_lock's checks."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        wanted = line.split(" #", 1)[0].strip().removesuffix("\\").strip()
        if not wanted or wanted.startswith(("#", "--")):  # comments, `# via` notes, pip options (--hash=...)
            continue
        try:
            requirement = Requirement(wanted)
        except InvalidRequirement as exc:
            raise _bad_line(source, number, line, f"is not a requirement ({str(exc).splitlines()[0]})",
                            relock) from None
        specifiers = list(requirement.specifier)
        if requirement.url is None and (len(specifiers) != 1 or specifiers[0].operator not in ("==", "===")):
            raise _bad_line(source, number, line, "is not pinned to one version (name==version)", relock)
        if specifiers:
            found.append((canonicalize_name(requirement.name), specifiers[0].version))
    return found


def _bad_line(source: str, number: int, line: str, what: str, relock: str) -> HarnessError:
    return HarnessError(f"{source}, line {number}: `{line.strip()}` {what}; restore the file or re-lock with "
                        f"`{relock}`.")


def _same_version(locked: str | None, pinned: str) -> bool:
    """numpy==2.0 is locked as 2.0.0: the same release, compared as versions, not as text."""
    try:
        return locked is not None and Version(locked) == Version(pinned)
    except InvalidVersion:
        return locked == pinned


def lock_command(ws: Workspace) -> str:
    """What re-locks the workspace's committed entries: this checkout's session, or the team's command."""
    return LOCK_COMMAND if ws.is_checkout else LOCK_COMMAND_PROJECT


def check_current(ws: Workspace, entry: Entry, lock: Path) -> None:
    """A committed lock must still lock the entry's pins: pins edited without re-locking would run another stack."""
    try:
        text = lock.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"lock file {lock} is unreadable ({exc}); restore it or re-lock with "
                           f"`{lock_command(ws)}`.") from None
    lines = locked_lines(text, source=str(lock), relock=lock_command(ws))
    locked = dict(lines)
    stale = [f"{pkg}=={version} (the lock has {locked.get(pkg, 'none')})"
             for pkg, version in entry.pins.items() if not _same_version(locked.get(pkg), version)]
    versions: dict[str, list[str]] = {}
    for name, version in lines:
        versions.setdefault(name, []).append(version)
    stale += [said for said in (_stale(line, versions) for line in entry.locked_with) if said]
    if stale:
        raise HarnessError(f"{lock} no longer matches the {entry.name} pins: {', '.join(stale)}; "
                           f"re-lock with `{lock_command(ws)}`.")


def _stale(line: str, versions: dict[str, list[str]]) -> str | None:
    """How the lock misses one requirement of the team's set (`scipy==1.15.0 (the lock has 1.14.1)`), or None.
    A requirement with a marker may be absent: the lock was resolved for Pythons its marker excludes."""
    requirement = Requirement(line)
    found = versions.get(canonicalize_name(requirement.name), [])
    if not found:
        return None if requirement.marker else f"{line} (the lock has none)"
    if any(requirement.specifier.contains(v, prereleases=True) for v in found):
        return None
    return f"{line} (the lock has {', '.join(found)})"


def write_if_missing(ws: Workspace, entry: Entry) -> Path | None:
    """In a team's project, a committed entry whose lock is missing gets it resolved now from its pins
    (the first run after `init`): the path written, for the user to commit; None when there was one.
    This checkout's locks are committed with the matrix, so a missing one is an error there."""
    lock = lock_path(ws, entry)
    if lock.exists() or ws.is_checkout or not entry.locked:
        return None
    compile_lock(entry, lock, header_command=lock_command(ws))
    return lock


def lock_input(entry: Entry) -> str:
    """What an entry's lock is resolved from: its pins, the rest of its team's set, what the suite needs."""
    return "\n".join(entry.requirements + list(entry.locked_with) + harness_requirements()) + "\n"


def lock_path(ws: Workspace, entry: Entry) -> Path:
    if entry.lock_file:  # resolved by the upgrade's plan
        return Path(entry.lock_file)
    return (project.load(ws).locks if entry.locked else ws.adhoc_locks) / f"{entry.name}.txt"


def uv_compile(requirements: str, python: str, output: Path | None = None, header_command: str | None = None,
               prerelease: bool = False, universal: bool = True, offline: bool = False) -> subprocess.CompletedProcess:
    """`uv pip compile` of requirement lines for the matrix's Python; the lock on stdout or in `output`.

    uv is handed the interpreter itself: with only --python-version and no python3.12 on PATH (pyenv),
    it would first try to download one (about 9 s lost on a machine without that network access)."""
    found = uv_program.uv()
    if found is None:
        raise HarnessError("uv is not installed; install it with `python3 -m pip install uv` to resolve stacks.")
    cmd = [found, "pip", "compile", "-", "--python-version", python, "--python", find_python(python),
           "--quiet", "--no-python-downloads"] + (["--universal"] if universal else [])
    cmd += ["-o", str(output)] if output else ["--no-annotate"]
    cmd += ["--custom-compile-command", header_command] if header_command else ["--no-header"]
    cmd += ["--prerelease", "allow"] if prerelease else []
    cmd += ["--offline"] if offline else []  # `upgrade --offline` (a child session is told UV_OFFLINE)
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


def write_locks(ws: Workspace, session, entries: list[Entry]) -> None:
    for entry in entries:
        compile_lock(entry, lock_path(ws, entry), header_command=lock_command(ws))
        session.log(f"wrote {lock_path(ws, entry).relative_to(ws.root)} for {entry.name}: {entry.pin_text}")
