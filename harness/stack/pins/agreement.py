"""Pins files of one project that must agree, checked whichever of them is the pins file read: a pyproject.toml
and the uv.lock uv wrote from it, or the poetry.lock Poetry wrote from it; a requirements file and the lock pip-tools or `uv pip compile` wrote from it
(requirements.in beside requirements.txt, and the sources the lock's header names). A requirement the lock does
not satisfy means the lock was not made again after the requirement changed: the stack judged would not be the
one the project declares. The run stops before anything runs, naming both lines and the fix. Both files are
read as one revision holds them (`main:uv.lock`: main's pyproject.toml too).

A requirement whose marker does not hold for the entries (this machine, the harness's Python) is not checked:
a lock compiled here leaves it out, and a universal lock may too (outside requires-python).
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack.pins import poetry_lock, pyproject_deps, requirement_files, uv_lock
from harness.stack.pins.matrix import PYTHON
from harness.stack.pins.pin_files import Files

_COMPILERS = (("pip-compile",), ("uv", "pip", "compile"))
# Options of pip-compile and `uv pip compile` whose value is not a source file.
_VALUED = {"-o", "--output-file", "-c", "--constraint", "--extra", "-i", "--index-url", "--extra-index-url", "-f",
           "--find-links", "-p", "--python", "--python-version", "--custom-compile-command", "--resolver",
           "--pip-args", "-P", "--upgrade-package", "--build-constraint", "-b", "--python-platform", "--group"}


class Disagreement(HarnessError):
    """Pins files that disagree: `init` stops here rather than try the next file."""


@dataclasses.dataclass(frozen=True)
class Wanted:
    """A requirement of the declaring file, where it is written."""

    where: str
    text: str
    requirement: Requirement
    constraint: bool = False  # a `-c` line: holds only a package the lock has


@dataclasses.dataclass(frozen=True)
class Lock:
    shown: str  # "uv.lock", "main:requirements.txt"
    versions: dict[str, list[tuple[str, str]]]  # name -> (version, where) of each exact pin; [] held unversioned
    verb: str  # "locks", "pins"
    relock: str  # the command that makes it again


def check(path: Path, files: Files) -> None:
    """Disagreement naming every requirement of `path`'s pair that its lock does not satisfy."""
    sections = []
    for declared, wanted, own_name, lock in _pairs(path, files):
        problems = _unsatisfied(wanted, own_name, lock)
        if problems:
            sections.append(f"{declared} and {lock.shown} disagree:\n  " + "\n  ".join(problems))
    if sections:
        raise Disagreement("\n".join(sections) + "\nThe lock was not made again after a requirement changed, so the "
                           "stack judged would not be the one your project declares; nothing was run.")


def companions(path: Path, files: Files) -> list[Path]:
    """The files that must agree with the pins file `path` and change what it pins, `path` left out: its
    pyproject.toml and uv.lock or poetry.lock, or its lock's sources (requirements.in, those the lock's header names) and the
    lock itself; none for a file with no such companion."""
    if _project_file(path):
        found = [path.parent / "pyproject.toml", *(path.parent / lock for lock in _PROJECT_LOCKS)]
    else:
        lock = path.with_suffix(".txt") if path.suffix == ".in" else path
        command = _header_command(requirement_files.text_of(lock, files)) if files.is_file(lock) else None
        found = [lock, lock.with_suffix(".in"), *(_header_sources(command, lock) if command else [])]
    return [f for f in dict.fromkeys(found) if f != path and files.is_file(f)]


def _pairs(path: Path, files: Files) -> list[tuple[str, list[Wanted], str | None, Lock]]:
    """(the declaring file, its requirements, its project's own name, the lock) of each pair `path` is in."""
    if _project_file(path):
        pyproject = path.parent / "pyproject.toml"
        # The lock read, and beside a pyproject.toml read, each lock it has (a project moving from one tool to
        # the other may have both: each must agree).
        wanted_locks = [path] if path.name in _PROJECT_LOCKS else [path.parent / lock for lock in _PROJECT_LOCKS]
        present = [lock for lock in wanted_locks if files.is_file(lock)]
        if not (files.is_file(pyproject) and present):
            return []
        found = pyproject_deps.read(requirement_files.text_of(pyproject, files), files.name(pyproject))
        return [(files.name(pyproject), _declared(found.requirements), found.name, _project_lock(lock, files))
                for lock in present]
    lock = path.with_suffix(".txt") if path.suffix == ".in" else path
    if not files.is_file(lock):
        return []
    text = requirement_files.text_of(lock, files)
    command = _header_command(text)
    sources = [lock.with_suffix(".in")] + (_header_sources(command, lock) if command else [])
    sources = [s for s in dict.fromkeys(sources) if s != lock and files.is_file(s)]
    versions = _pinned(lock, files)
    pairs = []
    for source in sources:
        relock = command or f"pip-compile {source.name}"
        shown_lock = Lock(files.name(lock), versions, "pins", relock)
        if source.suffix == ".toml":
            found = pyproject_deps.read(requirement_files.text_of(source, files), files.name(source))
            extras = _header_extras(command)
            chosen = [d for d in found.requirements
                      if d.group is None and (d.extra is None or extras is None or d.extra in extras)]
            pairs.append((files.name(source), _declared(chosen), found.name, shown_lock))
        else:
            pairs.append((files.name(source), _listed(source, files), None, shown_lock))
    return pairs


