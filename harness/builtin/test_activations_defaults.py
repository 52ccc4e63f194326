"""The defaults of every activations callable the ledger lists (jax.nn's): a changed default changes what a caller
who leaves the parameter out gets, with no change to their code (harness/builtin/defaults.py says how)."""

import pytest

from harness.builtin import defaults

pytestmark = pytest.mark.family("activations")
test_parameter_defaults = defaults.parameter_defaults_test("activations")
