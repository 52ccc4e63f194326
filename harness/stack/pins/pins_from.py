"""The baseline's pins, read from the team's own files (`--baseline-from PATH`, or `baseline-from` in
[tool.upgrade-harness]): requirements.txt, uv.lock, or pyproject.toml (PEP 621 dependencies and
optional dependencies, PEP 735 dependency groups). Every package the harness pins must be pinned
exactly, once: a range is a question, not a baseline. A requirements file's `-r` includes are read, and
its `-c` constraints pin what a requirement leaves open, as pip does. The harness installs only these
pins, from the package index: a line that points elsewhere (an index option, a direct URL, a local
path, `-e`) is refused with its reason unless the table says pins-outside-index = "ignore".
The candidate's pins (`--candidate-from PATH`) are read the same way, and either file may be read as a
git revision holds it (`REV:PATH`, harness.stack.pins.pin_files), its includes from that revision too.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack import project
from harness.stack.pins import pin_files
from harness.stack.pins.matrix import PACKAGES
from harness.stack.pins.pin_files import Files, WorkingTree
from harness.stack.pins_source import PinsSource

_FORMATS = "a requirements file (requirements.txt), uv.lock, or pyproject.toml"


BASELINE_FILES = ("requirements.txt", "uv.lock", "pyproject.toml")  # where a baseline's pins are looked for, in order
OUTSIDE_INDEX_KEY = "pins-outside-index"  # the table's opt-in: "ignore" (default "refuse")
_INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--no-index")
_EDITABLE = ("-e", "--editable")
_INCLUDE = ("-r", "--requirement")
_CONSTRAINT = ("-c", "--constraint")


@dataclasses.dataclass(frozen=True)
class Line:
    """One requirement of the file (or of a file it includes): where it is, its text, and whether it
    came from a constraints file (`-c`), which pins a version without asking for the package."""

    where: str  # "requirements.txt:3"
    text: str
    constraint: bool = False


@dataclasses.dataclass(frozen=True)
class Outside:
    """A line that makes packages come from somewhere other than the package index."""

    where: str
    text: str
    reason: str


SIDES = ("baseline", "candidate")  # the side whose pins a file gives: --baseline-from, --candidate-from


def read_source(source: PinsSource, outside_index: str = "refuse", side: str = "baseline",
                optional: tuple[str, ...] = ()) -> dict[str, str]:
    """`read` of a file of the working tree or of a git revision (`REV:PATH`)."""
    return read(source.path, outside_index, side, pin_files.of(source, f"--{side}-from"), optional)


def read(path: Path, outside_index: str = "refuse", side: str = "baseline",
         files: Files = WorkingTree(), optional: tuple[str, ...] = ()) -> dict[str, str]:
    """jax, jaxlib, optax, flax and numpy at the exact versions `path` pins; HarnessError naming the fix.
    A package in `optional` may be left unpinned (flax, for a project whose code does not import it).
    The harness installs them from the package index: a line that points elsewhere (another index, a
    direct URL, a local path, an editable install) is refused unless `outside_index` is "ignore" (the
    team's table says so); one of the harness's own packages from elsewhere is always refused."""
    if not files.is_file(path):
        raise HarnessError(f"--{side}-from: {files.shown(path)} does not exist; give {_FORMATS}.")
    if path.name == "uv.lock":
        found = _from_uv_lock(path, outside_index, files)
    elif path.suffix == ".toml":
        found = _from_pyproject(path, outside_index, files, side)
    else:
        lines, outside = _requirement_lines(path, files)
        found = _from_requirement_lines(lines, files.shown(path), outside_index, outside, side)
    missing = [pkg for pkg in PACKAGES if pkg not in found and pkg not in optional]
    if missing:
        needed = [pkg for pkg in PACKAGES if pkg not in optional]
        raise HarnessError(f"{files.shown(path)} does not pin {', '.join(missing)}: the {side} must pin exactly "
                           f"{', '.join(needed)} (the versions your training runs with), e.g. `{missing[0]}==X.Y.Z`.")
    return {pkg: found[pkg] for pkg in PACKAGES if pkg in found}


def _toml(path: Path, files: Files) -> dict:
    try:
        return tomllib.loads(files.read_text(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"{files.shown(path)} cannot be read as TOML ({exc}); fix it and run again.") from None


def _check_outside(outside: list[Outside], source: str, outside_index: str) -> None:
    """Refuse the lines that point outside the index, each with its reason, unless the team opted in."""
    if not outside or outside_index == "ignore":
        return
    listed = "\n  ".join(f"{o.where}: {o.text!r}: {o.reason}" for o in outside)
    raise HarnessError(
        f"{source} points outside the package index:\n  {listed}\nThe harness installs {', '.join(PACKAGES)} at "
        "the versions pinned here from the package index uv uses, nothing else of this file: those lines would "
        f"not be installed. If your stack's packages come from the index, say so in [tool.{project.TABLE}] with "
        f'{OUTSIDE_INDEX_KEY} = "ignore" (`upgrade-harness init --{OUTSIDE_INDEX_KEY} ignore` writes it), or give '
        "--baseline-from a file without them.")


def _option(line: str) -> tuple[str, str] | None:
    """("--index-url", "URL") for an option line (`-i URL`, `--index-url=URL`, `-rfile`), else None."""
    if not line.startswith("-"):
        return None
    head, _, rest = line.partition(" ")
    if head.startswith("--"):
        name, equals, value = head.partition("=")
        return name, (value if equals else rest).strip()
    if len(head) > 2:  # -rfile, -iURL
        return head[:2], f"{head[2:]} {rest}".strip()
    return head, rest.strip()


def _requirement_lines(path: Path, files: Files, seen: frozenset[Path] = frozenset(),
                       constraint: bool = False) -> tuple[list[Line], list[Outside]]:
    """Each requirement line, following `-r other.txt` and `-c constraints.txt`, and the lines that
    point outside the package index."""
    lines: list[Line] = []
    outside: list[Outside] = []
    try:
        text = files.read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"{files.shown(path)} cannot be read ({exc}); give a UTF-8 requirements file (`pip freeze` "
                           "from PowerShell writes UTF-16: re-save it as UTF-8).") from None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #")[0].strip().rstrip("\\").strip()
        where = f"{files.name(path)}:{number}"
        if not line or line.startswith("#"):
            continue
        option = _option(line)
        if option is not None:
            name, value = option
            if name in _INCLUDE or name in _CONSTRAINT:
                included = (path.parent / value).resolve()
                if not value or not files.is_file(included):
                    raise HarnessError(f"{where}: includes {files.shown(included)}, which does not exist; fix the "
                                       f"{name} line.")
                if included not in seen:
                    more, elsewhere = _requirement_lines(included, files, seen | {path.resolve()},
                                                         constraint or name in _CONSTRAINT)
                    lines, outside = lines + more, outside + elsewhere
            elif name in _INDEX_OPTIONS:
                outside.append(Outside(where, line, "another package index or a directory of files: pip would "
                                                    "take packages from there"))
            elif name in _EDITABLE:
                outside.append(Outside(where, line, "an editable install from a local path or a repository"))
            continue  # other options (--hash on its own line, --pre, --trusted-host): not pins
        lines.append(Line(where, line.split(" --")[0].strip(), constraint))  # `pkg==1 --hash=...`
    return lines, outside


def _url_or_path(text: str) -> bool:
    """A line that is a path or URL rather than a requirement (`./vendored/thing`, `git+https://...`)."""
    return "/" in text or "\\" in text or text.startswith(".") or text.endswith((".whl", ".tar.gz", ".zip"))


def _from_requirement_lines(lines: list[Line], source: str, outside_index: str = "refuse",
                            options: list[Outside] | None = None, side: str = "baseline") -> dict[str, str]:
    """The exact pins of the harness's packages. A constraint (`-c`) pins a version a requirement leaves
    open (`jax` or `jax>=0.11` with `jax==0.11.2` in the constraints file), as pip does."""
    required: dict[str, tuple[Requirement, str]] = {}
    constrained: dict[str, tuple[str, str]] = {}
    outside: list[Outside] = list(options or [])  # the option lines that point outside the index
    for line in lines:
        try:
            req = Requirement(line.text)
        except InvalidRequirement as exc:
            if any(line.text.lower().startswith(pkg) for pkg in PACKAGES):
                raise HarnessError(f"{line.where}: cannot read {line.text!r} ({exc}).") from None
            if _url_or_path(line.text):
                outside.append(Outside(line.where, line.text, "a local path or a URL"))
            continue  # not a requirement the harness pins
        name = canonicalize_name(req.name)
        if req.url:
            if name in PACKAGES:
                raise HarnessError(f"{line.where}: {req.name} comes from {req.url}, not the package index: the harness "
                                   f"installs the baseline from the index, which would not be the {req.name} you run. "
                                   f"Pin the version instead ({req.name}==X.Y.Z) if the index has the same build.")
            outside.append(Outside(line.where, line.text, "a direct URL"))
            continue
        if name not in PACKAGES:
            continue
        if line.constraint:
            version = _exact(req, line.where, side)
            if name in constrained and constrained[name][0] != version:
                raise HarnessError(f"{source}'s constraints pin {name} twice, {constrained[name][0]} "
                                   f"({constrained[name][1]}) and {version} ({line.where}); keep one exact pin.")
            constrained[name] = (version, line.where)
            continue
        if name in required:
            first, where = required[name]
            if str(first.specifier) != str(req.specifier):
                raise HarnessError(f"{source} pins {name} twice, {_shown(first)} ({where}) and {_shown(req)} "
                                   f"({line.where}); keep one exact pin.")
        required[name] = (req, line.where)
    _check_outside(sorted(outside, key=_order), source, outside_index)
    found = {}
    for name in PACKAGES:
        if name in required:
            req, where = required[name]
            found[name] = _with_constraint(req, where, constrained.get(name), side)
        elif name in constrained:
            found[name] = constrained[name][0]
    return found


def _order(line: Outside) -> tuple[str, int]:
    name, _, number = line.where.rpartition(":")
    return (name, int(number)) if number.isdigit() else (line.where, 0)


def _shown(req: Requirement) -> str:
    specs = list(req.specifier)
    return specs[0].version if len(specs) == 1 and specs[0].operator in ("==", "===") else str(req.specifier) or "any"


def _with_constraint(req: Requirement, where: str, constraint: tuple[str, str] | None, side: str = "baseline") -> str:
    """The requirement's exact version, or the constraint's when the requirement leaves it open."""
    if constraint is None:
        return _exact(req, where, side)
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


def _exact(req: Requirement, where: str, side: str = "baseline") -> str:
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    given = str(req.specifier) or "any version"
    raise HarnessError(f"{where}: {req.name} is a range ({given}), not an exact version. "
                       + _WHY_EXACT[side].format(name=req.name))


def _from_pyproject(path: Path, outside_index: str = "refuse", files: Files = WorkingTree(),
                    side: str = "baseline") -> dict[str, str]:
    data, name = _toml(path, files), files.name(path)
    table = data.get("project", {})
    lines = [(f"{name} [project] dependencies", d) for d in table.get("dependencies", [])]
    for extra, deps in table.get("optional-dependencies", {}).items():
        lines += [(f"{name} [project.optional-dependencies] {extra}", d) for d in deps]
    for group, deps in data.get("dependency-groups", {}).items():
        lines += [(f"{name} [dependency-groups] {group}", d) for d in deps if isinstance(d, str)]
    return _from_requirement_lines([Line(where, text) for where, text in lines], files.shown(path), outside_index,
                                   side=side)


PYPI = "https://pypi.org/simple"


def _from_uv_lock(path: Path, outside_index: str = "refuse", files: Files = WorkingTree()) -> dict[str, str]:
    """The locked versions of the harness's packages, each from the package index (its `source`)."""
    found: dict[str, set[str]] = {}
    outside: list[Outside] = []
    for package in _toml(path, files).get("package", []):
        name = canonicalize_name(package.get("name", ""))
        if name not in PACKAGES or "version" not in package:
            continue
        source = package.get("source", {"registry": PYPI})
        where, text = f"{files.name(path)} [[package]] {name} {package['version']}", f"source = {source}"
        if "registry" not in source:
            raise HarnessError(f"{where}: {name} is locked from {source}, not the package index: the harness installs "
                               f"the baseline from the index, which would not be the {name} you run. Lock it from the "
                               "index if the index has the same build.")
        if source["registry"].rstrip("/") != PYPI:
            outside.append(Outside(where, text, f"another package index ({source['registry']})"))
        found.setdefault(name, set()).add(package["version"])
    _check_outside(outside, files.shown(path), outside_index)
    forked = {name: versions for name, versions in found.items() if len(versions) > 1}
    if forked:
        name, versions = next(iter(forked.items()))
        raise HarnessError(f"{files.shown(path)} locks {name} at {len(versions)} versions ({', '.join(sorted(versions))}, a fork by "
                           "platform or Python); give a requirements file with one exact pin instead.")
    return {name: versions.pop() for name, versions in found.items()}
