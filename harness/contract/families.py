"""A check's family and id, and which contract families are a project's own (from its --contracts
directories) and which are built in. Two families may share a name (a team's `contracts/test_training.py`
beside the built-in training family): they stay two families, each with its golden file
(harness.golden_layout), and the report marks each own check. Plain Python: the plugin uses it in every run."""

from __future__ import annotations

import dataclasses
from pathlib import Path
import pytest

from harness import builtin_families, golden_layout


@dataclasses.dataclass(frozen=True, order=True)
class Family:
    """A contract family as its golden values are kept: one of the project's own, or a built-in one."""

    name: str
    own: bool = False


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


def kept_builtin(item, tests: frozenset[str], partial: frozenset[str], own_dirs: list[Path]) -> bool:
    """Whether a team's selection of built-in tests (`tests`: test ids "family/test" and check ids
    "family/test[params]"; `partial`: in_part(tests)) keeps `item`: one of the project's own contracts (from
    `own_dirs`, whatever its family's name), a family taken whole (not in `partial`), or a test or check it lists."""
    name = family(item)
    if is_own(Path(str(item.path)), own_dirs) or name not in partial:
        return True
    check = check_id(item)
    return check in tests or check.split("[", 1)[0] in tests


def is_own(path: Path, own_dirs: list[Path]) -> bool:
    path = path.resolve()
    return any(path.is_relative_to(d.resolve()) for d in own_dirs)


def of_item(item, own_dirs: list[Path]) -> Family:
    return Family(family(item), is_own(Path(str(item.path)), own_dirs))


@dataclasses.dataclass(frozen=True)
class GoldenPlaces:
    """Where a run reads golden files: the project's directory, and the tool's own values of the built-in families
    (None: this checkout, whose directory holds them)."""

    directory: Path
    fallback: Path | None


def own(items, own_dirs: list[Path], golden: GoldenPlaces | None = None) -> set[str]:
    """The families of the items collected from the project's own contract directories. Refused, with the
    fix: an own check with a built-in check's id (one id is one line of the verdict), and an own family whose
    golden file would be another's (`golden`: where the run reads them)."""
    if not own_dirs:
        return set()
    mine: dict[str, Path] = {}
    theirs: dict[str, Path] = {}
    for item in items:
        path = Path(str(item.path))
        (mine if is_own(path, own_dirs) else theirs).setdefault(check_id(item), path)
    for clash in sorted(set(mine) & set(theirs)):
        name, test = clash.split("/", 1)
        raise pytest.UsageError(
            f"check {clash} is both yours ({mine[clash]}) and built in ({theirs[clash]}): one id is one line of "
            f"the verdict. Rename your test ({test}), or give your module another family: "
            f"pytestmark = pytest.mark.family(\"my_{name}\").")
    names = {i.split("/", 1)[0] for i in mine}
    for name in sorted(names):
        if golden is not None and (problem := _golden_file_problem(golden, name)):
            raise pytest.UsageError(problem)
    return names


def _golden_file_problem(golden: GoldenPlaces, name: str) -> str | None:
    """Why the own family `name` cannot have the golden file golden/<name>.json; None when it can."""
    if name not in builtin_families.BY_NAME:
        return None
    mine = golden_layout.own_file(golden.directory, name)
    if golden.fallback is None:  # this checkout: golden/ holds the built-in families themselves
        return (f"contract family {name!r} is a built-in family's name, and in this checkout {mine} holds that "
                f"family's values: give your module another family: pytestmark = pytest.mark.family(\"my_{name}\").")
    earlier = golden_layout.earlier_copy(golden.directory, name)
    shipped = golden_layout.keys(golden.fallback / f"{name}.json")
    if earlier is None or not golden_layout.keys(earlier) or not golden_layout.keys(earlier) <= shipped:
        return None  # no file yet, or your own family's (its keys are not the built-in family's)
    copy = golden_layout.builtin_copy(golden.directory, name)
    fix = (f"it is superseded by {copy}: remove it (`git rm {earlier}`)" if copy.exists() else
           f"move it where copies go now (`mkdir -p {copy.parent} && git mv {earlier} {copy}`)")
    return (f"{earlier} holds your copy of the built-in family {name!r} (recorded with `upgrade-harness golden "
            f"--record-builtin` before copies had a folder of their own), and your own family {name!r} would "
            f"record into it; {fix}, then record your own with `upgrade-harness golden`.")
