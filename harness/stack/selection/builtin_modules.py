"""The built-in contract modules (harness/builtin/test_*.py) by family, read from their source (ast: the
host never imports them): the test functions each defines (a team's selection names the modules holding the
tests it takes), and whether a family needs Flax: its module, or a helper module of harness/builtin it
imports, imports flax or asks for it with pytest.importorskip."""

from __future__ import annotations

import ast
import dataclasses
import functools
from pathlib import Path

from harness.stack import paths

BUILTIN = paths.PACKAGE / "builtin"
PACKAGE = "harness.builtin"


@dataclasses.dataclass(frozen=True)
class BuiltinModule:
    name: str  # "harness.builtin.test_accumulation"
    family: str
    needs_flax: bool
    tests: frozenset[str] = frozenset()  # its test functions ("test_guide_case"), as pytest collects them


def test_functions(tree: ast.Module) -> frozenset[str]:
    """The module's top-level test functions: pytest's default `test_*` functions (the contract suite's
    pytest.ini keeps them), each one or more checks (its parametrizations); defined there, or made by a factory and
    bound to `test_*` names (`test_parameter_defaults = defaults.parameter_defaults_test("masks")`; `test_a, test_b =
    nonfinite.tests(...)`)."""
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    bound = {name.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
             for t in n.targets for name in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(name, ast.Name)}
    return frozenset(name for name in defined | bound if name.startswith("test_"))


def family_of(tree: ast.Module, path: Path) -> str:
    """The literal of `pytest.mark.family("...")` in pytestmark (alone or in a list), else the name without
    test_ (as the plugin): read from the source, since importing a contract module imports JAX."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            for call in ast.walk(node.value):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "family"
                        and call.args and isinstance(call.args[0], ast.Constant)):
                    return str(call.args[0].value)
    return path.stem.removeprefix("test_")


def _imported(tree: ast.Module) -> set[str]:
    """Dotted modules the file imports, `importorskip("...")` included."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "importorskip"
              and node.args and isinstance(node.args[0], ast.Constant)):
            found.add(str(node.args[0].value))
    return found


def _needs_flax(path: Path, folder: Path, seen: frozenset[Path] = frozenset()) -> bool:
    imported = _imported(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    if any(m == "flax" or m.startswith("flax.") for m in imported):
        return True
    helpers = {folder / f"{m.removeprefix(PACKAGE + '.')}.py" for m in imported if m.startswith(PACKAGE + ".")}
    return any(_needs_flax(h, folder, seen | {path}) for h in helpers if h.is_file() and h not in seen | {path})


def modules(folder: Path = BUILTIN) -> tuple[BuiltinModule, ...]:
    """Every built-in contract module, in file order. Parsed once per content of the folder (a project is
    loaded many times a run, and the parse of ~60 files costs 0.3 s): keyed by each file's size and time."""
    files = sorted(folder.glob("*.py"))
    return _parsed(folder, tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files))


@functools.lru_cache(maxsize=8)
def _parsed(folder: Path, signature: tuple) -> tuple[BuiltinModule, ...]:
    found = []
    for path in sorted(folder.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found.append(BuiltinModule(f"{PACKAGE}.{path.stem}", family_of(tree, path), _needs_flax(path, folder),
                                   test_functions(tree)))
    return tuple(found)
