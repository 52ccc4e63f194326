"""The baseline's and an entry's public API compared: griffe's breaking changes (griffe.find_breaking_changes:
names removed, parameters removed, made required, made keyword-only, moved, defaults changed) plus what
griffe does not call breaking (names, modules and parameters added), each said at its public name.
"""

from __future__ import annotations

import griffe

from harness.model.api_diff import ApiChange, ApiChangeKind as K
from harness.stack.api import surface
from harness.stack.api.surface import Surface

_BREAKAGES = {
    griffe.BreakageKind.OBJECT_REMOVED: K.REMOVED,
    griffe.BreakageKind.PARAMETER_REMOVED: K.PARAMETER_REMOVED,
    griffe.BreakageKind.PARAMETER_ADDED_REQUIRED: K.PARAMETER_REQUIRED,
    griffe.BreakageKind.PARAMETER_CHANGED_REQUIRED: K.PARAMETER_REQUIRED,
    griffe.BreakageKind.PARAMETER_CHANGED_KIND: K.KEYWORD_ONLY,
    griffe.BreakageKind.PARAMETER_MOVED: K.PARAMETER_MOVED,
    griffe.BreakageKind.PARAMETER_CHANGED_DEFAULT: K.DEFAULT_CHANGED,
    griffe.BreakageKind.OBJECT_CHANGED_KIND: K.KIND_CHANGED,
}
_SIGNATURE = ("__init__", "__call__")  # a class's parameters are its constructor's (or its call's)


def is_test_module(path: str) -> bool:
    """A package's own tests (optax ships `optax_test.py`, `*_test.py`): not API."""
    return any(p.endswith("_test") or p.startswith("test_") or p == "tests" for p in path.split("."))


def user_name(path: str) -> str:
    """`optax.MultiSteps.__init__` is said `optax.MultiSteps`: its parameters are the class's."""
    head, _, last = path.rpartition(".")
    return head if last == "__init__" else path


def parameter_doc(function: griffe.Object, name: str) -> str:
    """The docstring's words for parameter `name` (Google style, as optax and flax write them)."""
    if not function.docstring:
        return ""
    for section in function.docstring.parse(griffe.Parser.google, warnings=False):
        if section.kind == griffe.DocstringSectionKind.parameters:
            for item in section.value:
                if item.name == name:
                    return " ".join(item.description.split())
    return ""


def _public(path: str, old: Surface, new: Surface) -> str:
    return new.public_path(path) or old.public_path(path) or path


def _breakage(b: griffe.Breakage, old: Surface, new: Surface, package: str) -> ApiChange | None:
    kind = _BREAKAGES.get(b.kind)
    if kind is None:
        return None
    if kind == K.REMOVED:
        target = surface.resolve(b.obj)
        path = b.obj.path if b.obj.is_alias or target is None else _public(target.path, old, old)
        if target is not None and target.is_module:
            kind = K.MODULE_REMOVED
        return ApiChange(package, kind, user_name(path))
    if kind == K.KIND_CHANGED:
        return ApiChange(package, kind, user_name(_public(b.obj.path, old, new)), old=str(b.old_value),
                         new=str(b.new_value))
    param = (b.old_value or b.new_value).name
    old_text = None if b.old_value is None else str(b.old_value.default if kind == K.DEFAULT_CHANGED else b.old_value.kind.value)
    new_text = None if b.new_value is None else str(b.new_value.default if kind == K.DEFAULT_CHANGED else b.new_value.kind.value)
    return ApiChange(package, kind, user_name(_public(b.obj.path, old, new)), param, old_text, new_text,
                     doc=parameter_doc(b.obj, param))


def _parameters_added(path: str, was: griffe.Object, now: griffe.Object, package: str) -> list[ApiChange]:
    if not (was.is_function and now.is_function):
        return []
    before = {p.name for p in was.parameters}
    return [ApiChange(package, K.PARAMETER_ADDED, user_name(path), p.name, new=str(p.default),
                      doc=parameter_doc(now, p.name))
            for p in now.parameters if p.name not in before and not p.required]


def additions(old: Surface, new: Surface, package: str) -> list[ApiChange]:
    """Names and modules the entry has and the baseline has not (a new module's or class's members are
    not listed apart), and parameters with a default added to a callable both have."""
    changes, covered, said = [], (), set()
    for path in sorted(new.names, key=lambda p: (p.count("."), p)):
        now, was = new.names[path], old.names.get(path)
        if now is None or is_test_module(path) or path.startswith(covered):
            continue
        if path not in old.names:
            if path.rsplit(".", 1)[-1] not in _SIGNATURE and now.path not in said:  # once, at its shortest name
                said.add(now.path)
                changes.append(ApiChange(package, K.MODULE_ADDED if now.is_module else K.ADDED, path,
                                         doc=_first_line(now)))
            covered += (path + ".",)
        elif was is not None:
            changes += _parameters_added(path, was, now, package)
    return changes


def _first_line(obj: griffe.Object) -> str:
    return obj.docstring.value.strip().split("\n")[0] if obj.docstring else ""


def compare(package: str, old_root: griffe.Object, new_root: griffe.Object, old: Surface, new: Surface,
            keep=lambda symbol: True) -> list[ApiChange]:  # noqa: ANN001 - a predicate on public names
    """Every change from `old_root` to `new_root` (a package or module of `package`), breaking first;
    `keep` limits them to some public names (jax: the names the contracts use)."""
    found: dict[tuple, ApiChange] = {}
    broken = (_breakage(b, old, new, package) for b in griffe.find_breaking_changes(old_root, new_root))
    for change in [*broken, *additions(old, new, package)]:
        if change is None or is_test_module(change.symbol) or not keep(change.symbol):
            continue
        found.setdefault((change.kind, change.symbol, change.parameter), change)
    gone = tuple(c.symbol + "." for c in found.values() if c.kind == K.MODULE_REMOVED)
    return sorted((c for c in found.values() if not c.symbol.startswith(gone)),
                  key=lambda c: (c.kind.rank, c.symbol, c.parameter or ""))
