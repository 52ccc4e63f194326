"""A pyproject.toml's requirements, each with the line it is written at: PEP 621 dependencies and optional
dependencies, PEP 735 dependency groups, checked as those PEPs define them (lists of requirement strings) so
that a malformed table is refused naming its line; its `[project] name`, and `[tool.uv.sources]`, which says
where uv takes a dependency from instead of the package index."""

from __future__ import annotations

import dataclasses

from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack.pins.toml_lines import TomlLines, load


@dataclasses.dataclass(frozen=True)
class Declared:
    """One requirement string, where it is ("pyproject.toml:8"), and the list that holds it."""

    where: str
    text: str
    extra: str | None = None  # in [project.optional-dependencies] EXTRA
    group: str | None = None  # in [dependency-groups] GROUP


@dataclasses.dataclass(frozen=True)
class Pyproject:
    requirements: tuple[Declared, ...]
    name: str | None  # [project] name, normalized: the project itself, never installed by the harness
    sources: dict[str, object]  # [tool.uv.sources] by normalized name: a table, or a list of them by marker


def _table(data: dict, key: str, lines: TomlLines, shown: str, path: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise HarnessError(f"{shown}:{lines.key(path.rpartition('.')[0], key)}: [{path}] is not a table; fix it "
                           "and run again.")
    return value


def _strings(value, where: str, what: str, groups: bool = False) -> list[str]:
    """The requirement strings of a list (a dependency group may also include another: {include-group = ...})."""
    if not isinstance(value, list):
        raise HarnessError(f"{where}: {what} is not a list of requirement strings; fix it and run again.")
    found = []
    for item in value:
        if isinstance(item, str):
            found.append(item)
        elif not (groups and isinstance(item, dict) and isinstance(item.get("include-group"), str)):
            raise HarnessError(f"{where}: {what} holds {item!r}, not a requirement string"
                               + (" or {include-group = \"NAME\"}" if groups else "") + "; fix it and run again.")
    return found


def read(text: str, shown: str) -> Pyproject:
    """The requirements of pyproject.toml `shown` ("pyproject.toml", "main:pyproject.toml"), in the order the
    file gives them; HarnessError naming the line of anything that is not as PEP 621 and PEP 735 define it."""
    data, lines = load(text, shown), TomlLines.of(text)
    project = _table(data, "project", lines, shown, "project")
    found: list[Declared] = []

    def add(path: str, key: str, value, what: str, extra: str | None = None, group: str | None = None) -> None:
        where = f"{shown}:{lines.key(path, key)}"
        for requirement in _strings(value, where, what, groups=group is not None):
            found.append(Declared(f"{shown}:{lines.string(path, key, requirement)}", requirement, extra, group))

    add("project", "dependencies", project.get("dependencies", []), "[project] dependencies")
    extras = _table(project, "optional-dependencies", lines, shown, "project.optional-dependencies")
    for extra, value in extras.items():
        add("project.optional-dependencies", extra, value, f"[project.optional-dependencies] {extra}", extra=extra)
    for group, value in _table(data, "dependency-groups", lines, shown, "dependency-groups").items():
        add("dependency-groups", group, value, f"[dependency-groups] {group}", group=str(group))
    name = project.get("name")
    tool = _table(data, "tool", lines, shown, "tool")
    uv = _table(tool, "uv", lines, shown, "tool.uv")
    sources = _table(uv, "sources", lines, shown, "tool.uv.sources")
    return Pyproject(tuple(found), canonicalize_name(name) if isinstance(name, str) else None,
                     {canonicalize_name(k): v for k, v in sources.items()})
