"""Non-finite values through every masking, routing and skipping transform of the ledger: each element's
finiteness after two steps from a gradient holding NaN, +inf and -inf, a golden fact (harness/builtin/nonfinite.py
says why and how). A mask that stops passing a NaN on, a skip that stops skipping it, a zeroing that starts
multiplying by it: each shows as the leaf's letters."""

import optax
import pytest

from harness.builtin import nonfinite

pytestmark = pytest.mark.family("masks")

SGD = optax.sgd(nonfinite.C)
W_ONLY = {"w": True, "b": False}  # the leaf holding the non-finite values is the one masked in (or frozen)
TRANSFORMS = nonfinite.Transforms(
    areas=("mask",),
    arguments={
        "optax.apply_if_finite": dict(inner=SGD, max_consecutive_errors=2),
        "optax.conditionally_mask": dict(inner=SGD, should_transform_fn=lambda step: step % 2 == 0),
        "optax.conditionally_transform": dict(inner=SGD, should_transform_fn=lambda step: step % 2 == 0),
        "optax.freeze": dict(mask=W_ONLY),
        "optax.masked": dict(inner=SGD, mask=W_ONLY),
        "optax.partition": dict(transforms={"sgd": SGD, "zero": optax.set_to_zero()},
                                param_labels={"w": "sgd", "b": "zero"}),
        "optax.selective_transform": dict(optimizer=SGD, freeze_mask={"w": False, "b": True}),
    },
    set_aside={
        "optax.MaskedNode": "not a transform: the placeholder a masked state holds",
        "optax.chain": "its transforms are positional: every family's chains run it (empty, 0.2.6's init raises)",
        "optax.periodic_update": "not a transform: a function of two trees and a step count",
        "optax.skip_large_updates": "not a transform: MultiSteps' should_skip_update_fn, run by the accumulation "
                                    "family's non-finite checks",
        "optax.skip_not_finite": "not a transform: MultiSteps' should_skip_update_fn, run by the accumulation "
                                 "family's non-finite checks",
    },
)


test_nonfinite_through_the_update, test_every_transform_is_run_or_set_aside = nonfinite.tests(
    TRANSFORMS, at_least=10)
