"""The ids of the contracts that exist (`family/test_name`, as reports name checks without their
parameters), read from the contract modules' source: collecting them with pytest would import JAX."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.stack.selection import builtin_modules
from harness.stack.selection.builtin_modules import family_of

BUILTIN = Path(__file__).resolve().parents[1] / "builtin"


def ids(folder: Path = BUILTIN) -> set[str]:
    """`family/test_name` of every module-level test function in folder's test_*.py."""
    found = set()
    for path in sorted(folder.glob("test_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        family = family_of(tree, path)
        found |= {f"{family}/{name}" for name in builtin_modules.test_functions(tree)}
    return found
