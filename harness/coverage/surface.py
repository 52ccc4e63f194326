"""Optax's public surface, read statically (griffe parses the source; nothing imports JAX).

What counts as public is Optax's own convention: the package `optax` and every subpackage or module
under it whose dotted path has no part starting with "_" and that is not a test module (`*_test`). In
each, every name without a leading "_" that is bound to a function or class defined in Optax: the
names of `__all__`, the re-exports (`from optax._src.x import y`), the assignments
(`MultiSteps = transforms.MultiSteps`) and the deprecated names Optax still serves. One object under
several names is one callable: its primary name is the shortest public path (then the first
alphabetically), the others are its aliases.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path

from harness.errors import HarnessError

PACKAGE = "optax"


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: str  # griffe's ParameterKind value: positional-only, positional or keyword, keyword-only, ...
    default: str | None  # the default's source text; None when the parameter is required


@dataclasses.dataclass(frozen=True)
class PublicCallable:
    name: str  # the primary public path, e.g. optax.clip_by_global_norm
    kind: str  # "function" or "class"
    target: str  # where Optax defines it, e.g. optax._src.clipping.clip_by_global_norm
    aliases: tuple[str, ...]  # its other public paths
    params: tuple[Param, ...]  # a class's are its __init__'s (self left out)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


@dataclasses.dataclass(frozen=True)
class Surface:
    version: str
    source: Path  # the site-packages directory it was read from
    modules: tuple[str, ...]
    callables: dict[str, PublicCallable]  # primary name -> callable


def _griffe():
    try:
        import griffe
    except ImportError as exc:  # the host side installs it from locks/runner.txt
        raise HarnessError("reading Optax's public surface needs griffe: install the runner tools with "
                           "`pip install -r locks/runner.txt` (griffe is pinned there).") from exc
    return griffe


def _public_modules(root) -> list:
    """The package and its public submodules, depth first."""
    found, todo = [], [root]
    while todo:
        module = todo.pop()
        found.append(module)
        todo += [m for name, m in sorted(module.modules.items())
                 if not name.startswith("_") and not name.endswith("_test") and not m.is_alias]
    return sorted(found, key=lambda m: m.path)


def _definition(member, root):
    """The function or class a public name is bound to, or None (a module, a constant, a type alias,
    something defined outside Optax)."""
    griffe = _griffe()
    for _ in range(8):  # an alias of an assignment of an alias ...
        if member.is_alias and not member.target_path.startswith(PACKAGE + "."):
            return None
        if member.is_alias:
            try:
                member = member.final_target
            except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                return None
        elif member.is_attribute and isinstance(member.value, griffe.Expr):
            path = getattr(member.value, "canonical_path", "")
            if not path.startswith(PACKAGE + "."):
                return None
            try:
                member = root[path.removeprefix(PACKAGE + ".")]
            except KeyError:
                return None
        else:
            break
    if member.is_function or member.is_class:
        return member if member.path.startswith(PACKAGE + ".") else None
    return None


def _params(obj) -> tuple[Param, ...]:
    params = obj.parameters if obj.is_function else _init_params(obj)
    return tuple(Param(p.name, p.kind.value, None if p.default is None else str(p.default))
                 for p in params if p.name not in ("self", "cls"))


def _init_params(cls):
    init = cls.all_members.get("__init__")
    if init is None:
        return []
    init = init.final_target if init.is_alias else init
    return init.parameters if init.is_function else []


def _names(modules, root) -> dict[str, tuple[str, object]]:
    """public path -> (definition path, definition) for every public name bound to a callable."""
    names = {}
    for module in modules:
        exported = set(module.exports or [])
        for name, member in module.members.items():
            if name.startswith("_") and name not in exported:
                continue
            if member.is_alias and not member.target_path.startswith(PACKAGE + "."):
                continue  # a name imported from elsewhere (typing, jax, ...)
            obj = _definition(member, root)
            if obj is not None:
                names[f"{module.path}.{name}"] = (obj.path, obj)
    return names


def load(site_packages: Path) -> Surface:
    """Optax's public callables as installed in `site_packages`."""
    griffe = _griffe()
    if not (site_packages / PACKAGE / "__init__.py").is_file():
        raise HarnessError(f"{site_packages}: no {PACKAGE} package there; give the site-packages of an "
                           f"environment that has the baseline's {PACKAGE} installed.")
    with tempfile.TemporaryDirectory() as tmp:
        _copy_as_regular_packages(site_packages / PACKAGE, Path(tmp) / PACKAGE)
        root = griffe.load(PACKAGE, search_paths=[tmp], try_relative_path=False,
                           resolve_aliases=True, resolve_external=False, allow_inspection=False)
        return _surface(root, site_packages)


def _copy_as_regular_packages(source: Path, dest: Path) -> None:
    """A copy of the package's sources in which every folder is a regular package: Optax keeps its
    definitions in `optax/_src`, a folder without `__init__.py` that griffe would not descend into."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    for folder in [dest, *(p for p in dest.rglob("*") if p.is_dir())]:
        if not (folder / "__init__.py").exists():
            (folder / "__init__.py").write_text("")


def _surface(root, site_packages: Path) -> Surface:
    modules = _public_modules(root)
    by_target: dict[str, list[str]] = {}
    objects = {}
    for public, (target, obj) in _names(modules, root).items():
        by_target.setdefault(target, []).append(public)
        objects[target] = obj
    callables = {}
    for target, names in by_target.items():
        obj = objects[target]
        primary, *aliases = sorted(names, key=lambda n: (n.rpartition(".")[2] != obj.name, n.count("."), n))
        callables[primary] = PublicCallable(primary, "class" if obj.is_class else "function", target,
                                            tuple(aliases), _params(obj))
    return Surface(installed_version(site_packages), site_packages, tuple(m.path for m in modules),
                   dict(sorted(callables.items())))


def installed_version(site_packages: Path) -> str:
    """The version of the optax distribution installed there (its .dist-info), without importing it."""
    infos = sorted(site_packages.glob(f"{PACKAGE}-*.dist-info"))
    if len(infos) != 1:
        raise HarnessError(f"{site_packages}: expected one {PACKAGE}-*.dist-info, found {len(infos)}; "
                           "point at an environment with exactly one optax installed.")
    return infos[0].name.removeprefix(f"{PACKAGE}-").removesuffix(".dist-info")
