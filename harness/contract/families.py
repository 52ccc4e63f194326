"""A check's family and id, and which contract families are a project's own (from its --contracts
directories) and which are built in; one family name may not come from both, since it names one golden
file. Plain Python: the plugin uses it in every run."""

from __future__ import annotations

from pathlib import Path

import pytest


def family(item) -> str:
    marker = item.get_closest_marker("family")
    if marker:
        return marker.args[0]
    return Path(str(item.path)).stem.removeprefix("test_")


def check_id(item) -> str:
    return f"{family(item)}/{item.name}"


def in_part(tests: frozenset[str]) -> frozenset[str]:
    """The families a team's selection of built-in tests takes in part: those its ids name."""
    return frozenset(t.split("/", 1)[0] for t in tests)


def kept_builtin(item, tests: frozenset[str], partial: frozenset[str], own_families: set[str]) -> bool:
    """Whether a team's selection of built-in tests (`tests`: test ids "family/test" and check ids
    "family/test[params]"; `partial`: in_part(tests)) keeps `item`: one of the project's own families, a family
    taken whole (not in `partial`), or a test or check it lists."""
    name = family(item)
    if name in own_families or name not in partial:
        return True
    check = check_id(item)
    return check in tests or check.split("[", 1)[0] in tests


def is_own(path: Path, own_dirs: list[Path]) -> bool:
    path = path.resolve()
    return any(path.is_relative_to(d.resolve()) for d in own_dirs)


def own(items, own_dirs: list[Path], builtin_golden: Path | None = None) -> set[str]:
    """The families of the items collected from the project's own contract directories. A built-in
    family's name is taken even when the built-in contracts do not run: `builtin_golden` (the tool's own
    golden values) holds a file of that name, which an own family's values must never be read from."""
    if not own_dirs:
        return set()
    mine: dict[str, Path] = {}
    theirs: dict[str, Path] = {}
    for item in items:
        path = Path(str(item.path))
        (mine if is_own(path, own_dirs) else theirs).setdefault(family(item), path)
    if builtin_golden is not None:
        for name in mine:
            shipped = builtin_golden / f"{name}.json"
            if shipped.exists():
                theirs.setdefault(name, shipped)
    clash = sorted(set(mine) & set(theirs))
    if clash:
        name = clash[0]
        raise pytest.UsageError(
            f"contract family {name!r} comes from both {mine[name]} and {theirs[name]}: one family is one golden "
            f"file. Rename your module, or give it its own family: pytestmark = pytest.mark.family(\"my_{name}\").")
    return set(mine)
