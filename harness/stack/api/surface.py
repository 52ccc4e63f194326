"""A package's public names as griffe reads them: each public path and the object it stands for.

Public: by default what griffe counts as public (what its breaking-change check compares), in public
submodules, and the public methods of public classes (`__init__` and `__call__` included: their parameters
are the class's); or by the package's own naming convention (the coverage ledger's view of Optax). A
re-export is followed to its definition, including `Name = module.Name` assignments (optax re-exports
MultiSteps so). Both the verdict's API diff and the coverage ledger derive their surfaces here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import griffe

_METHODS = ("__init__", "__call__")
_HOPS = 8  # an alias of an assignment of an alias ...


@dataclasses.dataclass(frozen=True)
class Surface:
    """Public path -> the object it names (None: a re-export whose source could not be read)."""

    names: dict[str, griffe.Object | None]

    def public_path(self, canonical: str) -> str | None:
        """The shortest public path of the object defined at `canonical` (its user-facing name)."""
        found = [p for p, o in self.names.items() if o is not None and o.path == canonical]
        return min(found, key=lambda p: (p.count("."), len(p), p)) if found else None


def resolve(member: griffe.Object | griffe.Alias) -> griffe.Object | None:
    """The definition a public name stands for, through re-exports and `Name = module.Name` assignments
    (an alias of an assignment of an alias...); None when its source could not be read."""
    try:
        obj = member.final_target if member.is_alias else member
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    for _ in range(_HOPS):
        path = getattr(getattr(obj, "value", None), "canonical_path", None) if obj.is_attribute else None
        if not isinstance(path, str) or path == obj.path:
            break
        try:
            named = obj.modules_collection[path]
            obj = named.final_target if named.is_alias else named
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            break  # the assignment itself, when what it names cannot be read
    return obj


Public = Callable[[griffe.Object, str, griffe.Object | griffe.Alias], bool]  # (parent, name, member)


def griffe_public(parent: griffe.Object, name: str, member: griffe.Object | griffe.Alias) -> bool:
    """griffe's rule (a module's `__all__` when it has one, else no leading underscore; imported names
    only when exported), a class's constructor and call included: what its breaking-change check compares."""
    try:
        return name in _METHODS or bool(member.is_public)
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return not name.startswith("_")


def by_convention(parent: griffe.Object, name: str, member: griffe.Object | griffe.Alias) -> bool:
    """A package's own convention, as Optax follows it: every name without a leading underscore (or in
    `__all__`), in its own submodules without one, test modules (`*_test`) left out."""
    if name.startswith("_") and name not in (parent.exports or ()):
        return False
    try:  # a module imported into another (`from optax._src import utils`) is not one of its submodules
        return not (member.is_module and (member.is_alias or name.endswith("_test")))
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return True


def walk(root: griffe.Object, package: str | None = None, public: Public = griffe_public,
         classes: bool = True) -> Surface:
    """Every public name under `root` (a package or one of its modules) that is defined in `package`
    (default: root's package): names re-exported from other packages are theirs. `public` says which
    names are public; `classes`: whether a public class's members are listed too."""
    package = package or root.path.split(".")[0]
    names: dict[str, griffe.Object | None] = {}
    seen: set[str] = set()

    def visit(path: str, obj: griffe.Object) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        for name, member in obj.members.items():
            if not public(obj, name, member) or (obj.is_class and name.startswith("_") and name not in _METHODS):
                continue
            target = resolve(member)
            if target is not None and target.path.split(".")[0] != package:
                continue
            names[f"{path}.{name}"] = target
            if target is not None and (target.is_module or (classes and target.is_class)):
                visit(f"{path}.{name}", target)

    names[root.path] = root
    visit(root.path, root)
    return Surface(names)
