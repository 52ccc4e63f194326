"""Timings of the operations a training job repeats: informational, reported under "performance".

Each is compiled once (timed separately) and then timed after warm-up with block_until_ready.
The comparison shows candidate/baseline ratios; timings never change the verdict's exit status.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

pytestmark = [pytest.mark.family("performance"), pytest.mark.performance]

_RNG = np.random.default_rng(0)
PARAMS = {"kernel": jnp.asarray(_RNG.standard_normal((64, 32)), jnp.float32),
          "bias": jnp.zeros((32,), jnp.float32), "scale": jnp.ones((), jnp.float32)}
GRADS = jax.tree.map(lambda p: jnp.asarray(_RNG.standard_normal(p.shape), jnp.float32), PARAMS)


def test_multisteps_update(timing):
    tx = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
    state = tx.init(PARAMS)
    timing("multisteps_adam_update", lambda g, s, p: tx.update(g, s, p), GRADS, state, PARAMS)


def test_schedule_evaluation(timing):
    schedule = optax.warmup_cosine_decay_schedule(0.0, 0.1, warmup_steps=100, decay_steps=10_000)
    timing("warmup_cosine_schedule_1k_steps", schedule, jnp.arange(1000))


def test_global_norm_clipping(timing):
    tx = optax.clip_by_global_norm(1.0)
    timing("clip_by_global_norm", lambda g: tx.update(g, tx.init(PARAMS))[0], GRADS)


def test_training_step(timing):
    """One step of a small MLP: forward, loss, grad, clip -> adamw, apply (MultiSteps k=2)."""
    x = jnp.asarray(_RNG.standard_normal((32, 64)), jnp.float32)
    y = jnp.asarray(_RNG.integers(0, 32, 32))
    tx = optax.MultiSteps(optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3)), every_k_schedule=2)

    def loss(params):
        logits = x @ params["kernel"] + params["bias"]
        return optax.softmax_cross_entropy_with_integer_labels(logits * params["scale"], y).mean()

    def step(params, state):
        grads = jax.grad(loss)(params)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    timing("training_step", step, PARAMS, tx.init(PARAMS))
