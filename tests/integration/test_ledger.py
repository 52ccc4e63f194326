"""The coverage ledger accounts for every public callable of the baseline's Optax (and of the parts of Flax and
JAX in harness.coverage.libraries), each in-scope parameter names contracts that exist, and the audit fails on
what it does not account for."""

import dataclasses
import importlib.metadata
import importlib.util
from pathlib import Path

import pytest

from harness.coverage import audit, cli, contracts, ledger, libraries, surface


def _baseline_site_packages() -> Path:
    """This interpreter's optax, when it is the matrix baseline's (read statically: nothing imports it)."""
    spec = importlib.util.find_spec(surface.PACKAGE)
    if spec is None or spec.origin is None:
        pytest.skip("optax is not installed in this interpreter: run in the tests environment (nox -s tests)")
    want, have = cli.baseline_optax(), importlib.metadata.version(surface.PACKAGE)
    if have != want:
        pytest.skip(f"this interpreter has optax {have}, the matrix baseline is {want}: the ledger is the baseline's")
    return Path(spec.origin).parents[1]


@pytest.fixture(scope="module")
def baseline():
    return surface.load(_baseline_site_packages())


@pytest.fixture(scope="module")
def contract_ids():
    return contracts.ids()


def test_ledger_accounts_for_the_baseline(baseline, contract_ids):
    """Every public callable has a line, every in-scope parameter names contracts that exist; the listed
    gaps are allowed (they print here and in `python -m harness coverage`)."""
    result = audit.audit(baseline, ledger.read(), contract_ids)
    print(cli.render(result))
    assert [str(f) for f in result.findings] == []
    assert result.counts()["in scope"] + result.counts()["out of scope"] == len(baseline.callables)


@pytest.mark.parametrize("library", [libraries.FLAX, libraries.JAX], ids=lambda lib: lib.package)
def test_ledger_accounts_for_the_parts_of_flax_and_jax_a_step_calls(library, contract_ids):
    """Each library's section: every callable its part defines has one line (in scope, or out with why), none of
    another library's lines is read into it, and its counts add up."""
    found = surface.load(_baseline_site_packages(), library)
    result = audit.audit(found, ledger.read(), contract_ids)
    print(cli.render(result))
    assert [str(f) for f in result.findings] == []
    assert found.package == library.package and found.version == importlib.metadata.version(library.package)
    assert result.counts()["in scope"] + result.counts()["out of scope"] == len(found.callables) > 0
    assert all(name.startswith(library.package + ".") for name in found.callables)


def test_a_flax_callable_defined_outside_its_part_is_not_in_its_surface():
    """Flax's surface is the optimizer wrapper and the train state: nnx.Linear, defined elsewhere, is not in it;
    the wrapper's methods are (what a step calls on it)."""
    found = surface.load(_baseline_site_packages(), libraries.FLAX)
    assert "flax.nnx.Linear" not in found.by_any_name()
    assert {"flax.nnx.Optimizer", "flax.nnx.Optimizer.update", "flax.training.train_state.TrainState.apply_gradients"
            } <= set(found.callables)


def test_a_name_bound_to_an_import_is_read_where_the_import_comes_from():
    """jax.nn's `logsumexp = _logsumexp` (imported from jax._src.ops.special): a function of the surface, not an
    unread attribute dropped from it."""
    found = surface.load(_baseline_site_packages(), libraries.JAX)
    assert found.callables["jax.nn.logsumexp"].file == "jax/_src/ops/special.py"
    assert [p.name for p in found.callables["jax.nn.logsumexp"].params][:3] == ["a", "axis", "b"]


def test_the_selections_jax_nn_aliases_are_the_installed_jaxs():
    """The selection maps jax.nn's second names to the ledger's (harness.builtin_families.JAX_NN_ALIASES): the
    same pairs griffe reads from the installed jax, so a renamed alias fails here, not in a team's selection."""
    from harness import builtin_families

    found = surface.load(_baseline_site_packages(), libraries.JAX)
    read = {alias.rsplit(".", 1)[1]: name.rsplit(".", 1)[1] for name, c in found.callables.items()
            if name.startswith("jax.nn.") and name.count(".") == 2 for alias in c.aliases if alias.startswith("jax.nn.")}
    assert read == builtin_families.JAX_NN_ALIASES


