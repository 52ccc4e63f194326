"""A pyproject.toml's requirements, each with the line it is written at: PEP 621 dependencies and optional
dependencies, PEP 735 dependency groups, checked as those PEPs define them (lists of requirement strings) so
that a malformed table is refused naming its line, and Poetry's dependency tables (harness.stack.pins.poetry_deps);
its `[project] name` (or `[tool.poetry] name`), and `[tool.uv.sources]`, which says where uv takes a dependency
from instead of the package index (a Poetry dependency says it in its own table)."""

from __future__ import annotations

import dataclasses

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack.pins import poetry_deps
from harness.stack.pins.toml_lines import TomlLines, load


@dataclasses.dataclass(frozen=True)
class Declared:
    """One requirement string, where it is ("pyproject.toml:8"), and the list that holds it."""

    where: str
    text: str
    extra: str | None = None  # in [project.optional-dependencies] EXTRA
    group: str | None = None  # in [dependency-groups] GROUP, or Poetry's group GROUP
    # A Poetry dependency: where it comes from instead of the package index ({"git": URL}, {"index": NAME}),
    # None from the index. PEP 621's say it in [tool.uv.sources] (Pyproject.sources).
    poetry_source: dict[str, str] | None = None
    poetry: bool = False  # declared in [tool.poetry.*dependencies], in Poetry's syntax
    written: str | None = None  # a Poetry dependency's line as written (`optax = "0.2.7"`): `text` is PEP 508

    @property
    def quoted(self) -> str:
        """The requirement as the file writes it."""
        return self.written or self.text


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


def _name(text: str) -> str | None:
    """The normalized name a requirement string names; None when it is not one (refused where it is read)."""
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        return None


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
    poetry = poetry_deps.read(data, lines, shown)
    # Poetry 2 reads [project] dependencies; a main-group entry of the same package only adds to it: where it comes
    # from, said on the [project] requirement.
    in_project = {name: i for i, d in enumerate(found)
                  if d.group is None and d.extra is None and (name := _name(d.text)) is not None}
    for d in poetry.dependencies:
        main = in_project.get(_name(d.text)) if d.group is None else None
        if main is not None:
            if d.source is not None:
                found[main] = dataclasses.replace(found[main], poetry_source=d.source)
            continue
        found.append(Declared(d.where, d.text, group=d.group, poetry_source=d.source, poetry=True, written=d.written))
    name = project.get("name") if isinstance(project.get("name"), str) else poetry.name
    tool = _table(data, "tool", lines, shown, "tool")
    uv = _table(tool, "uv", lines, shown, "tool.uv")
    sources = _table(uv, "sources", lines, shown, "tool.uv.sources")
    return Pyproject(tuple(found), canonicalize_name(name) if isinstance(name, str) else None,
                     {canonicalize_name(k): v for k, v in sources.items()})
