"""The baseline's pins, read from the team's own files (`--baseline-from PATH`, or `baseline-from` in
[tool.upgrade-harness]): requirements.txt, uv.lock, poetry.lock, or pyproject.toml (PEP 621 dependencies and
optional dependencies, PEP 735 dependency groups, Poetry's dependency tables). Every package the harness pins must be pinned
exactly, once: a range is a question, not a baseline. A requirements file's `-r` includes are read, and
its `-c` constraints pin what a requirement leaves open, as pip does.

Every entry installs the team's whole set, not only the harness's packages (TeamPins.locked_with): every
other requirement of the file (uv.lock: every package its project installs with all extras and groups, dev tools
too, harness.stack.pins.uv_lock; poetry.lock: every package it locks, harness.stack.pins.poetry_lock), from the package index, at the file's versions unless a bump forces a move
(harness.stack.pins.resolve). Never installed: the team's project itself (uv.lock's editable and virtual
packages, the pyproject.toml's own name, a [tool.uv.sources] workspace member: the contracts import it from
`pythonpath`), and a line that points elsewhere (an index option, a direct URL, a local path, `-e`, a git or
path source), which is refused with its reason unless the table says pins-outside-index = "ignore". A package
whose marker excludes the entry's platform or Python keeps its marker: uv installs it only where it holds.
Its pyproject.toml and uv.lock or poetry.lock, its requirements.in and compiled requirements.txt, must agree
(harness.stack.pins.agreement). Whatever a file holds, a problem is a HarnessError naming its file and line,
never a traceback.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.errors import HarnessError
from harness.stack import project
from harness.stack.pins import agreement, pin_files, poetry_lock, pyproject_deps, requirement_files, uv_lock
from harness.stack.pins.matrix import PACKAGES
from harness.stack.pins.pin_files import Files, WorkingTree
from harness.stack.pins.requirement_files import Line, Outside, order, url_or_path
from harness.stack.pins_source import PinsSource

_FORMATS = "a requirements file (requirements.txt), uv.lock, poetry.lock, or pyproject.toml"


BASELINE_FILES = ("requirements.txt", "uv.lock", "poetry.lock", "pyproject.toml")  # where a baseline's pins are looked for, in order
OUTSIDE_INDEX_KEY = "pins-outside-index"  # the table's opt-in: "ignore" (default "refuse")


SIDES = ("baseline", "candidate")  # the side whose pins a file gives: --baseline-from, --candidate-from


@dataclasses.dataclass(frozen=True)
class TeamPins:
    """What one side's pins file gives its entries: the harness's packages at exact versions, and the rest of
    the team's set, which every entry installs with them: requirement lines (`chex==0.1.92`, `pywin32==306;
    sys_platform == "win32"`, a range a pyproject.toml states), each package once, sorted."""

    pins: dict[str, str]
    locked_with: tuple[str, ...] = ()


def read_source_all(source: PinsSource, outside_index: str = "refuse", side: str = "baseline",
                    optional: tuple[str, ...] = ()) -> TeamPins:
    """`read_all` of a file of the working tree or of a git revision (`REV:PATH`)."""
    return read_all(source.path, outside_index, side, pin_files.of(source, f"--{side}-from"), optional)


def read_source(source: PinsSource, outside_index: str = "refuse", side: str = "baseline",
                optional: tuple[str, ...] = ()) -> dict[str, str]:
    """`read` of a file of the working tree or of a git revision (`REV:PATH`)."""
    return read_source_all(source, outside_index, side, optional).pins


def read(path: Path, outside_index: str = "refuse", side: str = "baseline",
         files: Files = WorkingTree(), optional: tuple[str, ...] = ()) -> dict[str, str]:
    """jax, jaxlib, optax, flax and numpy at the exact versions `path` pins (read_all's pins)."""
    return read_all(path, outside_index, side, files, optional).pins


def read_all(path: Path, outside_index: str = "refuse", side: str = "baseline",
             files: Files = WorkingTree(), optional: tuple[str, ...] = ()) -> TeamPins:
    """The harness's packages at the exact versions `path` pins, and the rest of the set it gives every entry;
    HarnessError naming the file, the line and the fix. A package in `optional` may be left unpinned (flax, for a
    project whose code does not import it). The entries install from the package index: a line that points
    elsewhere (another index, a direct URL, a local path, an editable install) is refused unless `outside_index`
    is "ignore" (the team's table says so); one of the harness's own packages from elsewhere is always refused."""
    if not files.is_file(path):
        raise HarnessError(f"--{side}-from: {files.shown(path)} does not exist; give {_FORMATS}.")
    if path.name == "uv.lock":
        found = _from_uv_lock(path, outside_index, files)
    elif path.name == poetry_lock.FILE:
        found = _from_poetry_lock(path, outside_index, files)
    elif path.suffix == ".toml":
        found = _from_pyproject(path, outside_index, files, side)
    else:
        lines, outside = requirement_files.lines_of(path, files)
        found = _from_requirement_lines(lines, files.shown(path), outside_index, outside, side)
    agreement.check(path, files)  # its pyproject.toml and uv.lock or poetry.lock, its requirements.in and .txt, agree
    missing = [pkg for pkg in PACKAGES if pkg not in found.pins and pkg not in optional]
    if missing:
        needed = [pkg for pkg in PACKAGES if pkg not in optional]
        raise HarnessError(f"{files.shown(path)} does not pin {', '.join(missing)}: the {side} must pin exactly "
                           f"{', '.join(needed)} (the versions your training runs with), e.g. `{missing[0]}==X.Y.Z`.")
    return TeamPins({pkg: found.pins[pkg] for pkg in PACKAGES if pkg in found.pins}, found.locked_with)


def _check_outside(outside: list[Outside], source: str, outside_index: str) -> None:
    """Refuse the lines that point outside the index, each with its reason, unless the team opted in."""
    if not outside or outside_index == "ignore":
        return
    listed = "\n  ".join(f"{o.where}: {o.text!r}: {o.reason}" for o in outside)
    raise HarnessError(
        f"{source} points outside the package index:\n  {listed}\nThe harness installs what this file pins from "
        "the package index uv uses, and nothing from elsewhere: those lines would not be installed. If the "
        f"packages pinned here come from the index, say so in [tool.{project.TABLE}] with "
        f'{OUTSIDE_INDEX_KEY} = "ignore" (`upgrade-harness init --{OUTSIDE_INDEX_KEY} ignore` writes it), or give '
        "--baseline-from a file without them.")


def _from_requirement_lines(lines: list[Line], source: str, outside_index: str = "refuse",
                            options: list[Outside] | None = None, side: str = "baseline") -> TeamPins:
    """The exact pins of the harness's packages, and the file's other requirements. A constraint (`-c`) pins a
    version a requirement leaves open (`jax` or `jax>=0.11` with `jax==0.11.2` in the constraints file), as pip
    does; a constraint on a package no line requires installs nothing (nor, unlike pip's, holds a dependency)."""
    required: dict[str, tuple[Requirement, Line]] = {}
    constrained: dict[str, tuple[str, str]] = {}
    others: list[Requirement] = []  # the rest of the set, and what the constraints say of it
    other_constraints: dict[str, list[Requirement]] = {}
    outside: list[Outside] = list(options or [])  # the option lines that point outside the index
    for line in lines:
        try:
            req = Requirement(line.text)
        except InvalidRequirement as exc:
            if url_or_path(line.text):
                outside.append(Outside(line.where, line.text, "a local path or a URL"))
                continue
            raise HarnessError(f"{line.where}: cannot read {line.text!r} as a requirement "
                               f"({str(exc).splitlines()[0]}); fix the line.") from None
        name = canonicalize_name(req.name)
        if req.url:
            if name in PACKAGES:
                raise HarnessError(f"{line.where}: {req.name} comes from {req.url}, not the package index: the harness "
                                   f"installs the baseline from the index, which would not be the {req.name} you run. "
                                   f"Pin the version instead ({req.name}==X.Y.Z) if the index has the same build.")
            outside.append(Outside(line.where, line.text, "a direct URL"))
            continue
        if name not in PACKAGES:
            if line.constraint:
                other_constraints.setdefault(name, []).append(req)
            else:
                others.append(req)
            continue
        if line.constraint:
            version = _exact(req, line.where, side)
            if name in constrained and constrained[name][0] != version:
                raise HarnessError(f"{source}'s constraints pin {name} twice, {constrained[name][0]} "
                                   f"({constrained[name][1]}) and {version} ({line.where}); keep one exact pin.")
            constrained[name] = (version, line.where)
            continue
        if name in required:
            first, first_line = required[name]
            if str(first.specifier) != str(req.specifier):
                raise HarnessError(f"{source} pins {name} twice, {_shown(first)} ({first_line.where}) and {_shown(req)} "
                                   f"({line.where}); keep one exact pin.")
        required[name] = (req, line)
    _check_outside(sorted(outside, key=order), source, outside_index)
    found = {}
    for name in PACKAGES:
        if name in required:
            req, line = required[name]
            found[name] = _with_constraint(req, line.where, constrained.get(name), side, line.poetry)
        elif name in constrained:
            found[name] = constrained[name][0]
    for req in others:
        for constraint in other_constraints.get(canonicalize_name(req.name), []):
            req.specifier &= constraint.specifier
    return TeamPins(found, tuple(sorted(dict.fromkeys(str(req) for req in others))))


def _shown(req: Requirement) -> str:
    specs = list(req.specifier)
    return specs[0].version if len(specs) == 1 and specs[0].operator in ("==", "===") else str(req.specifier) or "any"


def _with_constraint(req: Requirement, where: str, constraint: tuple[str, str] | None, side: str = "baseline",
                     poetry: bool = False) -> str:
    """The requirement's exact version, or the constraint's when the requirement leaves it open."""
    if constraint is None:
        return _exact(req, where, side, poetry)
    version, said = constraint
    if not req.specifier.contains(version, prereleases=True):
        raise HarnessError(f"{where}: {req.name}{req.specifier} does not allow {version}, which {said} pins "
                           "(a constraint); make them agree.")
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and specs[0].version != version:
        raise HarnessError(f"{where}: {req.name} is pinned at {specs[0].version} but {said} pins {version}; "
                           "make them agree.")
    return version


_WHY_EXACT = {
    "baseline": "The baseline is the stack your golden values come from: pin it exactly, e.g. {name}==X.Y.Z (the "
                "version you run today; `pip show` or your lock file says which).",
    "candidate": "The candidate is the stack your bump would run: pin it exactly, e.g. {name}==X.Y.Z (the version "
                 "you bump to).",
}


def _exact(req: Requirement, where: str, side: str = "baseline", poetry: bool = False) -> str:
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        try:
            Version(specs[0].version)  # `===` takes any text; the harness compares the versions it pins
        except InvalidVersion:
            raise HarnessError(f"{where}: {req.name}{specs[0]}: {specs[0].version!r} is not a version (PEP 440, "
                               f"e.g. {req.name}==0.2.8); pin a released version.") from None
        return specs[0].version
    given = str(req.specifier) or "any version"
    why = _WHY_EXACT[side].format(name=req.name)
    if poetry:  # said in the syntax of the line it names
        why = why.replace(f"{req.name}==X.Y.Z", f'{req.name} = "X.Y.Z" (Poetry\'s exact version)') + (
            " With a poetry.lock, give it instead (baseline-from = \"poetry.lock\"): the versions it locks are "
            "exact." if side == "baseline" else "")
    raise HarnessError(f"{where}: {req.name} is a range ({given}), not an exact version. " + why)


def _from_pyproject(path: Path, outside_index: str = "refuse", files: Files = WorkingTree(),
                    side: str = "baseline") -> TeamPins:
    """Its PEP 621 dependencies, optional dependencies and PEP 735 groups, and Poetry's dependency tables, as
    requirement lines, less the project itself; a [tool.uv.sources] entry (a Poetry dependency's own table) says
    where uv (Poetry) takes a dependency from instead of the index."""
    found = pyproject_deps.read(requirement_files.text_of(path, files), files.name(path))
    lines: list[Line] = []
    outside: list[Outside] = []
    for declared in found.requirements:
        try:
            name = canonicalize_name(Requirement(declared.text).name)
        except InvalidRequirement:
            lines.append(Line(declared.where, declared.text))  # refused with its line below
            continue
        if name == found.name:
            continue  # the project itself (`team[test]` in a group): the contracts import it from pythonpath
        by_poetry = declared.poetry or declared.poetry_source is not None
        source = declared.poetry_source if by_poetry else found.sources.get(name)
        table = "[tool.poetry]" if by_poetry else "[tool.uv.sources]"
        kind = _uv_source_kind(source)
        if kind == "workspace":
            continue  # a member of the project's own uv workspace
        if kind is not None:
            if kind != "index" and name in PACKAGES:
                raise HarnessError(f"{declared.where}: {name} comes from {source} ({table}), not the package "
                                   "index: the harness installs it from the index, which would not be the "
                                   f"{name} you run. Take it from the index if the index has the same build.")
            reason = (f"another package index ({table})" if kind == "index" else
                      f"{table} takes it from {source}")
            outside.append(Outside(declared.where, declared.text, reason))
            if kind != "index":
                continue  # with "ignore": not installed; an index's package is, from the index uv uses
        lines.append(Line(declared.where, declared.text, poetry=declared.poetry))
    return _from_requirement_lines(lines, files.shown(path), outside_index, outside, side=side)


def _uv_source_kind(source: object) -> str | None:
    """What [tool.uv.sources] says of a dependency: "workspace", "index", "git", "path", "url" (a list of
    sources by marker: "by marker"), None when it says nothing."""
    if source is None:
        return None
    if isinstance(source, dict):
        if source.get("workspace") is True:
            return "workspace"
        return next((k for k in ("index", "git", "path", "url") if k in source), "unknown")
    return "by marker"


def _from_uv_lock(path: Path, outside_index: str = "refuse", files: Files = WorkingTree()) -> TeamPins:
    """The locked versions of the harness's packages, each from the package index (its `source`), and every
    other package the lock's project installs (harness.stack.pins.uv_lock), with its marker."""
    packages = uv_lock.read(requirement_files.text_of(path, files), files.name(path))
    pins, locked_with, outside = uv_lock.team_set(packages, files.shown(path))
    _check_outside(sorted(outside, key=order), files.shown(path), outside_index)
    return TeamPins(pins, locked_with)


def _from_poetry_lock(path: Path, outside_index: str = "refuse", files: Files = WorkingTree()) -> TeamPins:
    """The locked versions of the harness's packages, and every other package the lock holds, with its marker
    (harness.stack.pins.poetry_lock): the set `poetry install --all-groups --all-extras` installs."""
    packages = poetry_lock.read(requirement_files.text_of(path, files), files.name(path))
    pins, locked_with, outside = poetry_lock.team_set(packages, files.shown(path))
    _check_outside(sorted(outside, key=order), files.shown(path), outside_index)
    return TeamPins(pins, locked_with)
