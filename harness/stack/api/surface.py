"""A package's public names as griffe reads them: each public path and the object it stands for.

Public: what griffe counts as public (a module's `__all__` when it has one, else names without a
leading underscore), in public submodules, and the public methods of public classes (`__init__` and
`__call__` included: their parameters are the class's). A re-export is followed to its definition,
including `Name = module.Name` assignments (optax re-exports MultiSteps so).
"""

from __future__ import annotations

import dataclasses

import griffe

_METHODS = ("__init__", "__call__")


@dataclasses.dataclass(frozen=True)
class Surface:
    """Public path -> the object it names (None: a re-export whose source could not be read)."""

    names: dict[str, griffe.Object | None]

    def public_path(self, canonical: str) -> str | None:
        """The shortest public path of the object defined at `canonical` (its user-facing name)."""
        found = [p for p, o in self.names.items() if o is not None and o.path == canonical]
        return min(found, key=lambda p: (p.count("."), len(p), p)) if found else None


def _follow_assignment(obj: griffe.Object) -> griffe.Object:
    """`MultiSteps = transforms.MultiSteps`: the object the assignment names, when it is one."""
    value = getattr(obj, "value", None)
    path = getattr(value, "canonical_path", None)
    if not isinstance(path, str) or path == obj.path:
        return obj
    try:
        target = obj.modules_collection[path]
        return target.final_target if target.is_alias else target
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return obj


def resolve(member: griffe.Object | griffe.Alias) -> griffe.Object | None:
    """The definition a public name stands for; None when its source could not be read."""
    try:
        obj = member.final_target if member.is_alias else member
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    return _follow_assignment(obj) if obj.is_attribute else obj


def _is_public(name: str, member: griffe.Object | griffe.Alias) -> bool:
    try:
        return name in _METHODS or bool(member.is_public)
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return not name.startswith("_")


def walk(root: griffe.Object, package: str | None = None) -> Surface:
    """Every public name under `root` (a package or one of its modules) that is defined in `package`
    (default: root's package): names re-exported from other packages are theirs."""
    package = package or root.path.split(".")[0]
    names: dict[str, griffe.Object | None] = {}
    seen: set[str] = set()

    def visit(path: str, obj: griffe.Object) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        for name, member in obj.members.items():
            if not _is_public(name, member) or (obj.is_class and name.startswith("_") and name not in _METHODS):
                continue
            target = resolve(member)
            if target is not None and target.path.split(".")[0] != package:
                continue
            names[f"{path}.{name}"] = target
            if target is not None and (target.is_module or target.is_class):
                visit(f"{path}.{name}", target)

    names[root.path] = root
    visit(root.path, root)
    return Surface(names)
