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
