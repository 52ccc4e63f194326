"""The non-finite modules' set of transforms (harness.builtin.nonfinite.Transforms): derived from the ledger's
areas, each built from what it requires, and on a stack that lacks one, that one is not applicable (its check is
skipped there) rather than a failure of the completeness test that stops an older stack's recording."""

import pytest

from harness.builtin import defaults, nonfinite


def _needs_learning_rate(learning_rate):
    return ("built", learning_rate)


def _needs_more(learning_rate, decay):
    return ("built", learning_rate, decay)


@pytest.fixture
def library(monkeypatch):
    """A made-up library of three optimizers in the ledger's area, one of them missing from the stack."""
    found = {"lib.plain": _needs_learning_rate, "lib.more": _needs_more}

    def resolve(name):
        if name not in found:
            raise AttributeError(f"module 'lib' has no attribute {name.split('.')[-1]!r}")
        return found[name]

    monkeypatch.setattr(defaults, "resolve", resolve)
    monkeypatch.setattr(defaults, "ledger_in_scope_of", lambda area: ("lib.gone", "lib.more", "lib.plain"))
    return found


def test_a_callable_the_stack_lacks_is_not_unaccounted(library):
    transforms = nonfinite.Transforms(areas=("optimizer",), arguments={"lib.more": {"decay": 0.5}}, set_aside={})
    assert transforms.run == ("lib.gone", "lib.more", "lib.plain")
    assert transforms.unaccounted() == []


def test_a_required_argument_not_given_and_a_stale_name_are_unaccounted(library):
    transforms = nonfinite.Transforms(areas=("optimizer",), arguments={}, set_aside={"lib.renamed": "why"})
    problems = transforms.unaccounted()
    assert any("lib.renamed" in p for p in problems), problems
    assert any("lib.more requires ['decay']" in p for p in problems), problems


def test_a_transform_is_built_from_the_learning_rate_and_its_arguments(library):
    transforms = nonfinite.Transforms(areas=("optimizer",), arguments={"lib.more": {"decay": 0.5}}, set_aside={})
    assert transforms.make("lib.plain") == ("built", nonfinite.C)
    assert transforms.make("lib.more", decay=0.25) == ("built", nonfinite.C, 0.25)


def _refuses_an_empty_leaf(learning_rate):
    """An SGD whose update raises at a zero-size leaf, as a transform that reshapes or divides by a size may."""
    import jax
    import optax

    def update(updates, state, params=None):
        if any(leaf.size == 0 for leaf in jax.tree_util.tree_leaves(updates)):
            raise ValueError("an empty leaf")
        return jax.tree_util.tree_map(lambda g: -learning_rate * g, updates), state

    return optax.GradientTransformation(lambda params: optax.EmptyState(), update)


def test_an_empty_leaf_gives_the_other_leafs_finiteness_or_the_error_and_the_other_steps_stand(monkeypatch):
    import optax

    found = {"lib.sgd": optax.sgd, "lib.refuses": _refuses_an_empty_leaf}
    monkeypatch.setattr(defaults, "resolve", found.__getitem__)
    monkeypatch.setattr(defaults, "ledger_in_scope_of", lambda area: tuple(found))
    monkeypatch.setattr(defaults, "ledger_params_of", lambda area, param: ())
    transforms = nonfinite.Transforms(areas=("optimizer",), arguments={}, set_aside={})
    plain = nonfinite.steps(transforms, "lib.sgd")
    assert plain[nonfinite.EMPTY_STEP] == {"b": "", "w": "ffff"}
    refused = nonfinite.steps(transforms, "lib.refuses")
    assert refused[nonfinite.EMPTY_STEP] == {"raises": "ValueError"}
    assert refused["step 1 updates"] == plain["step 1 updates"] == {"b": "fff", "w": "n-+f"}  # -lr times the gradient
