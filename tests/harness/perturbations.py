"""Deliberate faults in Optax, for proving that the contract suite notices them.

Loaded as a pytest plugin (-p tests.harness.perturbations) in a child pytest run of the real
contract suite; HARNESS_PERTURB names the fault. Each one imitates a plausible upstream change.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import optax

_ORIGINAL_MULTISTEPS = optax.MultiSteps


def _scaled_multisteps(factor):
    class Scaled(_ORIGINAL_MULTISTEPS):
        def update(self, updates, state, params=None, **extra):
            out, state = super().update(updates, state, params, **extra)
            return jax.tree.map(lambda u: u * factor, out), state
    return Scaled


class _OffByOneK(_ORIGINAL_MULTISTEPS):
    """Emits one microbatch late, as if the step counter were off by one."""

    def __init__(self, opt, every_k_schedule, **kwargs):
        k = every_k_schedule
        super().__init__(opt, (lambda s: k(s) + 1) if callable(k) else k + 1, **kwargs)


class _Bf16Updates(_ORIGINAL_MULTISTEPS):
    def update(self, updates, state, params=None, **extra):
        out, state = super().update(updates, state, params, **extra)
        return jax.tree.map(lambda u: u.astype(jnp.bfloat16), out), state


class _Silent(_ORIGINAL_MULTISTEPS):
    """Swallows the error for mismatched grads and returns zeros, like a silent broadcast would."""

    def update(self, updates, state, params=None, **extra):
        try:
            return super().update(updates, state, params, **extra)
        except Exception:
            return jax.tree.map(jnp.zeros_like, params), state


_ORIGINAL = {name: getattr(optax, name) for name in ("cosine_decay_schedule", "clip_by_global_norm",
                                                      "add_decayed_weights")}


def _scaled_cosine(*args, **kwargs):
    """The schedule 1% too high everywhere, as if a constant changed."""
    schedule = _ORIGINAL["cosine_decay_schedule"](*args, **kwargs)
    return lambda count: schedule(count) * 1.01


def _per_leaf_clip(max_norm):
    """Each leaf clipped by its own norm: the total stays bounded, the direction does not."""
    def update(updates, state, params=None):
        def clip(t):
            n = jnp.sqrt(jnp.sum(t * t))
            return jnp.where(n > max_norm, t * (max_norm / n), t)
        return jax.tree.map(clip, updates), state
    return optax.GradientTransformation(lambda params: optax.EmptyState(), update)


def _decay_everything(weight_decay=0.0, mask=None):
    """The mask ignored: biases decayed too."""
    return _ORIGINAL["add_decayed_weights"](weight_decay)


def _silent_decay(*args, **kwargs):
    """Mismatched shapes swallowed: updates returned unchanged instead of an error."""
    inner = _ORIGINAL["add_decayed_weights"](*args, **kwargs)

    def update(updates, state, params=None):
        try:
            return inner.update(updates, state, params)
        except Exception:
            return updates, state
    return optax.GradientTransformation(inner.init, update)


FAULTS = {
    "schedules-scale": lambda: setattr(optax, "cosine_decay_schedule", _scaled_cosine),
    "clipping-per-leaf": lambda: setattr(optax, "clip_by_global_norm", _per_leaf_clip),
    "masks-ignored": lambda: setattr(optax, "add_decayed_weights", _decay_everything),
    "shapes-silent": lambda: setattr(optax, "add_decayed_weights", _silent_decay),
    "accumulation-scale": lambda: setattr(optax, "MultiSteps", _scaled_multisteps(1.01)),
    "accumulation-step-count": lambda: setattr(optax, "MultiSteps", _OffByOneK),
    "accumulation-dtype": lambda: setattr(optax, "MultiSteps", _Bf16Updates),
    "accumulation-silent": lambda: setattr(optax, "MultiSteps", _Silent),
}


def pytest_configure(config):
    fault = os.environ.get("HARNESS_PERTURB")
    if fault:
        FAULTS[fault]()
