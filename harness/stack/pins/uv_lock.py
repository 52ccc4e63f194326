"""A uv.lock, read as the entries need it: every [[package]] checked where it is written (a name, a PEP 440
version, a source uv writes, dependencies whose markers read), so that a damaged or hand-edited lock is refused
naming its line rather than failing deep inside a run; and the packages its project installs, each with the
environment marker under which it does (the lock is universal: `pywin32` only on Windows).

What the project installs is what `uv sync --all-extras --all-groups` would: the lock's own projects (its
editable and virtual packages: the team's code, which the contracts import from `pythonpath`) with every extra
and dependency group, and what they need, following each dependency's marker. A lock without a project of its
own installs every package it holds.
"""

from __future__ import annotations

import dataclasses

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack.pins import lock_entries
from harness.stack.pins.matrix import PACKAGES
from harness.stack.pins.requirement_files import Outside
from harness.stack.pins.toml_lines import TomlLines, load

PYPI = "https://pypi.org/simple"
SOURCE_KINDS = ("registry", "editable", "virtual", "directory", "path", "git", "url")
OWN_KINDS = ("editable", "virtual")  # the lock's own workspace: the team's project
_MAX_WAYS = 16  # past this many ways to reach a package, its marker is taken as "everywhere" (an over-estimate)
RELOCK = "restore it (`git checkout -- uv.lock`) or re-lock with `uv lock`"


@dataclasses.dataclass(frozen=True)
class Edge:
    """One dependency of a package, as the lock writes it:
    `{ name = "colorama", marker = "sys_platform == 'win32'" }`."""

    name: str
    version: str | None  # written when the lock holds the package at several versions
    marker: str | None
    extras: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Package:
    name: str  # normalized
    version: str | None  # None only for a project of the lock's own with a dynamic version
    source: dict[str, str]
    where: str  # "uv.lock:312": its version's line (its name's when it has none)
    source_where: str
    dependencies: tuple[Edge, ...] = ()
    optional: dict[str, tuple[Edge, ...]] = dataclasses.field(default_factory=dict)  # by extra
    groups: dict[str, tuple[Edge, ...]] = dataclasses.field(default_factory=dict)  # dependency groups

    @property
    def kind(self) -> str:
        return next(iter(self.source))

    @property
    def own(self) -> bool:
        """A package of the lock's own workspace: the team's project, never installed by the harness."""
        return self.kind in OWN_KINDS


@dataclasses.dataclass(frozen=True)
class Installed:
    """A package the lock's project installs, and where: None everywhere, else its environment marker."""

    package: Package
    marker: str | None


def read(text: str, shown: str) -> list[Package]:
    """Every [[package]] of the lock `shown` ("uv.lock", "main:uv.lock"); HarnessError naming its line and
    what is wrong when one is not as uv writes it."""
    data, lines = load(text, shown), TomlLines.of(text)
    packages = data.get("package", [])
    if not isinstance(packages, list) or not all(isinstance(p, dict) for p in packages):
        raise HarnessError(f"{shown}:{lines.key('', 'package')}: `package` is not a list of [[package]] tables; "
                           f"{RELOCK}.")
    return [_package(entry, index, lines, shown) for index, entry in enumerate(packages)]


def _bad(shown: str, line: int, what: str) -> HarnessError:
    return HarnessError(f"{shown}:{line}: {what}; {RELOCK}.")


def _package(entry: dict, index: int, lines: TomlLines, shown: str) -> Package:
    at = lambda key: lines.key("package", key, index)  # noqa: E731
    bad = lambda line, what: _bad(shown, line, what)  # noqa: E731
    name = lock_entries.name_of(entry.get("name"), at("name"), bad)
    source = entry.get("source", {"registry": PYPI})
    if (not isinstance(source, dict) or len([k for k in source if k in SOURCE_KINDS]) != 1
            or not all(isinstance(v, str) for k, v in source.items() if k in SOURCE_KINDS)):
        raise _bad(shown, at("source"), f"{name}'s source {source!r} is not one uv writes (one of "
                                        f"{', '.join(SOURCE_KINDS)}, naming where it comes from)")
    kind = next(k for k in source if k in SOURCE_KINDS)
    version = entry.get("version")
    if version is None and kind == "registry":
        raise _bad(shown, lines.table("package", index), f"{name} has no version")
    if version is not None:
        lock_entries.check_version(name, version, at("version"), bad)
    where = f"{shown}:{at('version') if version is not None else at('name')}"
    return Package(name, version, {kind: source[kind]}, where, f"{shown}:{at('source')}",
                   _edges(entry.get("dependencies", []), lines, shown, "package", "dependencies", index, name),
                   _edge_tables(entry, "optional-dependencies", lines, shown, index, name),
                   _edge_tables(entry, "dev-dependencies", lines, shown, index, name))


def _edge_tables(entry: dict, key: str, lines: TomlLines, shown: str, index: int,
                 name: str) -> dict[str, tuple[Edge, ...]]:
    tables = entry.get(key, {})
    if not isinstance(tables, dict):
        raise _bad(shown, lines.key("package", key, index), f"{name}'s {key} is not a table of lists")
    return {group: _edges(edges, lines, shown, f"package.{key}", group, index, name)
            for group, edges in tables.items()}


