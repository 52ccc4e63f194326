"""The compositions family's case list (harness/builtin/compositions.py) and the pairwise construction
behind it (harness/builtin/pairwise.py): every two choices meet in some case, the ids are the same every
run, an optimizer added to the ledger adds cases without changing any other's id (golden keys)."""

import itertools

import pytest

from harness.builtin import compositions, pairwise
from harness.builtin.compositions import Case, Mode

SIZES = [(2, 2), (3, 1, 2), (4, 4, 4, 4, 3, 3, 2), (2,) * 9, (5, 2, 3), (3, 3, 3, 3)]


def _all(sizes):
    return {(i, a, j, b) for i, j in itertools.combinations(range(len(sizes)), 2)
            for a in range(sizes[i]) for b in range(sizes[j])}


@pytest.mark.parametrize("sizes", SIZES, ids=str)
def test_all_pairs_covers_every_pair_of_levels(sizes):
    rows = pairwise.all_pairs(sizes)
    assert pairwise.covered(rows, sizes) == _all(sizes)
    assert all(len(row) == len(sizes) and all(0 <= v < n for v, n in zip(row, sizes)) for row in rows)
    assert len(rows) < max(1, *[a * b for a, b in itertools.combinations(sizes, 2)]) + sum(sizes)  # not the product
    assert rows == pairwise.all_pairs(sizes)  # deterministic


def test_all_pairs_is_near_the_fewest_rows_on_the_familys_factors():
    assert len(pairwise.all_pairs((3, 3, 3, 3))) == 9  # an orthogonal array: the fewest possible
    assert len(pairwise.all_pairs((4, 4, 4, 4, 3, 3, 2))) <= 22  # 16 at best


def test_all_pairs_keeps_its_start_rows_first_and_adds_only_what_they_miss():
    sizes = (3, 3, 2)
    start = [(0, 0, 1), (2, 2, 1)]
    rows = pairwise.all_pairs(sizes, start)
    assert rows[:2] == start and pairwise.covered(rows, sizes) == _all(sizes)
    full = [tuple(r) for r in itertools.product(range(3), range(3), range(2))]
    assert pairwise.all_pairs(sizes, full) == full  # nothing left to cover


@pytest.mark.parametrize("sizes, start", [((2, 0), ()), ((2, 2), [(0, 2)]), ((2, 2), [(0,)])])
def test_all_pairs_refuses_a_factor_without_levels_or_a_start_row_out_of_range(sizes, start):
    with pytest.raises(ValueError):
        pairwise.all_pairs(sizes, start)


@pytest.mark.parametrize("sizes", SIZES, ids=str)
def test_each_choice_shows_every_level_of_every_factor_in_max_rows(sizes):
    rows = pairwise.each_choice(sizes)
    assert len(rows) == max(sizes)
    assert all({row[f] for row in rows} == set(range(n)) for f, n in enumerate(sizes))


# -- the family's cases ---------------------------------------------------------------------------
NAMES = ("optax.adam", "optax.adamw", "optax.sgd")


def test_every_two_choices_meet_in_some_case_the_optimizer_included():
    cases = compositions.cases(NAMES)
    sizes = (len(NAMES), *(len(f) for f in compositions.FACTORS))
    assert pairwise.covered(compositions.rows(cases), sizes) == _all(sizes)
    assert len(cases) < len(NAMES) * 4 * 4 * 4  # far from the product


def test_ids_are_unique_readable_and_the_same_every_run():
    cases = compositions.cases(NAMES)
    ids = [c.id for c in cases]
    assert len(set(ids)) == len(ids) and ids == [c.id for c in compositions.cases(NAMES)]
    plain = Case("optax.adam", *(f[0] for f in compositions.FACTORS))
    assert plain.id == "adam-inject_none-lr_float-k_none-wrap_none-decay_none-clip_none-jit"
    assert plain in cases


def test_each_eager_case_has_its_jitted_twin_among_the_cases():
    cases = compositions.cases(NAMES)
    eager = [c for c in cases if c.mode is Mode.EAGER]
    assert eager and all(c.but(mode=Mode.JIT) in cases for c in eager)
    assert len(eager) <= 4 + len(NAMES) - 1  # eager (0.1 s a MultiSteps step) only where a pair needs it


def test_an_optimizer_added_to_the_ledger_adds_cases_and_changes_no_other_id():
    before = compositions.cases(NAMES)
    after = compositions.cases((*NAMES, "optax.aaa_new", "optax.lion"))
    assert [c for c in after if c.optimizer in NAMES] == list(before)
    added = [c for c in after if c.optimizer == "optax.lion"]
    assert added and {c.inject for c in added} == set(compositions.FACTORS[0])


def test_the_optimizers_come_from_the_ledgers_optimizer_area(tmp_path):
    ledger = tmp_path / "ledger.toml"
    named = 'contracts = ["compositions/test_composition"]\n'
    ledger.write_text('[in_scope."optax.sgd"]\narea = "optimizer"\nmissing = "x"\n' + named + '\n'
                      '[in_scope."optax.lion"]\narea = "optimizer"\nmissing = "x"\n' + named + '\n'
                      '[in_scope."optax.yogi"]\narea = "optimizer"\nmissing = "x"\n\n'  # not named: not combined
                      '[in_scope."optax.trace"]\narea = "accumulate"\nmissing = "x"\n' + named)
    assert compositions.optimizers(ledger) == ("optax.lion", "optax.sgd")
    assert set(NAMES) <= set(compositions.optimizers())  # the committed ledger's


def test_a_ledger_without_the_anchor_optimizer_is_told_what_to_add():
    with pytest.raises(LookupError, match="optax.adam.*add it to harness/coverage/ledger.toml"):
        compositions.cases(("optax.sgd",))


def test_an_optimizer_that_needs_more_than_a_learning_rate_is_named_with_the_fix(monkeypatch):
    def needs_more(learning_rate, beta):
        raise AssertionError("not called")

    monkeypatch.setattr(compositions, "resolve", lambda name: needs_more)
    with pytest.raises(TypeError, match=r"optax.x requires \['beta'\] besides learning_rate: .* in OPTIMIZER_ARGS"):
        compositions.optimizer_factory("optax.x")
    monkeypatch.setitem(compositions.OPTIMIZER_ARGS, "optax.x", {"beta": 2.0})
    assert compositions.optimizer_factory("optax.x").keywords == {"beta": 2.0}  # the parameter set given
    monkeypatch.setattr(compositions, "resolve", lambda name: lambda b1=0.9: None)
    with pytest.raises(TypeError, match="optax.y has no learning_rate parameter"):
        compositions.optimizer_factory("optax.y")


def test_the_plain_optimizer_as_injected_gets_its_numeric_defaults_as_arrays():
    import jax.numpy as jnp

    def factory(learning_rate, b1=0.9, steps=3, nesterov=False, mu_dtype=None):
        raise AssertionError("not called")

    found = compositions._as_injected(factory)
    assert sorted(found) == ["b1", "steps"]
    assert found["b1"].dtype == jnp.float32 and float(found["b1"]) == pytest.approx(0.9)
    assert found["steps"].dtype == jnp.int32 and int(found["steps"]) == 3
