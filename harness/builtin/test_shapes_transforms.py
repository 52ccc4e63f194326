"""Incompatible shapes for the transforms that keep a params-shaped state or read the params: gradients
transposed (a 3x2 leaf for a 2x3 param), silently broadcastable (a (1,) leaf for a (3,) param) or missing
a key, given to apply_every, trace, ema, adaptive_grad_clip, scale_by_trust_ratio,
keep_params_nonnegative, zero_nans, masked, partition, freeze, selective_transform, conditionally_mask,
conditionally_transform, apply_if_finite, flatten and incremental_update.

As in test_shapes.py, nothing documents the outcome, so the exception type (or "no error") is the
contract and, without an error, the layout of the updates and state. Shapes are decided while tracing,
so each call is traced abstractly (jax.eval_shape: what a jitted call raises or produces, without
compiling 48 programs).
"""

import jax
import jax.numpy as jnp
import optax
import pytest

from harness.contract import trees

pytestmark = pytest.mark.family("shapes")

LR = 0.1


def _spec(shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


PARAMS = {"bias": _spec((3,)), "kernel": _spec((2, 3))}
GRADS = {
    "transposed": {"bias": _spec((3,)), "kernel": _spec((3, 2))},
    "leaf_broadcastable": {"bias": _spec((1,)), "kernel": _spec((2, 3))},
    "missing_key": {"kernel": _spec((2, 3))},
}
MASK = {"bias": False, "kernel": True}


def _momentum():
    return optax.sgd(LR, momentum=0.9)


OPS = {
    "apply_every": lambda: optax.apply_every(2),
    "trace": lambda: optax.trace(0.9),
    "ema": lambda: optax.ema(0.9),
    "adaptive_grad_clip": lambda: optax.adaptive_grad_clip(0.1),
    "scale_by_trust_ratio": lambda: optax.scale_by_trust_ratio(),
    "keep_params_nonnegative": optax.keep_params_nonnegative,
    "zero_nans": optax.zero_nans,
    "masked_momentum": lambda: optax.masked(_momentum(), MASK),
    "partition": lambda: optax.partition({"a": _momentum(), "b": optax.set_to_zero()},
                                         {"bias": "b", "kernel": "a"}),
    "freeze": lambda: optax.freeze(MASK),
    "selective_transform": lambda: optax.selective_transform(_momentum(), freeze_mask=MASK),
    "conditionally_mask": lambda: optax.conditionally_mask(_momentum(), lambda step: step >= 0),
    "conditionally_transform": lambda: optax.conditionally_transform(_momentum(), lambda step: step >= 0),
    "apply_if_finite": lambda: optax.apply_if_finite(_momentum(), 2),
    "flatten": lambda: optax.flatten(_momentum()),
}


def _two_calls(make):
    def run(grads, params):
        tx = make()
        state = tx.init(params)
        for _ in range(2):
            updates, state = tx.update(grads, state, params)
        return {"updates": updates, "state": state}
    return run


def _incremental(grads, params):
    return {"params": optax.incremental_update(grads, params, 0.5)}


RUNS = {**{name: _two_calls(make) for name, make in OPS.items()}, "incremental_update": _incremental}
@pytest.mark.parametrize("op", sorted(RUNS))
def test_mismatched_grads_transforms(check, op):
    """Gradients whose shapes or structure do not match the params (two calls, traced as under jit), one
    check per transform over the three mismatches: the exception raised, or without one the layout of the
    output and state, is the contract."""
    check.describe_input(f"{op} given " + "; ".join(f"{case}: {trees.mismatch(GRADS[case], PARAMS)}"
                                                      for case in sorted(GRADS)))
    for case in sorted(GRADS):
        key = f"transforms/{op}/{case}"
        result = check.error_contract(key, jax.eval_shape, RUNS[op], GRADS[case], PARAMS)
        if not isinstance(result, Exception):
            check.golden_fact(f"{key}/layout", trees.layout(result))
