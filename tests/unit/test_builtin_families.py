"""The family manifest (harness/builtin_families.py) is the one declaration of the built-in families: every
contract module's family is declared and every declared family has a module; the defaults, the
sensitivity scope and the team selection read it; the coverage ledger and the docs' families table
name the same families."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from harness import builtin_families as families
from harness import devices
from harness.builtin import defaults
from harness.coverage import ledger
from harness.stack.selection import builtin_modules, ledger_families, select
from harness.stack.sensitivity import scope

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_SUITE = ROOT / "docs" / "contract-suite.md"
ALL_IN_SCOPE = "all in scope"  # the docs' row of the *_defaults modules, one per family with ledger areas


def test_every_contract_modules_family_is_declared_and_every_declared_family_has_a_module():
    found = {m.family for m in builtin_modules.modules()}
    assert sorted(found - set(families.BY_NAME)) == []  # a module of an undeclared family: declare it
    assert sorted(set(families.BY_NAME) - found) == []  # a declared family without a module
    assert len(families.BY_NAME) == len(families.FAMILIES)  # no name declared twice
    assert devices.FAMILY in families.BY_NAME


def test_every_ledger_area_is_pinned_by_exactly_one_familys_defaults():
    """Every area with a callable whose parameters the ledger lists has one family pinning their defaults; an
    area whose callables are all still missing (no contract: jax.random's today) has none to pin yet."""
    claimed = [area for f in families.FAMILIES for area in f.ledger_areas]
    listed = {e.area.value for e in ledger.read().in_scope.values() if e.params or e.gaps}
    assert len(claimed) == len(set(claimed)), "an area claimed by two families"
    assert listed <= set(claimed) <= {a.value for a in ledger.Area}, sorted(listed - set(claimed))
    assert defaults.FAMILY_AREAS == families.areas()
    for family in families.areas():  # each family with areas has its defaults module
        assert (ROOT / "harness" / "builtin" / f"test_{family}_defaults.py").is_file(), family


def test_a_family_a_team_can_take_is_named_by_the_ledger_or_by_a_library_use():
    by_ledger = set().union(*ledger_families.families_by_callable().values())
    assert by_ledger <= set(families.BY_NAME)  # the ledger names declared families only
    for family in families.FAMILIES:
        reachable = family.name in by_ledger or bool(family.uses)
        assert reachable == family.team_selectable, family.name
    assert {r.family: r.prefixes for r in select.RULES} == {f.name: f.uses for f in families.FAMILIES if f.uses}


def test_the_sensitivity_scope_is_the_manifests_mutated_modules_in_the_declared_order():
    order = [f.name for f in families.FAMILIES]
    for module, names in scope.MODULES.items():
        assert list(names) == sorted(names, key=order.index), module
        assert all(module in families.BY_NAME[n].mutated for n in names)
    assert set(scope.MODULES) == {m for f in families.FAMILIES for m in f.mutated}
    assert scope.MODULES["optax/transforms/_combining.py"] == ("masks", "accumulation", "training")


def _docs_rows(page: Path) -> list[tuple[str, list[str]]]:
    """(family, the modules it names) of each row of the page's families table."""
    table = page.read_text().split("## The contract families", 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in table.splitlines()[2:]:
        family, modules = (cell.strip() for cell in line.strip("|").split(" | ")[:2])
        # `_adam_variants.py` after `test_optimizers_adam.py` abbreviates test_optimizers_adam_variants.py
        rows.append((family, [m if m.startswith("test_") else f"test_{family}{m}"
                              for m in re.findall(r"`([^`]+)`", modules)]))
    return rows


def _docs_problems(page: Path) -> list[str]:
    """Where the page's families table and the manifest (and the contract modules) disagree."""
    rows = _docs_rows(page)
    problems = [f"family {name} {where}" for name, where in (
        *((n, "is declared but has no row") for n in sorted(set(families.BY_NAME) - {f for f, _ in rows})),
        *((n, "has a row but is not declared") for n in sorted({f for f, _ in rows} - set(families.BY_NAME)
                                                                  - {ALL_IN_SCOPE})))]
    modules = {m.name.rsplit(".", 1)[1] + ".py": m.family for m in builtin_modules.modules()}
    named = set()
    for family, patterns in rows:
        for pattern in patterns:
            matched = fnmatch.filter(modules, pattern)
            if not matched:
                problems.append(f"{pattern} is no contract module")
            elif family != ALL_IN_SCOPE and {modules[m] for m in matched} != {family}:
                problems.append(f"{pattern} is not a module of {family}")
            named |= set(matched)
    return problems + [f"{m} has no row" for m in sorted(set(modules) - named)]


def test_the_docs_families_table_names_the_declared_families_and_every_module_under_its_own():
    assert _docs_problems(CONTRACT_SUITE) == []


def test_the_docs_check_finds_a_missing_family_a_stray_module_and_an_unnamed_one(tmp_path):
    page = tmp_path / "contract-suite.md"
    page.write_text("## The contract families\n\n| family | module | what |\n|---|---|---|\n"
                    "| masks | `test_masks.py`, `test_shapes.py`, `test_nope.py` | x |\n\nAfter.\n")
    problems = _docs_problems(page)
    assert "family optimizers is declared but has no row" in problems
    assert "test_shapes.py is not a module of masks" in problems and "test_nope.py is no contract module" in problems
    assert "test_masks_routing.py has no row" in problems


def test_the_jax_functions_mutated_by_name_are_the_ledgers_in_scope_initialisers_and_draws():
    """JAX_INITIALIZERS and JAX_RANDOM (the lines nox -s sensitivity mutates in their modules) are the ledger's
    in-scope callables of the areas initializer and random, so a callable added to the scope is mutated too."""
    entries = ledger.read().in_scope.values()
    for area, prefix, names in (("initializer", "jax.nn.initializers.", families.JAX_INITIALIZERS),
                                ("random", "jax.random.", families.JAX_RANDOM)):
        assert sorted(e.name.removeprefix(prefix) for e in entries if e.area.value == area) == sorted(names)
    assert scope.NAMED_LINES["jax/_src/nn/initializers.py"] == families.JAX_INITIALIZERS
    assert scope.NAMED_LINES["jax/_src/random/core.py"] == families.JAX_RANDOM