def test_the_selections_initializer_aliases_are_the_installed_jaxs_and_flaxs():
    """The selection maps jax.nn.initializers' second names to the ledger's (JAX_INITIALIZER_ALIASES: the pairs griffe
    reads from the installed jax), and flax.nnx.initializers' names to jax's (FLAX_INITIALIZERS): the installed Flax
    module imports every function it exports from jax.nn.initializers, and each one is a ledger line or an alias."""
    import ast

    from harness import builtin_families
    from harness.coverage import ledger

    found = surface.load(_baseline_site_packages(), libraries.JAX)
    read = {alias.rsplit(".", 1)[1]: name.rsplit(".", 1)[1] for name, c in found.callables.items()
            if name.startswith("jax.nn.initializers.") for alias in c.aliases}
    assert read == builtin_families.JAX_INITIALIZER_ALIASES
    in_scope = {n.rsplit(".", 1)[1] for n in ledger.read().in_scope if n.startswith("jax.nn.initializers.")}
    for module in (("nnx", "nn", "initializers.py"), ("linen", "initializers.py")):
        source = (_baseline_site_packages() / "flax").joinpath(*module)
        imported = {a.asname or a.name for node in ast.parse(source.read_text()).body
                    if isinstance(node, ast.ImportFrom) and node.module == "jax.nn.initializers" for a in node.names}
        assert imported == in_scope | set(builtin_families.JAX_INITIALIZER_ALIASES), module
    assert builtin_families.FLAX_INITIALIZERS == ("flax.nnx.initializers", "flax.nnx.nn.initializers",
                                                  "flax.linen.initializers")
    nnx = (_baseline_site_packages() / "flax" / "nnx" / "__init__.py").read_text()
    assert "from .nn import initializers as initializers" in nnx


def test_the_selections_flax_reexports_are_the_installed_flaxs_own_objects():
    """Every module the selection reads as re-exporting jax.nn (JAX_NN_REEXPORTS: flax.nnx, and linen's) exports
    exactly those names as jax.nn's own objects, and every initializers module it reads (FLAX_INITIALIZERS) exports
    jax.nn.initializers' own functions: checked by identity in the installed flax (this session's environment is
    the baseline's), so a linen model's `nn.gelu` takes the tests of `jax.nn.gelu` and no name is read wrongly."""
    import importlib

    import jax.nn
    import jax.nn.initializers

    from harness import builtin_families

    def same(module, source) -> set[str]:
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError:  # an attribute as the team's code reaches it (flax.nnx.initializers: no module)
            parent, _, name = module.rpartition(".")
            found = getattr(importlib.import_module(parent), name)
        return {n for n in dir(found) if not n.startswith("_") and callable(getattr(found, n))
                and getattr(source, n, None) is getattr(found, n)}

    for module, names in builtin_families.JAX_NN_REEXPORTS.items():
        assert same(module, jax.nn) == set(names), module
    initializers = {name for name in dir(jax.nn.initializers) if not name.startswith("_")}
    for module in builtin_families.FLAX_INITIALIZERS:
        found = same(module, jax.nn.initializers)
        assert found and found <= initializers, module


def test_surface_resolves_aliases(baseline):
    """One object under several public names is one callable, named where Optax defines it."""
    clip = baseline.callables["optax.clip_by_global_norm"]
    assert "optax.transforms.clip_by_global_norm" in clip.aliases
    assert [p.name for p in baseline.callables["optax.MultiSteps"].params] == [
        "opt", "every_k_schedule", "use_grad_mean", "should_skip_update_fn"]
    assert "optax.multi_transform" in baseline.callables["optax.partition"].aliases


def _with(surface_, name, **changes):
    callables = dict(surface_.callables)
    callables[name] = dataclasses.replace(callables[name], **changes) if name in callables else changes["new"]
    return dataclasses.replace(surface_, callables=callables)


def test_unknown_callable_fails(baseline, contract_ids):
    made_up = surface.PublicCallable("optax.clip_by_magic", "function", "optax._src.magic.clip_by_magic", (),
                                     (surface.Param("limit", "positional or keyword", None),))
    result = audit.audit(_with(baseline, "optax.clip_by_magic", new=made_up), ledger.read(), contract_ids)
    assert [(f.problem, f.name) for f in result.findings] == [(audit.Problem.UNKNOWN_CALLABLE, "optax.clip_by_magic")]


