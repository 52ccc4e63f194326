"""Non-finite values through every accumulating transform of the ledger (MultiSteps, apply_every, ema, trace):
each element's finiteness after two steps from a gradient holding NaN, +inf and -inf, a golden fact
(harness/builtin/nonfinite.py says why and how; test_accumulation_nonfinite.py has MultiSteps' skip functions)."""

import optax
import pytest

from harness.builtin import nonfinite

pytestmark = pytest.mark.family("accumulation")

TRANSFORMS = nonfinite.Transforms(
    areas=("accumulate",),
    arguments={
        "optax.MultiSteps": dict(opt=optax.sgd(nonfinite.C), every_k_schedule=2),
        "optax.ema": dict(decay=0.9),
        "optax.trace": dict(decay=0.9),
    },
    set_aside={},
)


test_nonfinite_through_the_update, test_every_transform_is_run_or_set_aside = nonfinite.tests(
    TRANSFORMS, at_least=4)
