"""The lines of the in-scope callables in a module: what `nox -s sensitivity` mutates in a module that holds public
code outside the scope too (harness.stack.sensitivity.scope.IN_SCOPE_LINES_ONLY), in Optax, Flax or JAX alike.

    python -m harness.coverage.spans SITE_PACKAGES MODULE...   prints {module: [[first, last], ...]}

The callables come from the coverage ledger (its in-scope names), their lines from the library's source (griffe,
the library the module lies in): a function from its first decorator to its last line, nested functions included;
a class with its methods. What such a callable's behaviour is made of in the same module comes with it, read with
`ast`: the module's private functions it refers to by name (softmax's `_softmax`, scale_gradient's
`_scale_gradient`), transitively, and the module-level statements that attach a rule to one of them
(`relu.defjvps(...)`, `_scale_gradient.defvjp(fwd, bwd)`, a `@_softmax.defjvp` function), with what those name.
The public functions outside the scope, and what only they use, are not mutated.
The sensitivity run calls this as a command: the host side's layers put the ledger above it.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from harness.coverage import ledger, libraries, surface
from harness.errors import HarnessError


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    """The module's top-level functions and classes by name."""
    return {node.name: node for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _span(node: ast.stmt) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return first, node.end_lineno or node.lineno


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _attached_to(node: ast.stmt) -> str | None:
    """The name a module-level statement attaches a rule to: `relu.defjvps(...)` -> relu; a function decorated
    `@_softmax.defjvp` -> _softmax."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
            and isinstance(node.value.func.value, ast.Name):
        return node.value.func.value.id
    for decorator in getattr(node, "decorator_list", ()):
        if isinstance(decorator, ast.Attribute) and isinstance(decorator.value, ast.Name):
            return decorator.value.id
    return None


def reached(source: str, names: set[str]) -> list[tuple[int, int]]:
    """The spans of what the named top-level functions reach in the module (private functions they name, and
    the statements attaching rules to any of these, transitively), the named functions' own spans left out."""
    tree = ast.parse(source)
    definitions = _definitions(tree)
    rules = [node for node in tree.body if _attached_to(node) in definitions]
    seen = {n for n in names if n in definitions}
    todo, found = sorted(seen), set()
    while todo:
        name = todo.pop()
        for node in [definitions[name], *(r for r in rules if _attached_to(r) == name)]:
            found.add(_span(node))
            more = {n for n in _names(node) if n.startswith("_") and n in definitions} - seen
            seen |= more
            todo += sorted(more)
    return sorted(found - {_span(definitions[n]) for n in names if n in definitions})


def spans(found: surface.Surface, entries: ledger.Ledger, modules: list[str]) -> dict[str, list[tuple[int, int]]]:
    """module -> the (first, last) lines of each in-scope callable defined there and of what it reaches, in
    order. A module that defines none is an error: restricting it would leave nothing to mutate."""
    by_name = found.by_any_name()
    lines: dict[str, set[tuple[int, int]]] = {module: set() for module in modules}
    defined: dict[str, set[str]] = {module: set() for module in modules}
    for name in entries.in_scope:
        callable_ = by_name.get(name)
        if callable_ is not None and callable_.file in lines:
            lines[callable_.file].add(callable_.lines)
            defined[callable_.file].add(callable_.target.rsplit(".", 1)[-1])
    empty = [module for module, found_lines in lines.items() if not found_lines]
    if empty:
        raise HarnessError(f"{', '.join(empty)} defines no in-scope callable of {entries.path}; remove it from "
                           "harness/stack/sensitivity/scope.py IN_SCOPE_LINES_ONLY (or from MODULES)")
    for module, names in defined.items():
        lines[module].update(reached((found.source / module).read_text(encoding="utf-8"), names))
    return {module: sorted(found_lines) for module, found_lines in lines.items()}


def of_libraries(site: Path, entries: ledger.Ledger, modules: list[str]) -> dict[str, list[tuple[int, int]]]:
    """spans() of modules from any of the ledger's libraries, each read with its own library's surface."""
    by_package: dict[str, list[str]] = {}
    for module in modules:
        by_package.setdefault(module.split("/", 1)[0], []).append(module)
    unknown = sorted(set(by_package) - set(libraries.BY_PACKAGE))
    if unknown:
        raise HarnessError(f"{', '.join(unknown)}: not a library of the coverage ledger (harness.coverage.libraries)")
    found: dict[str, list[tuple[int, int]]] = {}
    for package, mods in by_package.items():
        library = libraries.BY_PACKAGE[package]
        found.update(spans(surface.load(site, library), entries.of(package), mods))
    return {module: found[module] for module in modules}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    site, *modules = argv
    try:
        found = of_libraries(Path(site), ledger.read(), modules)
    except HarnessError as exc:
        print(f"spans: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
