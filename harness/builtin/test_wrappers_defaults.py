"""The defaults of every callable of the ledger's train_state area (nnx.Optimizer, ModelAndOptimizer, TrainState
and the methods a step calls on them): a changed default changes what a caller who leaves the parameter out
gets, with no change to their code (harness/builtin/defaults.py says how)."""

import pytest

from harness.builtin import defaults

pytestmark = pytest.mark.family("wrappers")
test_parameter_defaults = defaults.parameter_defaults_test("wrappers")