_PROJECT_LOCKS = ("uv.lock", poetry_lock.FILE)  # a pyproject.toml's locks, each written by its tool


def _project_file(path: Path) -> bool:
    """Whether `path` is a pyproject.toml or a lock written from one."""
    return path.name in _PROJECT_LOCKS or path.suffix == ".toml"


def _project_lock(lock: Path, files: Files) -> Lock:
    """The versions a pyproject.toml's lock holds, each with its line, and the command that makes it again."""
    versions: dict[str, list[tuple[str, str]]] = {}
    if lock.name == poetry_lock.FILE:
        for locked in poetry_lock.read(requirement_files.text_of(lock, files), files.name(lock)):
            versions.setdefault(locked.name, []).append((locked.version, locked.where))
        return Lock(files.name(lock), versions, "locks", poetry_lock.RELOCK_COMMAND)
    for package in uv_lock.read(requirement_files.text_of(lock, files), files.name(lock)):
        # one without a version (a member's dynamic one) is there, not comparable
        versions.setdefault(package.name, []).extend([(package.version, package.where)] if package.version else [])
    return Lock(files.name(lock), versions, "locks", "uv lock")


def _requirement(where: str, text: str) -> Requirement:
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        raise HarnessError(f"{where}: cannot read {text!r} as a requirement ({str(exc).splitlines()[0]}); fix the "
                           "line.") from None


def _declared(found: tuple[pyproject_deps.Declared, ...] | list[pyproject_deps.Declared]) -> list[Wanted]:
    return [Wanted(d.where, d.quoted, _requirement(d.where, d.text)) for d in found]


def _listed(path: Path, files: Files) -> list[Wanted]:
    lines, _ = requirement_files.lines_of(path, files)
    return [Wanted(line.where, line.text, _requirement(line.where, line.text), line.constraint) for line in lines
            if not requirement_files.url_or_path(line.text)]


def _pinned(path: Path, files: Files) -> dict[str, list[tuple[str, str]]]:
    """The exact pins of a compiled requirements file (and of what it includes)."""
    versions: dict[str, list[tuple[str, str]]] = {}
    for wanted in _listed(path, files):
        specs = list(wanted.requirement.specifier)
        if not wanted.constraint and len(specs) == 1 and specs[0].operator in ("==", "==="):
            versions.setdefault(canonicalize_name(wanted.requirement.name), []).append((specs[0].version, wanted.where))
    return versions


def _unsatisfied(wanted: list[Wanted], own_name: str | None, lock: Lock) -> list[str]:
    environment = {**default_environment(), "python_version": PYTHON, "python_full_version": f"{PYTHON}.0"}
    problems = []
    for item in wanted:
        requirement, name = item.requirement, canonicalize_name(item.requirement.name)
        if name == own_name or requirement.url or (requirement.marker and not _holds(requirement, environment)):
            continue
        specs = list(requirement.specifier)
        what = "pin" if len(specs) == 1 and specs[0].operator in ("==", "===") else "requirement"
        fix = f"re-lock with `{lock.relock}`, or fix the {what}"
        found = lock.versions.get(name)
        if found is None:
            if not item.constraint:
                problems.append(f"{item.where}: {item.text}, but {lock.shown} {lock.verb} no {name}: {fix}")
            continue
        if found and not any(requirement.specifier.contains(version, prereleases=True) for version, _ in found):
            locked = ", ".join(f"{where} {lock.verb} {name} {version}" for version, where in found)
            problems.append(f"{item.where}: {item.text}, but {locked}: {fix}")
    return problems


def _holds(requirement: Requirement, environment: dict[str, str]) -> bool:
    try:
        return requirement.marker.evaluate(environment)
    except ValueError:  # a marker packaging cannot evaluate here (an unknown variable): checked
        return True


def _header_command(text: str) -> str | None:
    """The command a compiled lock's header says made it: `pip-compile --output-file=requirements.txt
    requirements.in`, `uv pip compile requirements.in -o requirements.txt`."""
    for line in text.splitlines()[:20]:
        if not line.startswith("#"):
            break
        said = line.lstrip("#").strip()
        if said.startswith(("pip-compile", "uv pip compile")):
            return said
    return None


def _tokens(command: str) -> list[str]:
    try:
        tokens = shlex.split(command)
    except ValueError:
        return []
    program = next((len(p) for p in _COMPILERS if tuple(tokens[:len(p)]) == p), 0)
    return tokens[program:]


def _header_sources(command: str, lock: Path) -> list[Path]:
    """The source files the command names (beside the lock, as pip-compile is run from its folder)."""
    tokens, sources, skip = _tokens(command), [], False
    for token in tokens:
        if skip:
            skip = False
        elif token.startswith("-"):
            skip = token in _VALUED
        elif token.endswith((".in", ".txt", ".toml")):
            sources.append(lock.parent / token)
    return sources


def _header_extras(command: str | None) -> set[str] | None:
    """The extras of a pyproject.toml the command compiled (`--extra X`, `--all-extras`: None, all)."""
    tokens = _tokens(command or "")
    if "--all-extras" in tokens:
        return None
    extras = {tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t == "--extra"}
    return extras | {t.partition("=")[2] for t in tokens if t.startswith("--extra=")}
