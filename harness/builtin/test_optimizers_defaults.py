"""The defaults of every optimizers callable the ledger lists (the alias optimizers and the update rules they
are built from): a changed default changes what a caller who leaves the parameter out gets, with no change
to their code (harness/builtin/defaults.py says how)."""

import pytest

from harness.builtin import defaults

pytestmark = pytest.mark.family("optimizers")
test_parameter_defaults = defaults.parameter_defaults_test("optimizers")
