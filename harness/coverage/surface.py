"""A library's public surface (Optax's, and the parts of Flax and JAX in harness.coverage.libraries), read
statically (griffe parses the source; nothing imports JAX).

The package is read and its public names derived as the verdict's API diff does (harness.stack.api:
loading, surface), by Optax's own convention: the package `optax` and every subpackage or module under it
whose dotted path has no part starting with "_" and that is not a test module (`*_test`). In each, every
name without a leading "_" that is bound to a function or class defined in Optax: the names of `__all__`,
the re-exports (`from optax._src.x import y`), the assignments (`MultiSteps = transforms.MultiSteps`) and
the deprecated names Optax still serves. One object under
several names is one callable: its primary name is the shortest public path (then the first
alphabetically), the others are its aliases.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.coverage import kinds
from harness.coverage.libraries import OPTAX, Library
from harness.errors import HarnessError
from harness.stack.api import loading, surface as api_surface

PACKAGE = OPTAX.package
_ROUNDS = 4  # module levels a surface's roots are listed to (jax.nn.initializers: 2)


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: str  # griffe's ParameterKind value: positional-only, positional or keyword, keyword-only, ...
    default: str | None  # the default's source text; None when the parameter is required
    annotation: str | None = None  # its annotation's source text (harness.coverage.kinds reads its values)
    compared: tuple[str, ...] = ()  # the strings the callable's body compares it with (harness.coverage.kinds)


@dataclasses.dataclass(frozen=True)
class PublicCallable:
    name: str  # the primary public path, e.g. optax.clip_by_global_norm
    kind: str  # "function" or "class"
    target: str  # where Optax defines it, e.g. optax._src.clipping.clip_by_global_norm
    aliases: tuple[str, ...]  # its other public paths
    params: tuple[Param, ...]  # a class's are its __init__'s (self left out)
    file: str = ""  # its source file relative to site-packages: optax/_src/clipping.py
    lines: tuple[int, int] = (0, 0)  # its first (decorators included) and last line there, from 1

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


@dataclasses.dataclass(frozen=True)
class Surface:
    version: str
    source: Path  # the site-packages directory it was read from
    modules: tuple[str, ...]
    callables: dict[str, PublicCallable]  # primary name -> callable
    package: str = PACKAGE  # the library it is of (harness.coverage.libraries)

    def by_any_name(self) -> dict[str, PublicCallable]:
        """Each callable under its primary name and every alias: the ledger may name it by either."""
        return {name: c for c in self.callables.values() for name in (c.name, *c.aliases)}


def _params(obj) -> tuple[Param, ...]:
    params = obj.parameters if obj.is_function else _init_params(obj)
    body = _source(obj if obj.is_function else obj.all_members.get("__init__"))
    return tuple(Param(p.name, p.kind.value, None if p.default is None else str(p.default),
                       None if p.annotation is None else str(p.annotation), kinds.compared_strings(body, p.name))
                 for p in params if p.name not in ("self", "cls"))


def _source(function) -> str:
    """A function's source text (griffe's, read from its file); "" when there is none to read."""
    if function is None:
        return ""
    function = function.final_target if function.is_alias else function
    try:
        return function.source
    except (AttributeError, OSError, ValueError):
        return ""


def _init_params(cls):
    init = cls.all_members.get("__init__")
    if init is None:
        return []
    init = init.final_target if init.is_alias else init
    return init.parameters if init.is_function else []


def load(site_packages: Path, library: Library = OPTAX) -> Surface:
    """The library's public callables as installed in `site_packages` (the part its Library names)."""
    if not (site_packages / library.package / "__init__.py").is_file():
        raise HarnessError(f"{site_packages}: no {library.package} package there; give the site-packages of an "
                           f"environment that has the baseline's {library.package} installed.")
    if library.roots == (library.package,):
        root = loading.load_package(library.package, site_packages)
        public = api_surface.walk(root, library.package, api_surface.by_convention, classes=library.methods)
    else:
        public = _walk_roots(library, site_packages)
    kept = {p: o for p, o in public.names.items() if o is None or o.is_module or library.keeps(o.path)}
    return _surface(api_surface.Surface(kept), site_packages, library.package)


def _walk_roots(library: Library, site_packages: Path) -> api_surface.Surface:
    """The public names under the library's root modules, reading only the modules they need (all of jax
    takes seconds): the roots, then their members, re-exports followed, until no module adds a name."""
    names: set[str] = set(library.roots)
    for _ in range(_ROUNDS):
        root = loading.load_names(names, site_packages)
        found = {}
        for module in library.roots:
            obj = root[module.split(".", 1)[1]]
            found.update(api_surface.walk(obj, library.package, api_surface.by_convention,
                                          classes=library.methods).names)
        more = (set(found) | _assigned_from(found)) - names
        if not more:
            break
        names |= more
    return api_surface.Surface(found)


def _assigned_from(found: dict) -> set[str]:
    """Where the names bound by assignment to an import come from (jax.nn's `logsumexp = _logsumexp`, imported
    from jax._src.ops.special): reading that module makes the name a function instead of an unread attribute."""
    sources = set()
    for obj in found.values():
        path = getattr(getattr(obj, "value", None), "canonical_path", None) if obj is not None and obj.is_attribute \
            else None
        if not isinstance(path, str) or path == obj.path:
            continue
        try:
            named = obj.modules_collection[path]
        except KeyError:  # the assignment names a module not read yet: read it
            sources.add(path)
            continue
        if named.is_alias:
            sources.add(named.target_path)
    return sources


def _surface(public: api_surface.Surface, site_packages: Path, package: str) -> Surface:
    """One callable per function or class, named by its shortest public path, its other paths aliases."""
    by_target: dict[str, list[str]] = {}
    objects = {}
    for path, obj in public.names.items():
        if obj is not None and (obj.is_function or obj.is_class):
            by_target.setdefault(obj.path, []).append(path)
            objects[obj.path] = obj
    callables = {}
    for target, names in by_target.items():
        obj = objects[target]
        primary, *aliases = sorted(names, key=lambda n: (n.rpartition(".")[2] != obj.name, n.count("."), n))
        callables[primary] = PublicCallable(primary, "class" if obj.is_class else "function", target,
                                            tuple(aliases), _params(obj), *_where(obj, site_packages))
    modules = sorted({o.path for o in public.names.values() if o is not None and o.is_module})
    return Surface(installed_version(site_packages, package), site_packages, tuple(modules),
                   dict(sorted(callables.items())), package)


def _where(obj, site_packages: Path) -> tuple[str, tuple[int, int]]:
    """Where `obj` is defined: its file relative to site_packages, and its lines (decorators included)."""
    first = min([obj.lineno, *(d.lineno for d in getattr(obj, "decorators", ()))])
    return Path(obj.filepath).resolve().relative_to(site_packages.resolve()).as_posix(), (first, obj.endlineno)


def installed_version(site_packages: Path, package: str = PACKAGE) -> str:
    """The version of the package's distribution installed there (its .dist-info), without importing it."""
    infos = sorted(site_packages.glob(f"{package}-*.dist-info"))
    if len(infos) != 1:
        raise HarnessError(f"{site_packages}: expected one {package}-*.dist-info, found {len(infos)}; "
                           f"point at an environment with exactly one {package} installed.")
    return infos[0].name.removeprefix(f"{package}-").removesuffix(".dist-info")
