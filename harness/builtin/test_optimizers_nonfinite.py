"""Non-finite values through every optimizer, update rule and weight decay of the ledger: each element's finiteness
after two steps from a gradient holding NaN, +inf and -inf, and (taking weight_decay) after a step at
weight_decay=0 from params holding them, a golden fact (harness/builtin/nonfinite.py says why and how)."""

import numpy as np
import optax
import pytest

from harness.builtin import nonfinite

pytestmark = pytest.mark.family("optimizers")

TRANSFORMS = nonfinite.Transforms(
    areas=("optimizer", "update_rule", "weight_decay"),
    arguments={
        "optax.add_noise": dict(eta=0.01, gamma=0.55, key=0),
        "optax.scale": dict(step_size=-nonfinite.C),
        "optax.contrib.mechanize": dict(base_optimizer=optax.sgd(nonfinite.C)),
        "optax.contrib.schedule_free": dict(base_optimizer=optax.sgd(nonfinite.C), learning_rate=nonfinite.C),
        "optax.add_decayed_weights": dict(weight_decay=1e-2),
    },
    # the step sizes computed from the loss take it as value=
    update_arguments={name: {"value": np.float32(1.0)} for name in (
        "optax.contrib.momo", "optax.contrib.momo_adam", "optax.polyak_sgd", "optax.scale_by_polyak")},
    set_aside={
        "optax.lbfgs": "its update takes value, grad and value_fn (its line search): test_optimizers_lbfgs",
        "optax.scale_by_zoom_linesearch": "a line search: its update takes value, grad and value_fn",
        "optax.scale_by_backtracking_linesearch": "a line search: its update takes value, grad and value_fn",
        "optax.contrib.sophia": "its update takes obj_fn (its Hessian estimator): test_optimizers_contrib",
        "optax.contrib.sam": "it alternates two optimizers over its own adversarial params: test_optimizers_contrib",
        "optax.lookahead": "its params are LookaheadParams (fast and slow), not the params a step is given",
        "optax.contrib.schedule_free_eval_params": "not a transform: the params to evaluate, from a state",
        "optax.scale_gradient": "not a transform: it scales the gradient flowing back through its inputs",
        "optax.contrib.scale_by_muon": "matrices only (its orthogonalisation of a vector leaf raises): "
                                       "optax.contrib.muon routes the vector to Adam and is run here",
    },
)


test_nonfinite_through_the_update, test_every_transform_is_run_or_set_aside = nonfinite.tests(
    TRANSFORMS, at_least=60)
