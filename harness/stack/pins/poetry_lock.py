"""A poetry.lock, read as the entries need it: every [[package]] checked where it is written (a name, a PEP 440
version, its groups, a marker that reads, a source Poetry writes), so that a damaged or hand-edited lock is
refused naming its line rather than failing deep inside a run; and the packages the team installs, each with the
environment marker under which it does.

What the team installs is what `poetry install --all-groups --all-extras` would: every package of the lock,
each where the lock's `markers` say (by group: the package is installed where the marker of any of its groups
holds; a group without a marker, everywhere). A marker on an extra holds, as with every extra. The lock says
this from lock-version 2.1 on (Poetry 2); an older lock, which leaves it to be worked out from the dependencies,
is refused with the fix (re-lock with Poetry 2).
"""

from __future__ import annotations

import dataclasses

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from harness.errors import HarnessError
from harness.stack.pins import lock_entries
from harness.stack.pins.matrix import PACKAGES
from harness.stack.pins.requirement_files import Outside
from harness.stack.pins.toml_lines import TomlLines, load

FILE = "poetry.lock"
RELOCK_COMMAND = "poetry lock"
RELOCK = f"restore it (`git checkout -- poetry.lock`) or re-lock with `{RELOCK_COMMAND}`"
MARKED_BY_GROUP = Version("2.1")  # the lock-version from which each package says its groups and markers
SOURCE_TYPES = ("legacy", "git", "directory", "file", "url")


@dataclasses.dataclass(frozen=True)
class Locked:
    """One [[package]] of the lock: its name (normalized), version, where (`poetry.lock:312`, its version's line),
    where it comes from when not the package index (`{"legacy": URL}`, `{"git": URL}`), and the marker under
    which the team installs it (None: everywhere)."""

    name: str
    version: str
    where: str
    source: dict[str, str] | None
    source_where: str
    marker: str | None


def _bad(shown: str, line: int, what: str) -> HarnessError:
    return HarnessError(f"{shown}:{line}: {what}; {RELOCK}.")


def read(text: str, shown: str) -> list[Locked]:
    """Every [[package]] of the lock `shown` ("poetry.lock", "main:poetry.lock"); HarnessError naming its line
    and what is wrong when one is not as Poetry writes it."""
    data, lines = load(text, shown), TomlLines.of(text)
    metadata = data.get("metadata", {})
    raw = metadata.get("lock-version") if isinstance(metadata, dict) else None
    try:
        lock_version = Version(str(raw))
    except InvalidVersion:
        raise _bad(shown, lines.key("metadata", "lock-version"), f"[metadata] lock-version {raw!r} is not one "
                   "Poetry writes") from None
    if lock_version < MARKED_BY_GROUP:
        raise HarnessError(f"{shown}:{lines.key('metadata', 'lock-version')}: lock-version {raw} was written by "
                           f"Poetry 1, whose lock does not say under which markers each package is installed; "
                           "re-lock with Poetry 2 (`poetry lock`), or give --baseline-from a requirements file "
                           "(`poetry export` writes one).")
    packages = data.get("package", [])
    if not isinstance(packages, list) or not all(isinstance(p, dict) for p in packages):
        raise _bad(shown, lines.key("", "package"), "`package` is not a list of [[package]] tables")
    return [_package(entry, index, lines, shown) for index, entry in enumerate(packages)]


def _package(entry: dict, index: int, lines: TomlLines, shown: str) -> Locked:
    at = lambda key: lines.key("package", key, index)  # noqa: E731
    bad = lambda line, what: _bad(shown, line, what)  # noqa: E731
    name = lock_entries.name_of(entry.get("name"), at("name"), bad)
    version = lock_entries.check_version(name, entry.get("version"), at("version"), bad)
    groups = entry.get("groups")
    if not isinstance(groups, list) or not groups or not all(isinstance(g, str) for g in groups):
        raise _bad(shown, at("groups") if "groups" in entry else lines.table("package", index),
                   f"{name}'s groups {groups!r} are not a list of group names")
    source = entry.get("source")
    source_where = f"{shown}:{lines.table('package.source', index)}" if source is not None else f"{shown}:{at('name')}"
    if source is not None:
        kind = source.get("type") if isinstance(source, dict) else None
        if kind not in SOURCE_TYPES or not isinstance(source.get("url"), str):
            raise HarnessError(f"{source_where}: {name}'s source {source!r} is not one Poetry writes (a type, one "
                               f"of {', '.join(SOURCE_TYPES)}, and a url); {RELOCK}.")
        source = {kind: source["url"]}
    return Locked(name, version, f"{shown}:{at('version')}", source, source_where,
                  _marker(entry.get("markers"), groups, name, shown, at("markers")))


def _marker(markers, groups: list[str], name: str, shown: str, line: int) -> str | None:
    """The marker under which the package is installed with every group and extra: None when it always is."""
    from poetry.core.version.markers import InvalidMarkerError, parse_marker

    if markers is None:
        return None
    if isinstance(markers, str):
        by_group = [markers]
    elif isinstance(markers, dict) and all(isinstance(m, str) for m in markers.values()):
        if any(group not in markers for group in groups):
            return None  # a group without a marker: everywhere
        by_group = list(markers.values())
    else:
        raise _bad(shown, line, f"{name}'s markers {markers!r} are not a marker or a table of them by group")
    try:
        found = parse_marker(" or ".join(f"({m})" for m in by_group)).without_extras()
    except InvalidMarkerError as exc:
        raise _bad(shown, line, f"{name}'s markers {markers!r} are not environment markers "
                                f"({str(exc).splitlines()[0]})") from None
    return None if found.is_any() else str(found)


def team_set(packages: list[Locked], shown: str) -> tuple[dict[str, str], tuple[str, ...], list[Outside]]:
    """The harness's packages at their locked versions, every other package as a requirement line
    (`pywin32==306; sys_platform == "win32"`), and the packages from outside the package index (refused unless
    the table ignores them; then another index's package is installed from the index uv uses, a git, path or URL
    one not at all). One of the harness's packages from elsewhere, or at two versions, is refused here."""
    stack: dict[str, list[tuple[str, str]]] = {}  # name -> (version, where)
    others: dict[str, list[Locked]] = {}
    outside: list[Outside] = []
    for package in packages:
        kind = next(iter(package.source)) if package.source else None
        if package.name in PACKAGES:
            if kind not in (None, "legacy"):
                lock_entries.refuse_stack_from_elsewhere(package.source_where, package.name, package.source)
            stack.setdefault(package.name, []).append((package.version, package.where))
        elif kind not in (None, "legacy"):
            outside.append(lock_entries.from_source(package.source_where, package.name, kind, package.source[kind]))
            continue
        else:
            others.setdefault(package.name, []).append(package)
        if kind == "legacy":
            outside.append(lock_entries.from_other_index(package.source_where, package.name, package.version,
                                                         package.source[kind]))
    pins = lock_entries.stack_pins(shown, stack)
    lock_entries.refuse_twice_everywhere(
        shown, {name: [p.where for p in versions if p.marker is None] for name, versions in others.items()}, RELOCK)
    lines = sorted(str(Requirement(f"{p.name}=={p.version}" + (f"; {p.marker}" if p.marker else "")))
                   for versions in others.values() for p in versions)
    return pins, tuple(lines), outside
