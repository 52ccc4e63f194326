"""Non-finite values through every clipping and normalising transform of the ledger: each element's finiteness
after two steps from a gradient holding NaN, +inf and -inf, a golden fact (harness/builtin/nonfinite.py says why
and how). A global norm that meets a NaN may spread it to every leaf; a clip may keep an infinity or bound it."""

import pytest

from harness.builtin import nonfinite

pytestmark = pytest.mark.family("clipping")

NOT_A_TRANSFORM = "not a transform: a function of a tree, whose non-finite inputs the clipping checks of the tree " \
                  "functions take"
TRANSFORMS = nonfinite.Transforms(
    areas=("clip",),
    arguments={
        "optax.adaptive_grad_clip": dict(clipping=0.5),
        "optax.clip": dict(max_delta=0.5),
        "optax.clip_by_block_rms": dict(threshold=0.5),
        "optax.clip_by_global_norm": dict(max_norm=1.0),
    },
    set_aside={
        "optax.differentially_private_aggregate": "its gradients are per example (a batch axis first), not a step's",
        "optax.global_norm": NOT_A_TRANSFORM,
        "optax.per_example_global_norm_clip": NOT_A_TRANSFORM,
        "optax.per_example_layer_norm_clip": NOT_A_TRANSFORM,
        "optax.transforms.unitwise_clip": NOT_A_TRANSFORM,
        "optax.transforms.unitwise_norm": NOT_A_TRANSFORM,
        "optax.tree_utils.tree_norm": NOT_A_TRANSFORM,
    },
)


test_nonfinite_through_the_update, test_every_transform_is_run_or_set_aside = nonfinite.tests(
    TRANSFORMS, at_least=8)
