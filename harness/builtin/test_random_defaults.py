"""The defaults of every jax.random callable the ledger lists: a changed default changes what a caller who
leaves the parameter out gets, with no change to their code (harness/builtin/defaults.py says how)."""

import pytest

from harness.builtin import defaults

pytestmark = pytest.mark.family("random")

FAMILY = "random"


@pytest.mark.parametrize("name", sorted(defaults.ledger_params(FAMILY)))
def test_parameter_defaults(check, name):
    """Every parameter's default (or that it is required) and kind equal the baseline's."""
    defaults.check_defaults(check, FAMILY, name)