def test_unknown_parameter_fails(baseline, contract_ids):
    steps = baseline.callables["optax.MultiSteps"]
    extra = surface.Param("accumulator_dtype", "positional or keyword", "None")
    result = audit.audit(_with(baseline, "optax.MultiSteps", params=(*steps.params, extra)), ledger.read(), contract_ids)
    assert [str(f) for f in result.findings] == [
        "parameter of an in-scope callable the ledger does not account for: optax.MultiSteps "
        "(accumulator_dtype, default None)"]


def test_removed_callable_or_parameter_fails(baseline, contract_ids):
    """A ledger line for what the surface no longer has is stale, not silently kept."""
    callables = {k: v for k, v in baseline.callables.items() if k != "optax.sgdr_schedule"}
    callables["optax.MultiSteps"] = dataclasses.replace(callables["optax.MultiSteps"],
                                                        params=callables["optax.MultiSteps"].params[:-1])
    result = audit.audit(dataclasses.replace(baseline, callables=callables), ledger.read(), contract_ids)
    assert {(f.problem, f.name) for f in result.findings} == {
        (audit.Problem.NO_SUCH_CALLABLE, "optax.sgdr_schedule"), (audit.Problem.NO_SUCH_PARAM, "optax.MultiSteps")}


def _findings_with(baseline, contract_ids, tmp_path, line: str, changed: str) -> list[str]:
    """The audit's findings for the committed ledger with one line changed."""
    text = ledger.LEDGER.read_text()
    assert line in text
    (tmp_path / "ledger.toml").write_text(text.replace(line, changed))
    return [str(f) for f in audit.audit(baseline, ledger.read(tmp_path / "ledger.toml"), contract_ids).findings]


def test_unknown_contract_fails(baseline, contract_ids, tmp_path):
    assert _findings_with(baseline, contract_ids, tmp_path, 'max_norm = ["clipping/test_guide_case"',
                          'max_norm = ["clipping/test_does_not_exist"') == [
        "ledger names a contract that does not exist: optax.clip_by_global_norm (max_norm: clipping/test_does_not_exist)"]


def test_made_up_package(tmp_path):
    """The surface of a package laid out as Optax is (definitions in a folder without __init__.py,
    re-exported, assigned, listed in __all__): public names only, aliases resolved to one callable."""
    site = tmp_path / "site-packages"
    (site / "optax" / "_src").mkdir(parents=True)
    (site / "optax-9.9.9.dist-info").mkdir()
    (site / "optax" / "_src" / "magic.py").write_text(
        "import typing\n\ndef clip_by_magic(limit, *, eps=1e-6):\n    pass\n\ndef _hidden():\n    pass\n\n"
        "class MagicState(typing.NamedTuple):\n    count: int\n")
    (site / "optax" / "extra").mkdir()
    (site / "optax" / "extra" / "__init__.py").write_text("from optax._src.magic import clip_by_magic\n")
    (site / "optax" / "__init__.py").write_text(
        "from typing import Any\nfrom optax import extra\nfrom optax._src.magic import MagicState\n"
        "clip_by_magic = extra.clip_by_magic\nParams = Any\n__all__ = ['clip_by_magic', 'MagicState']\n")
    found = surface.load(site)
    assert found.version == "9.9.9"
    assert sorted(found.callables) == ["optax.MagicState", "optax.clip_by_magic"]
    magic = found.callables["optax.clip_by_magic"]
    assert magic.aliases == ("optax.extra.clip_by_magic",)
    assert [(p.name, p.kind, p.default) for p in magic.params] == [
        ("limit", "positional or keyword", None), ("eps", "keyword-only", "1e-06")]
    result = audit.audit(found, ledger.read(), contracts.ids())
    assert {f.name for f in result.findings if f.problem == audit.Problem.UNKNOWN_CALLABLE} == {
        "optax.MagicState", "optax.clip_by_magic"}


def test_unknown_contract_of_a_parameterless_callable_fails(baseline, contract_ids, tmp_path):
    """A callable without parameters is covered by the contracts it names: they must exist too."""
    assert _findings_with(baseline, contract_ids, tmp_path, 'contracts = ["masks/test_zero_nans"',
                          'contracts = ["masks/test_zero_nans_does_not_exist"') == [
        "ledger names a contract that does not exist: optax.zero_nans (contracts: masks/test_zero_nans_does_not_exist)"]
