"""The sensitivity run's scope against the coverage ledger: every Optax module that defines an in-scope
callable is mutated (harness.stack.sensitivity.scope.MODULES) or named, with why, in NOT_MUTATED; every
mutated module defines one. The modules come from Optax's source (griffe), not from a list."""

import collections

import pytest

from harness.coverage import ledger, spans as coverage_spans, surface
from harness.errors import HarnessError
from harness.stack.sensitivity import scope
from integration.test_ledger import _baseline_site_packages as baseline_site_packages


def _defining_files(site, found, entries) -> dict[str, list[str]]:
    by_name = found.by_any_name()
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
    # The ledger lists Optax's callables; Flax's modules are mutated for the wrappers family, which the manifest
    # declares with them (harness/builtin_families.py), and are no module of the ledger.
    optax_modules = {m for m in scope.MODULES if m.startswith("optax/")}
    assert sorted(set(scope.MODULES) - optax_modules) == ["flax/nnx/training/optimizer.py", "flax/training/train_state.py"]
    assert sorted(optax_modules - set(in_scope_files)) == []
    assert sorted(set(scope.NOT_MUTATED) - set(in_scope_files)) == []
    assert not set(scope.MODULES) & set(scope.NOT_MUTATED)
    assert all(reason.strip() for reason in scope.NOT_MUTATED.values())


@pytest.fixture(scope="module")
def baseline_surface():
    site = baseline_site_packages()
    return surface.load(site)


def test_the_spans_are_each_in_scope_callables_lines_from_the_ledger_and_the_source(baseline_surface):
    found = coverage_spans.spans(baseline_surface, ledger.read(), sorted(scope.IN_SCOPE_LINES_ONLY))
    # utils.py: scale_gradient (in scope) beside key, dtype and sampling helpers (outside it)
    source = (baseline_surface.source / "optax/_src/utils.py").read_text().splitlines()
    by_start = {source[first - 1].split("(")[0]: (first, last) for first, last in found["optax/_src/utils.py"]}
    assert set(by_start) == {"def scale_gradient"}  # not its private custom-VJP helpers, nor the others
    first, last = by_start["def scale_gradient"]
    body = "\n".join(source[first - 1:last])  # the whole body, to its last return
    assert body.rstrip().endswith("return _scale_gradient(inputs, scale)")


def test_a_restricted_module_holds_public_code_outside_the_scope_and_is_mutated(baseline_surface):
    """Restricting a module that holds only in-scope code would drop its helpers' mutants for nothing."""
    out_of_scope_files = {c.file for name, c in baseline_surface.callables.items()
                          if name in ledger.read().out_of_scope and c.kind == "function"}
    for module in scope.IN_SCOPE_LINES_ONLY:
        assert module in scope.MODULES, module
        assert module in out_of_scope_files, module


def test_a_restricted_module_without_an_in_scope_callable_is_a_clear_error(baseline_surface):
    with pytest.raises(HarnessError, match="optax/projections/_projections.py defines no in-scope callable"):
        coverage_spans.spans(baseline_surface, ledger.read(), ["optax/projections/_projections.py"])
