"""A pyproject.toml's Poetry dependencies, each as a PEP 508 requirement with the line it is written at:
`[tool.poetry.dependencies]` (the main group), `[tool.poetry.group.NAME.dependencies]` and the older
`[tool.poetry.dev-dependencies]`, in Poetry's own syntax, which poetry-core reads (`jax = "0.11.2"` is an exact pin,
`"^0.11.2"` a range, a table may add extras, markers, python, a source or a git, path or URL location).

`python` is Poetry's Python constraint, not a package. A dependency from a git, path or URL location, or from a
named `[[tool.poetry.source]]`, is said as a source (where it comes from instead of the package index), as
[tool.uv.sources] is for uv. A constraint with alternatives (`"^1.0 || ^2.0"`), which PEP 508 cannot state, is
kept as the package at any version: its locked version is not compared with it.
"""

from __future__ import annotations

import dataclasses

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack.pins.toml_lines import TomlLines

TOOL = "tool.poetry"
LOCATIONS = ("git", "path", "url")  # a dependency taken from elsewhere than an index
PYPI = "pypi"  # the source name Poetry gives the package index itself
RELOCK = "poetry lock"


@dataclasses.dataclass(frozen=True)
class PoetryDependency:
    """One dependency as Poetry declares it, read: where, its PEP 508 text, its group (None: the main one), and
    where it comes from when not the package index ({"git": URL}, {"index": SOURCE NAME})."""

    where: str
    text: str
    group: str | None
    source: dict[str, str] | None = None
    written: str | None = None  # the line as the file writes it (`optax = "0.2.7"`), to quote


@dataclasses.dataclass(frozen=True)
class PoetryDeclared:
    dependencies: tuple[PoetryDependency, ...]
    name: str | None  # [tool.poetry] name, normalized: the project itself


def _tables(data: dict) -> list[tuple[str, str, str | None, object]]:
    """(the table's dotted path, how it is shown, its group, its value) of every Poetry dependency table."""
    tool = data.get("tool", {})
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}  # a `tool` not a table: said where it is read
    if not isinstance(poetry, dict):
        return []
    found = [(f"{TOOL}.dependencies", f"[{TOOL}.dependencies]", None, poetry.get("dependencies")),
             (f"{TOOL}.dev-dependencies", f"[{TOOL}.dev-dependencies]", "dev", poetry.get("dev-dependencies"))]
    groups = poetry.get("group", {})
    if isinstance(groups, dict):
        found += [(f"{TOOL}.group.{name}.dependencies", f"[{TOOL}.group.{name}.dependencies]", str(name),
                   group.get("dependencies") if isinstance(group, dict) else None) for name, group in groups.items()]
    return found


def read(data: dict, lines: TomlLines, shown: str) -> PoetryDeclared:
    """The Poetry dependencies of the pyproject.toml `shown` ("pyproject.toml", "main:pyproject.toml") as loaded
    (`data`); HarnessError naming the line of a dependency poetry-core cannot read, and the fix."""
    found: list[PoetryDependency] = []
    for path, table_shown, group, table in _tables(data):
        if table is None:
            continue
        if not isinstance(table, dict):
            raise HarnessError(f"{shown}:{lines.key(path.rpartition('.')[0], path.rpartition('.')[2])}: "
                               f"{table_shown} is not a table; fix it and run again.")
        for name, constraint in table.items():
            if canonicalize_name(name) == "python":
                continue  # the project's Python, not a package
            line = lines.key(path, name)
            where, written = f"{shown}:{line}", lines.text_lines[line - 1].strip()
            for each in (constraint if isinstance(constraint, list) else [constraint]):
                found.append(dataclasses.replace(_dependency(name, each, where, group, table_shown), written=written))
    tool = data.get("tool", {})
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
    name = poetry.get("name") if isinstance(poetry, dict) else None
    return PoetryDeclared(tuple(found), canonicalize_name(name) if isinstance(name, str) else None)


def _dependency(name: str, constraint, where: str, group: str | None, table_shown: str) -> PoetryDependency:
    """One constraint (a string or a table) as a PEP 508 requirement, by poetry-core's own reading."""
    from poetry.core.constraints.version.exceptions import ParseConstraintError
    from poetry.core.factory import Factory

    if isinstance(constraint, dict):
        location = next((key for key in LOCATIONS if key in constraint), None)
        if location is not None:
            if not isinstance(constraint[location], str):
                raise HarnessError(f"{where}: {name}'s {location} in {table_shown} is not a string; fix it and run "
                                   "again.")
            return PoetryDependency(where, name, group, {location: constraint[location]})
        source = constraint.get("source")
        constraint = {k: v for k, v in constraint.items() if k != "source"}
    elif isinstance(constraint, str):
        source = None
    else:
        raise HarnessError(f"{where}: {name} = {constraint!r} in {table_shown} is not a Poetry dependency (a version "
                           'constraint such as "0.2.8", or a table such as {version = "0.2.8", extras = [...]}); fix '
                           "it and run again.")
    try:
        dependency = Factory.create_dependency(name, constraint, groups=[group or "main"])
        text = dependency.to_pep_508()
    except (ParseConstraintError, ValueError, TypeError, KeyError) as exc:
        raise HarnessError(f"{where}: {name} = {constraint!r}: Poetry cannot read it ({str(exc).splitlines()[0]}); "
                           "fix it (`poetry check` says what Poetry makes of it) and run again.") from None
    try:
        Requirement(text)
    except InvalidRequirement:
        # Alternatives (`||`) PEP 508 cannot state: the package at any version, its markers and extras kept.
        text = Factory.create_dependency(name, _any_version(constraint), groups=[group or "main"]).to_pep_508()
    # A named source other than PyPI (which Poetry also lets a project name) is another package index.
    outside = isinstance(source, str) and source.lower() != PYPI
    return PoetryDependency(where, text, group, {"index": source} if outside else None)


def _any_version(constraint):
    return dict(constraint, version="*") if isinstance(constraint, dict) else "*"