def _edges(edges, lines: TomlLines, shown: str, table: str, key: str, index: int, name: str) -> tuple[Edge, ...]:
    if not isinstance(edges, list):
        raise _bad(shown, lines.key(table, key, index), f"{name}'s {key} is not a list of dependencies")
    found = []
    for edge in edges:
        target = edge.get("name") if isinstance(edge, dict) else None
        line = lines.within(table, key, f'name = "{target}"', index) if isinstance(target, str) else \
            lines.key(table, key, index)
        if not isinstance(target, str) or not lock_entries.NAME.match(target):
            raise _bad(shown, line, f"a dependency of {name} ({edge!r}) does not name a package")
        marker, version, extras = edge.get("marker"), edge.get("version"), edge.get("extra", [])
        if marker is not None:
            try:
                marker = str(Marker(marker)) if isinstance(marker, str) else None
            except InvalidMarker as exc:
                raise _bad(shown, line, f"the marker of {name}'s dependency {target} ({edge['marker']!r}) is not an "
                                        f"environment marker ({str(exc).splitlines()[0]})") from None
            if marker is None:
                raise _bad(shown, line, f"the marker of {name}'s dependency {target} is not a string")
        if version is not None and not isinstance(version, str):
            raise _bad(shown, line, f"{name}'s dependency {target} names version {version!r}, not a version string")
        if not isinstance(extras, list) or not all(isinstance(e, str) for e in extras):
            raise _bad(shown, line, f"{name}'s dependency {target} names extras {extras!r}, not a list of names")
        found.append(Edge(canonicalize_name(target), version, marker, tuple(extras)))
    return tuple(found)


def installed(packages: list[Package]) -> list[Installed]:
    """What the lock's own projects install, with all their extras and dependency groups, in the lock's order,
    each with the marker under which some chain of dependencies from a project reaches it (None: one always
    does). A lock without a project of its own: every package, everywhere."""
    if not any(p.own for p in packages):
        return [Installed(p, None) for p in packages]
    by_name: dict[str, list[int]] = {}
    for i, package in enumerate(packages):
        by_name.setdefault(package.name, []).append(i)
    # For each (package, extra or None): the ways to reach it, each the set of markers met on the way (all must
    # hold), without a way that holds whenever a shorter one does.
    ways: dict[tuple[int, str | None], set[frozenset[str]]] = {}
    work: list[tuple[int, str | None, frozenset[str]]] = []

    def reach(i: int, extra: str | None, way: frozenset[str]) -> None:
        found = ways.setdefault((i, extra), set())
        if any(known <= way for known in found):
            return
        found.difference_update({known for known in found if way <= known})
        found.add(way)
        if len(found) > _MAX_WAYS:
            found.clear()
            found.add(way := frozenset())
        work.append((i, extra, way))

    for i, package in enumerate(packages):
        if package.own:
            reach(i, None, frozenset())
    while work:
        i, extra, way = work.pop()
        if way not in ways[(i, extra)]:
            continue  # a shorter way came since
        package = packages[i]
        if extra is not None:
            edges = package.optional.get(extra, ())
        elif package.own:
            edges = package.dependencies + tuple(e for es in [*package.optional.values(), *package.groups.values()]
                                                 for e in es)
        else:
            edges = package.dependencies
        for edge in edges:
            further = way | {edge.marker} if edge.marker else way
            for target in by_name.get(edge.name, []):
                if edge.version is None or packages[target].version == edge.version:
                    reach(target, None, further)
                    for wanted in edge.extras:
                        reach(target, wanted, further)
    return [Installed(p, _marker(ways[(i, None)])) for i, p in enumerate(packages) if (i, None) in ways]


def _marker(found: set[frozenset[str]]) -> str | None:
    """The markers of the ways in, as one: None when a way needs none."""
    if frozenset() in found:
        return None
    alternatives = sorted(" and ".join(f"({m})" for m in sorted(way)) for way in found)
    return str(Marker(" or ".join(f"({a})" for a in alternatives) if len(alternatives) > 1 else alternatives[0]))


def team_set(packages: list[Package], shown: str) -> tuple[dict[str, str], tuple[str, ...], list[Outside]]:
    """The harness's packages at their locked versions, every other package the lock's project installs as a
    requirement line (`pywin32==306; sys_platform == "win32"`), and the packages from outside the package index
    (refused unless the table ignores them; then a registry's package is installed from the index uv uses, a
    git, path or URL one not at all). One of the harness's packages from elsewhere, or at two versions, is
    refused here."""
    stack: dict[str, list[tuple[str, str]]] = {}  # name -> (version, where)
    outside: list[Outside] = []
    for package in packages:
        if package.name in PACKAGES:
            if package.kind != "registry":
                lock_entries.refuse_stack_from_elsewhere(package.source_where, package.name, package.source)
            outside += _registry(package)
            stack.setdefault(package.name, []).append((str(package.version), package.where))
    others: dict[str, list[tuple[str, str | None, str]]] = {}  # name -> (line, marker, where)
    for item in installed(packages):
        package = item.package
        if package.name in PACKAGES or package.own:
            continue
        if package.kind != "registry":
            outside.append(lock_entries.from_source(package.source_where, package.name, package.kind,
                                                    package.source[package.kind]))
            continue
        outside += _registry(package)
        line = f"{package.name}=={package.version}" + (f"; {item.marker}" if item.marker else "")
        others.setdefault(package.name, []).append((str(Requirement(line)), item.marker, package.where))
    pins = lock_entries.stack_pins(shown, stack)
    lock_entries.refuse_twice_everywhere(
        shown, {name: [where for _, marker, where in lines if marker is None] for name, lines in others.items()}, RELOCK)
    return pins, tuple(sorted(line for lines in others.values() for line, _, _ in lines)), outside


def _registry(package: Package) -> list[Outside]:
    """Another registry than the package index, as a line outside it."""
    registry = package.source.get("registry", PYPI)
    if registry.rstrip("/") == PYPI:
        return []
    return [lock_entries.from_other_index(package.source_where, package.name, package.version, registry)]
