"""Which library names a project's Python files use, read statically (ast): `optax.MultiSteps(...)`,
`jnp.zeros`, `nnx.Optimizer`, `from optax import MultiSteps`. Each top-level function of a file is
credited with the names it reaches: its own, and those of the file's other top-level functions and
assignments it refers to (a test's parametrize cases, helpers), and of helpers in other scanned files.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from pathlib import Path

LIBRARIES = ("optax", "flax", "jax")


@dataclasses.dataclass(frozen=True)
class FileUse:
    """One file: per top-level name, the library names it uses (with lines) and the names it refers to."""

    path: Path
    module: str  # the file's dotted module name under its root ("harness.builtin.nnx_compat")
    uses: dict[str, dict[str, int]]  # top-level name ("<module>" for loose statements) -> name -> first line
    refs: dict[str, set[tuple[str, str]]]  # top-level name -> (module, top-level name) it refers to
    imported: frozenset[str] = frozenset()  # every dotted name the file imports ("flax.nnx", "optax")


def _imports(tree: ast.Module, module: str) -> dict[str, tuple[str, bool]]:
    """Local name -> (dotted name it stands for, whether it is a module imported whole)."""
    table: dict[str, tuple[str, bool]] = {}
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                table[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], True)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            for a in node.names:
                table[a.asname or a.name] = (f"{base}.{a.name}", False)
    return table


class _Visitor(ast.NodeVisitor):
    def __init__(self, table: dict[str, tuple[str, bool]], tops: set[str], module: str,
                 libraries: tuple[str, ...] = LIBRARIES) -> None:
        self.table, self.tops, self.module, self.libraries = table, tops, module, libraries
        self.uses: dict[str, int] = {}
        self.refs: set[tuple[str, str]] = set()

    def _dotted(self, node: ast.AST) -> list[str] | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None

    def _name(self, parts: list[str], line: int) -> bool:
        found = self.table.get(parts[0])
        if found is None:
            if parts[0] in self.tops and len(parts) == 1:
                self.refs.add((self.module, parts[0]))
            return False
        dotted, whole = found
        full = ".".join([dotted, *parts[1:]])
        if dotted.split(".")[0] in self.libraries and (len(parts) > 1 or not whole):
            self.uses.setdefault(full, line)
            return True
        self.refs.add((dotted, parts[1]) if len(parts) > 1 and whole else tuple(dotted.rsplit(".", 1)))
        return False

    def visit_Attribute(self, node: ast.Attribute) -> None:
        parts = self._dotted(node)
        if parts is None or not self._name(parts, node.lineno):
            self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        self._name([node.id], node.lineno)


def scan_file(path: Path, module: str, libraries: tuple[str, ...] = LIBRARIES) -> FileUse:
    """The names of `libraries` each top-level definition of the file at `path` uses."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    table = _imports(tree, module)
    tops = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    tops |= {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
             for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    uses: dict[str, dict[str, int]] = {}
    refs: dict[str, set[tuple[str, str]]] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names = [getattr(node, "name", None)] if hasattr(node, "name") else [
            t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)]
        visitor = _Visitor(table, tops, module, libraries)
        visitor.visit(node)
        for name in names or ["<module>"]:
            uses.setdefault(name, {}).update(visitor.uses)
            refs.setdefault(name, set()).update(visitor.refs)
    return FileUse(path, module, uses, refs, frozenset(dotted for dotted, _ in table.values()))


def reached(files: list[FileUse], module: str, name: str) -> dict[str, int]:
    """The library names `module`'s top-level `name` uses, itself or through what it refers to."""
    by_module = {f.module: f for f in files}
    found: dict[str, int] = {}
    todo, seen = [(module, name)], set()
    while todo:
        key = todo.pop()
        if key in seen or key[0] not in by_module:
            continue
        seen.add(key)
        f = by_module[key[0]]
        for used, line in f.uses.get(key[1], {}).items():
            found.setdefault(used, line)
        todo += sorted(f.refs.get(key[1], set())) + [(key[0], "<module>")]
    return found


def python_files(root: Path, skip: tuple[Path, ...] = ()) -> list[Path]:
    """The .py files under `root`, less hidden folders, virtual environments and `skip`: those folders are
    not walked at all (a project's .nox/ holds tens of thousands of files)."""
    found, linked = [], set()
    for folder, dirs, files in os.walk(root, followlinks=True):  # symlinked folders are read...
        here, real = Path(folder), Path(os.path.realpath(folder))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (here / d / "pyvenv.cfg").exists()
                         and not any((here / d).is_relative_to(s) for s in skip)
                         and not real.is_relative_to(os.path.realpath(here / d))  # ...but never one around us,
                         and _first_link(here / d, linked))  # nor one entered through a link before (a loop)
        found += [here / f for f in files if f.endswith(".py") and not any((here / f).is_relative_to(s) for s in skip)]
    return sorted(found)


def _first_link(folder: Path, linked: set[str]) -> bool:
    """A folder to walk: a plain one, or a link to a folder no link has led to yet."""
    if not folder.is_symlink():
        return True
    target = os.path.realpath(folder)
    if target in linked:
        return False
    linked.add(target)
    return True


def scan(root: Path, files: list[Path], libraries: tuple[str, ...] = LIBRARIES) -> list[FileUse]:
    """Every file, named as a module under `root`; a file Python cannot parse is skipped."""
    scanned = []
    for path in files:
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        try:
            scanned.append(scan_file(path, module, libraries))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
    return scanned
