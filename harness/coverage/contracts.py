"""The ids of the contracts that exist (`family/test_name`, as reports name checks without their
parameters), read from the contract modules' source: collecting them with pytest would import JAX."""

from __future__ import annotations

import ast
from pathlib import Path

BUILTIN = Path(__file__).resolve().parents[1] / "builtin"


def _family(tree: ast.Module, path: Path) -> str:
    """The module's `pytest.mark.family("...")` in its pytestmark (alone or in a list), else its name."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            for call in ast.walk(node.value):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "family"
                        and call.args and isinstance(call.args[0], ast.Constant)):
                    return str(call.args[0].value)
    return path.stem.removeprefix("test_")


def ids(folder: Path = BUILTIN) -> set[str]:
    """`family/test_name` of every module-level test function in folder's test_*.py."""
    found = set()
    for path in sorted(folder.glob("test_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        family = _family(tree, path)
        found |= {f"{family}/{node.name}" for node in tree.body
                  if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")}
    return found
