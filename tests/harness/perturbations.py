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


FAULTS = {
    "accumulation-scale": lambda: setattr(optax, "MultiSteps", _scaled_multisteps(1.01)),
    "accumulation-step-count": lambda: setattr(optax, "MultiSteps", _OffByOneK),
    "accumulation-dtype": lambda: setattr(optax, "MultiSteps", _Bf16Updates),
    "accumulation-silent": lambda: setattr(optax, "MultiSteps", _Silent),
}


def pytest_configure(config):
    fault = os.environ.get("HARNESS_PERTURB")
    if fault:
        FAULTS[fault]()
