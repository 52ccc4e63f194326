"""The baseline's pins, read from the team's own files (`--baseline-from PATH`, or `baseline-from` in
[tool.upgrade-harness]): requirements.txt, uv.lock, or pyproject.toml (PEP 621 dependencies and
optional dependencies, PEP 735 dependency groups). Every package the harness pins must be pinned
exactly, once: a range is a question, not a baseline.
"""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack import project
from harness.stack.matrix import PACKAGES

_FORMATS = "a requirements file (requirements.txt), uv.lock, or pyproject.toml"


def read(path: Path) -> dict[str, str]:
    """jax, jaxlib, optax, flax and numpy at the exact versions `path` pins; HarnessError naming the fix."""
    if not path.is_file():
        raise HarnessError(f"--baseline-from: {path} does not exist; give {_FORMATS}.")
    if path.name == "uv.lock":
        found = _from_uv_lock(path)
    elif path.suffix == ".toml":
        found = _from_pyproject(path)
    else:
        found = _from_requirement_lines(_requirement_lines(path), path)
    missing = [pkg for pkg in PACKAGES if pkg not in found]
    if missing:
        raise HarnessError(f"{path} does not pin {', '.join(missing)}: the baseline must pin exactly "
                           f"{', '.join(PACKAGES)} (the versions your training runs with), e.g. `{missing[0]}==X.Y.Z`.")
    return {pkg: found[pkg] for pkg in PACKAGES}


def _requirement_lines(path: Path, seen: frozenset[Path] = frozenset()) -> list[tuple[str, str]]:
    """(where, requirement) for each requirement line, following `-r other.txt`."""
    lines = []
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"{path} cannot be read ({exc}); give a UTF-8 requirements file (`pip freeze` "
                           "from PowerShell writes UTF-16: re-save it as UTF-8).") from None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            included = (path.parent / line.split(None, 1)[1].strip()).resolve()
            if not included.is_file():
                raise HarnessError(f"{path.name}:{number}: includes {included}, which does not exist; fix the -r line.")
            if included not in seen:
                lines += _requirement_lines(included, seen | {path.resolve()})
            continue
        if line.startswith("-"):
            continue  # index options, hashes on their own line
        lines.append((f"{path.name}:{number}", line.rstrip("\\").strip()))
    return lines


def _from_requirement_lines(lines: list[tuple[str, str]], source: Path) -> dict[str, str]:
    found: dict[str, tuple[str, str]] = {}
    for where, text in lines:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            if any(text.lower().startswith(pkg) for pkg in PACKAGES):
                raise HarnessError(f"{where}: cannot read {text!r} ({exc}).") from None
            continue  # not ours (a URL, an editable path): the harness does not pin it
        name = canonicalize_name(req.name)
        if name not in PACKAGES:
            continue
        version = _exact(req, where)
        if name in found and found[name][0] != version:
            raise HarnessError(f"{source} pins {name} twice, {found[name][0]} ({found[name][1]}) and {version} ({where}); "
                               "keep one exact pin.")
        found[name] = (version, where)
    return {name: version for name, (version, _) in found.items()}


def _exact(req: Requirement, where: str) -> str:
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    given = str(req.specifier) or "any version"
    raise HarnessError(f"{where}: {req.name} is a range ({given}), not an exact version. The baseline is the stack "
                       f"your golden values come from: pin it exactly, e.g. {req.name}==X.Y.Z (the version you run "
                       "today; `pip show` or your lock file says which).")


def _from_pyproject(path: Path) -> dict[str, str]:
    data = project.read_toml(path)
    table = data.get("project", {})
    lines = [(f"{path.name} [project] dependencies", d) for d in table.get("dependencies", [])]
    for extra, deps in table.get("optional-dependencies", {}).items():
        lines += [(f"{path.name} [project.optional-dependencies] {extra}", d) for d in deps]
    for group, deps in data.get("dependency-groups", {}).items():
        lines += [(f"{path.name} [dependency-groups] {group}", d) for d in deps if isinstance(d, str)]
    return _from_requirement_lines(lines, path)


def _from_uv_lock(path: Path) -> dict[str, str]:
    found: dict[str, set[str]] = {}
    for package in project.read_toml(path).get("package", []):
        name = canonicalize_name(package.get("name", ""))
        if name in PACKAGES and "version" in package:
            found.setdefault(name, set()).add(package["version"])
    forked = {name: versions for name, versions in found.items() if len(versions) > 1}
    if forked:
        name, versions = next(iter(forked.items()))
        raise HarnessError(f"{path} locks {name} at {len(versions)} versions ({', '.join(sorted(versions))}, a fork by "
                           "platform or Python); give a requirements file with one exact pin instead.")
    return {name: versions.pop() for name, versions in found.items()}
