"""The API diff of one entry against the baseline, from the two entries' installed sources: optax's whole
public API, flax.nnx, and the jax names the contracts (and the project's code) use; each change marked
with the checks and the project's lines that use the changed name.
"""

from __future__ import annotations

import time
from pathlib import Path

import griffe

from harness.model.api_diff import API_DIFF_SCHEMA_VERSION, ApiChange, ApiDiff, PackageApiDiff
from harness.stack.api import diff, loading, surface
from harness.stack.api.surface import Surface
from harness.stack.selection.usage import FileUse, reached


def _lookup(root: griffe.Module, name: str) -> griffe.Object | griffe.Alias | None:
    try:
        return root[name.split(".", 1)[1]] if "." in name else root
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _named(root: griffe.Module, names: set[str]) -> tuple[Surface, set[str], set[str]]:
    """The surface of just `names` (a class with its constructor), the names whose source is unread, and
    those re-exported from another package (`jax.numpy.dtype` is NumPy's: not this package's API)."""
    found: dict[str, griffe.Object | None] = {}
    foreign: set[str] = set()
    for name in sorted(names):
        member = _lookup(root, name)
        if member is None:
            continue
        target = surface.resolve(member)
        missing = loading.missing_target(root, name) if target is None else None
        if missing is not None and missing.split(".")[0] != root.path:
            foreign.add(name)
            continue
        found[name] = target
        if target is not None and target.is_class and "__init__" in target.members:
            found[f"{name}.__init__"] = surface.resolve(target.members["__init__"])
    return Surface(found), {n for n, o in found.items() if o is None}, foreign


def _jax(old_sp: Path, new_sp: Path, names: set[str]) -> tuple[list[ApiChange], list[str], set[str], Surface, Surface]:
    if not names:
        return [], [], set(), Surface({}), Surface({})
    old_root, new_root = loading.load_names(names, old_sp), loading.load_names(names, new_sp)
    (old, old_unread, old_foreign), (new, new_unread, new_foreign) = _named(old_root, names), _named(new_root, names)
    foreign = old_foreign & new_foreign
    changes: list[ApiChange] = []
    for module in sorted({n.rsplit(".", 1)[0] for n in names if "." in n}):
        was, now = _lookup(old_root, module), _lookup(new_root, module)
        if was is not None and now is not None and was.is_module and now.is_module:
            changes += diff.compare("jax", was, now, old, new, keep=lambda s: s in names and s not in foreign)
    return changes, sorted(old_unread | new_unread), foreign, old, new


def _whole(package: str, scope: str, old_sp: Path, new_sp: Path) -> tuple[list[ApiChange], Surface, Surface]:
    """`scope` ("optax", "flax.nnx") of `package` read whole on both sides."""
    roots = []
    for sp in (old_sp, new_sp):
        top = loading.load_package(package, sp)
        roots.append(top if scope == package else top[scope.split(".", 1)[1]])
    old, new = surface.walk(roots[0], package), surface.walk(roots[1], package)
    return diff.compare(package, roots[0], roots[1], old, new), old, new


def _canonical(name: str, surfaces: tuple[Surface, ...]) -> set[str]:
    return {name} | {o.path for s in surfaces if (o := s.names.get(name)) is not None}


def _mark(change: ApiChange, surfaces: tuple[Surface, Surface], checks: dict[str, dict[str, int]],
          project: dict[str, str]) -> ApiChange:
    """The change with the checks and the project's lines that use its name (or a member of it)."""
    symbol = _canonical(change.symbol, surfaces)

    def uses(name: str) -> bool:
        return any(c == s or c.startswith(s + ".") for c in _canonical(name, surfaces) | {name} for s in symbol)

    by_checks = sorted(k for k, names in checks.items() if any(uses(n) for n in names))
    by_project = sorted({where for name, where in project.items() if uses(name)})
    return ApiChange(**{**change.__dict__, "used_by_checks": by_checks, "used_by_project": by_project})


def check_uses(contracts: list[FileUse]) -> dict[str, dict[str, int]]:
    """"test_accumulation.py::test_state_layout" -> the library names the test reaches."""
    return {f"{f.path.name}::{name}": reached(contracts, f.module, name)
            for f in contracts if f.path.name.startswith("test_") for name in f.uses if name.startswith("test_")}


def project_uses(files: list[FileUse], root: Path) -> dict[str, str]:
    """Library name -> its first use in the project's code ("regressor/train.py:41")."""
    found: dict[str, str] = {}
    for f in files:
        for names in f.uses.values():
            for name, line in sorted(names.items(), key=lambda item: item[1]):
                found.setdefault(name, f"{f.path.relative_to(root)}:{line}")
    return found


def compare_entries(entry: str, sites: tuple[Path, Path], versions: tuple[dict, dict], contracts: list[FileUse],
                    project: list[FileUse], root: Path) -> ApiDiff:
    """The API diff of `entry` (its site-packages `sites[1]`) against the baseline's (`sites[0]`)."""
    started = time.perf_counter()
    checks, own = check_uses(contracts), project_uses(project, root)
    used = {n for names in checks.values() for n in names} | set(own)
    jax_names = {n for n in used if n.split(".")[0] == "jax"}
    packages = []
    for package, scope in (("optax", "optax"), ("flax", "flax.nnx"), ("jax", None)):
        old_v, new_v = versions[0].get(package), versions[1].get(package)
        try:
            if scope is None:
                changes, unread, foreign, *surfaces = _jax(*sites, jax_names)
                scope = f"the {len(jax_names)} jax names the contracts{' and your code' if own else ''} use"
                scope += f" ({', '.join(sorted(foreign))}: another package's, not compared)" if foreign else ""
            else:
                (changes, *surfaces), unread = _whole(package, scope, *sites), []
        except (griffe.GriffeError, OSError, ModuleNotFoundError, KeyError) as exc:
            packages.append(PackageApiDiff(package, scope or "jax", old_v, new_v, [], problem=f"not read: {exc}"))
            continue
        marked = [_mark(c, tuple(surfaces), checks, own) for c in changes]
        packages.append(PackageApiDiff(package, "public API" if scope == package else scope, old_v, new_v, marked,
                                       unread))
    return ApiDiff(API_DIFF_SCHEMA_VERSION, entry, packages, round(time.perf_counter() - started, 2))
