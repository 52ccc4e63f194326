"""A team's own package named `harness` would hide the tool's: the contract run (pytest started from
the project's root, with the table's pythonpath first on sys.path) and the `upgrade-harness` command's
nox sessions would import the team's package where they need the tool's, and fail far from the cause.
Found before anything runs, and said with the fix."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.stack import paths

NAME = "harness"


def shadowing(directory: Path) -> Path | None:
    """The module or regular package named `harness` in `directory` that is not the tool itself. A
    directory without __init__.py is a namespace portion, which a regular package later on the path wins over."""
    package, module = directory / NAME, directory / f"{NAME}.py"
    if (package / "__init__.py").is_file() and package.resolve() != paths.PACKAGE:
        return package
    return module if module.is_file() else None


def check(root: Path, pythonpath: tuple[Path, ...], table: str) -> None:
    """HarnessError naming the team's `harness` and the fix, when the project root or its pythonpath has one."""
    for directory in dict.fromkeys([root, *pythonpath]):
        found = shadowing(directory)
        if found is None:
            continue
        why = ("the contract run starts in your project's root, whose modules come first on its import path"
               if directory == root else f"[tool.{table}] pythonpath puts {directory} first on the contracts' import path")
        raise HarnessError(
            f"{found} is a package named `{NAME}`, the name of upgrade-harness's own package: {why}, so the tool's "
            f"plugin and sessions would import yours instead of theirs. Rename yours (e.g. `{root.name.replace('-', '_')}"
            f"_{NAME}`, and its imports), or move it out of {directory}"
            + (" and keep pythonpath pointing at your training code" if directory != root else "") + ".")
