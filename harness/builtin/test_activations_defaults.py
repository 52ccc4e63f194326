"""The defaults of every activations callable (jax.nn, as the ledger lists it) the ledger lists: a changed default changes what a caller who
leaves the parameter out gets, with no change to their code (harness/builtin/defaults.py says how)."""

import pytest

from harness.builtin import defaults

pytestmark = pytest.mark.family("activations")

FAMILY = "activations"


@pytest.mark.parametrize("name", sorted(defaults.ledger_params(FAMILY)))
def test_parameter_defaults(check, name):
    """Every parameter's default (or that it is required) and kind equal the baseline's."""
    defaults.check_defaults(check, FAMILY, name)


def test_public_modules(check):
    """Each function's __module__ (what JAX's `@export` sets to the public module it is documented in: what
    documentation, pickling by reference and `help` name), a golden fact."""
    from harness.builtin import activation_checks as ac

    nn = ac.nn()
    check.golden_fact("modules", {name: getattr(nn, name).__module__ for name in ac.covered()})
