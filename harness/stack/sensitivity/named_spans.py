"""The lines of a module outside Optax that `nox -s sensitivity` mutates: those of the functions a family
declares it pins (scope.NAMED_LINES, e.g. jax/_src/nn/functions.py: the jax.nn functions flax.nnx re-exports),
read from the installed source with `ast`, not from the coverage ledger (which lists Optax's callables only).

A named function's span runs from its first decorator to its last line; a module-level alias (`swish = silu`)
is its line. The private functions a span refers to by name (softmax's `_softmax` and its custom JVP rule,
one_hot's `_one_hot`) are in scope too, transitively: the named function's behaviour is theirs. Public
functions not named (dot_product_attention, scaled_matmul, mish, ...) and what only they use are not mutated.
"""

from __future__ import annotations

import ast
from pathlib import Path

from harness.errors import HarnessError


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node
    return found


def _span(node: ast.stmt) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return first, node.end_lineno or node.lineno


def _referenced(node: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _decorating(definitions: dict[str, ast.stmt], name: str) -> set[str]:
    """Module-level statements that attach a rule to `name` (`relu.defjvps(...)`, `@_softmax.defjvp`)."""
    return {other for other, node in definitions.items() if other.startswith("_") and any(
        isinstance(d, ast.Attribute) and isinstance(d.value, ast.Name) and d.value.id == name
        for d in getattr(node, "decorator_list", ()))}


def spans(source: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """The (first, last) lines of the named functions and of the private functions they reach, sorted; the
    module-level calls on a named function (`relu.defjvps(...)`) included. A module defining none is an error."""
    tree = ast.parse(source)
    definitions = _definitions(tree)
    todo = [n for n in names if n in definitions]
    if not todo:
        raise HarnessError(f"none of {', '.join(names)} is defined in the module: nothing to mutate")
    reached: set[str] = set()
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        found = {r for r in _referenced(definitions[name]) if r.startswith("_") and r in definitions}
        todo += sorted((found | _decorating(definitions, name)) - reached)
    lines = {_span(definitions[n]) for n in reached}
    for node in tree.body:  # `relu.defjvps(...)`: a call on a reached function at module level
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id in reached:
            lines.add(_span(node))
    return sorted(lines)


def derive(site_packages: Path, named: dict[str, tuple[str, ...]]) -> dict[str, tuple[tuple[int, int], ...]]:
    """module -> the spans of its named functions, read from the source installed in site_packages."""
    return {module: tuple(spans((site_packages / module).read_text(encoding="utf-8"), names))
            for module, names in named.items()}
