"""griffe loaders of an entry's installed libraries, reading source only (the host never imports JAX).

`load_package` reads a whole package (optax: 0.3 s). `load_names` reads only the modules that hold the
given names, following re-exports to where they are defined: the few jax names the contracts call,
without parsing all of jax (6 s). griffe parses with the running interpreter, so these run under the
matrix's Python (harness.stack.api.reader): a module it cannot read leaves its names unresolved, never
"removed".
"""

from __future__ import annotations

import logging
from pathlib import Path

import griffe

logging.getLogger("griffe").setLevel(logging.ERROR)  # unreadable or external re-exports are expected
_ROUNDS = 8  # re-export hops followed (jax: 2-3)


class _Loader(griffe.GriffeLoader):
    """griffe's loader, reading a folder without `__init__.py` inside a package as Python imports it
    (an implicit namespace package: optax keeps its definitions in `optax/_src/` so)."""

    def _get_or_create_parent_module(self, module, subparts, subpath):  # noqa: ANN001, ANN202 - griffe's
        parent = module
        folders = list(subpath.parents)[int(subpath.stem == "__init__"):]
        for depth, part in enumerate(subparts[:-1]):
            if part not in parent.members:
                parent.set_member(part, self._create_module(part, [folders[len(subparts) - 2 - depth]]))
            parent = parent.members[part]
        return parent


def _loader(site_packages: Path, wanted: set[str] | None = None) -> griffe.GriffeLoader:
    loader = _Loader(search_paths=[str(site_packages)], allow_inspection=False,
                                 docstring_parser=griffe.Parser.google)
    if wanted is not None:
        loader.finder = _Finder([str(site_packages)], wanted)
    return loader


def load_package(name: str, site_packages: Path) -> griffe.Module:
    """The package `name` as installed in `site_packages`, every submodule read, re-exports resolved."""
    loader = _loader(site_packages)
    module = loader.load(name, try_relative_path=False)
    loader.resolve_aliases(implicit=False, external=False)
    return module


class _Finder(griffe.ModuleFinder):
    """Lists only the submodules on the way to the wanted ones, and those."""

    def __init__(self, search_paths: list[str], wanted: set[str]) -> None:
        super().__init__(search_paths)
        self.wanted = wanted

    def submodules(self, module):  # noqa: ANN001, ANN201 - griffe's own signature
        def keep(dotted: str) -> bool:
            return any(w == dotted or w.startswith(dotted + ".") for w in self.wanted)
        return [(parts, path) for parts, path in super().submodules(module) if keep(".".join((module.path, *parts)))]


def missing_target(root: griffe.Module, name: str) -> str | None:
    """Where `name` is re-exported from when that is not read; None when it resolves or does not exist."""
    try:
        obj = root[name.split(".", 1)[1]] if "." in name else root
        if obj.is_alias:
            obj.final_target  # noqa: B018 - resolves the chain of re-exports
    except griffe.AliasResolutionError as exc:
        return exc.alias.target_path
    except (KeyError, griffe.CyclicAliasError):
        return None
    return None


def load_names(names: set[str], site_packages: Path) -> griffe.Module:
    """The top package of `names` (one package's, e.g. {"jax.jit", "jax.numpy.zeros"}) with only the
    modules those names need: each name's module and the modules its re-exports point into."""
    tops = {n.split(".")[0] for n in names}
    if len(tops) != 1:
        raise ValueError(f"load_names takes the names of one package, not {sorted(tops)}")
    top = tops.pop()
    wanted = {n.rsplit(".", 1)[0] for n in names if "." in n} | set(names)
    for _ in range(_ROUNDS):
        loader = _loader(site_packages, wanted)
        root = loader.load(top, try_relative_path=False)
        loader.resolve_aliases(implicit=False, external=False)
        targets = {t for t in (missing_target(root, n) for n in sorted(names)) if t}
        more = {t.rsplit(".", i)[0] for t in targets for i in range(t.count(".") + 1)} - wanted
        if not more:
            return root
        wanted |= more
    return root
