"""The sensitivity run's scope against the coverage ledger: every module of Optax, Flax or JAX that defines an
in-scope callable is mutated (harness.stack.sensitivity.scope.MODULES) or named, with why, in NOT_MUTATED; every
mutated module defines one. The modules come from the libraries' source (griffe), not from a list."""

import ast
import collections

import pytest

from harness.coverage import ledger, libraries, spans as coverage_spans, surface
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
    site, read = baseline_site_packages(), ledger.read()
    files = collections.defaultdict(list)
    for library in libraries.LIBRARIES:
        for module, names in _defining_files(site, surface.load(site, library), read.of(library.package).in_scope).items():
            files[module] += names
    return files


def test_every_module_with_an_in_scope_callable_is_mutated_or_says_why(in_scope_files):
    unaccounted = sorted(set(in_scope_files) - set(scope.MODULES) - set(scope.NOT_MUTATED))
    assert not unaccounted, [f"{f}: {in_scope_files[f]}" for f in unaccounted]


def test_every_mutated_or_excused_module_defines_an_in_scope_callable(in_scope_files):
    assert sorted(set(scope.MODULES) - set(in_scope_files)) == []
    assert sorted(set(scope.NOT_MUTATED) - set(in_scope_files)) == []
    assert not set(scope.MODULES) & set(scope.NOT_MUTATED)
    assert all(reason.strip() for reason in scope.NOT_MUTATED.values())


@pytest.fixture(scope="module")
def baseline_surface():
    site = baseline_site_packages()
    return surface.load(site)


@pytest.fixture(scope="module")
def derived():
    """The restricted modules' spans, each read with its own library's surface (Optax's, JAX's)."""
    return coverage_spans.of_libraries(baseline_site_packages(), ledger.read(), sorted(scope.IN_SCOPE_LINES_ONLY))


def _starts(module, found):
    source = (baseline_site_packages() / module).read_text().splitlines()
    return {source[first - 1].split("(")[0]: (first, last) for first, last in found[module]}, source


def test_the_spans_are_each_in_scope_callables_lines_from_the_ledger_and_the_source(derived):
    # utils.py: scale_gradient (in scope) with the custom-VJP function it returns through and its rules, beside
    # key, dtype and sampling helpers (outside it)
    by_start, source = _starts("optax/_src/utils.py", derived)
    assert set(by_start) == {"def scale_gradient", "@jax.custom_vjp", "def _scale_gradient_fwd",
                             "def _scale_gradient_bwd", "_scale_gradient.defvjp"}
    first, last = by_start["def scale_gradient"]
    body = "\n".join(source[first - 1:last])  # the whole body, to its last return
    assert body.rstrip().endswith("return _scale_gradient(inputs, scale)")


def test_jax_nn_spans_are_the_ledgers_activations_with_their_helpers_and_rules(derived):
    """jax.nn's module: every in-scope function of the ledger defined there (those flax.nnx re-exports and the
    rest), softmax's and one_hot's private functions, the JVP rules; not attention nor the block-scaled matmuls."""
    module = "jax/_src/nn/functions.py"
    by_start, source = _starts(module, derived)
    defined = {name.rsplit(".", 1)[-1] for name in ledger.read().of("jax").in_scope if name.startswith("jax.nn.")
               and name.count(".") == 2} - {"logsumexp", "tanh"}  # defined in special.py and ufuncs.py
    assert {"mish", "squareplus", "sparse_plus", "sparse_sigmoid", "log1mexp", "logmeanexp", "softmax"} <= defined
    def covered(name):
        line = next(i for i, text in enumerate(source, 1) if text.startswith(f"def {name}("))
        return any(first <= line <= last for first, last in derived[module])

    assert {name for name in defined if not covered(name)} == set()
    assert all(covered(name) for name in ("_softmax", "_softmax_jvp", "_softmax_deprecated", "_one_hot"))
    assert {"relu.defjvps", "relu6.defjvps", "log1mexp.defjvps"} <= set(by_start)
    assert not any(covered(name) for name in ("dot_product_attention", "scaled_matmul", "_dot_product_attention_xla",
                                              "_get_causal_mask"))


def test_a_restricted_module_holds_public_code_outside_the_scope(derived):
    """Restricting a module that holds only in-scope code would drop its helpers' mutants for nothing: each
    restricted module defines a public function whose lines lie outside every span."""
    for module in scope.IN_SCOPE_LINES_ONLY:
        assert module in scope.MODULES, module
        tree = ast.parse((baseline_site_packages() / module).read_text())
        public = [node.lineno for node in tree.body if isinstance(node, ast.FunctionDef)
                  and not node.name.startswith("_")]
        assert any(not any(first <= line <= last for first, last in derived[module]) for line in public), module


def test_a_restricted_module_without_an_in_scope_callable_is_a_clear_error(baseline_surface):
    with pytest.raises(HarnessError, match="optax/projections/_projections.py defines no in-scope callable"):
        coverage_spans.spans(baseline_surface, ledger.read(), ["optax/projections/_projections.py"])
