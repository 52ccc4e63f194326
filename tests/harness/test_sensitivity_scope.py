"""The sensitivity run's scope against the coverage ledger: every Optax module that defines an in-scope
callable is mutated (harness.stack.sensitivity.scope.MODULES) or named, with why, in NOT_MUTATED; every
mutated module defines one. The modules come from Optax's source (griffe), not from a list."""

import collections

import pytest

from harness.coverage import ledger, surface
from harness.stack.sensitivity import scope
from test_ledger import _baseline_site_packages as baseline_site_packages


def _defining_files(site, found, entries) -> dict[str, list[str]]:
    by_name = {n: c for c in found.callables.values() for n in (c.name, *c.aliases)}
    files = collections.defaultdict(list)
    for name in entries:
        module = by_name[name].target.rsplit(".", 1)[0]
        while module and not (site / (module.replace(".", "/") + ".py")).exists():
            module = module.rpartition(".")[0]  # a class's method: its class's module
        assert module, f"no source file for {name}"
        files[module.replace(".", "/") + ".py"].append(name)
    return files


@pytest.fixture(scope="module")
def in_scope_files():
    site = baseline_site_packages()
    return _defining_files(site, surface.load(site), ledger.read().in_scope)


def test_every_module_with_an_in_scope_callable_is_mutated_or_says_why(in_scope_files):
    unaccounted = sorted(set(in_scope_files) - set(scope.MODULES) - set(scope.NOT_MUTATED))
    assert not unaccounted, [f"{f}: {in_scope_files[f]}" for f in unaccounted]


def test_every_mutated_or_excused_module_defines_an_in_scope_callable(in_scope_files):
    assert sorted(set(scope.MODULES) - set(in_scope_files)) == []
    assert sorted(set(scope.NOT_MUTATED) - set(in_scope_files)) == []
    assert not set(scope.MODULES) & set(scope.NOT_MUTATED)
    assert all(reason.strip() for reason in scope.NOT_MUTATED.values())
