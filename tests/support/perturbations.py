"""Deliberate faults in Optax, for proving that the contract suite notices them.

Loaded as a pytest plugin (-p tests.support.perturbations) in a child pytest run of the real
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


# -- near the threshold: float32 outputs moved by a few ulps ---------------------------------------------
# x * (1 + n * 2**-23) moves a float32 value by n to 2n ulps (n ulps at the bottom of its binade, 2n
# at the top), rounded: n=1 stays within half of the golden allowance (8 ulps), n=16 is at least twice it.
def _nudge(n):
    def nudge(x):
        x = jnp.asarray(x)
        return x * jnp.asarray(1 + n * 2.0**-23, x.dtype) if x.dtype in (jnp.float32, jnp.complex64) else x
    return lambda tree: jax.tree.map(nudge, tree)


def _nudged_multisteps(n):
    """MultiSteps whose updates and accumulator are nudged (the state values of every mini-step)."""
    class Nudged(_ORIGINAL_MULTISTEPS):
        def update(self, updates, state, params=None, **extra):
            out, state = super().update(updates, state, params, **extra)
            return _nudge(n)(out), state._replace(acc_grads=_nudge(n)(state.acc_grads))
    return Nudged


def _nudged_transform(name, n):
    """optax.<name>(...) whose updates are nudged."""
    original = getattr(optax, name)

    def make(*args, **kwargs):
        inner = original(*args, **kwargs)

        def update(updates, state, params=None, **extra):
            out, state = inner.update(updates, state, params, **extra)
            return _nudge(n)(out), state
        return optax.GradientTransformationExtraArgs(inner.init, update)
    return make


def _nudged_schedule(n):
    original = optax.cosine_decay_schedule

    def make(*args, **kwargs):
        schedule = original(*args, **kwargs)
        return lambda count: _nudge(n)(schedule(count))
    return make


def _nudged_apply_updates(n):
    """The parameters nudged once, at the first update: a compiler that rounds one step differently."""
    original, calls = optax.apply_updates, [0]

    def apply(params, updates):
        calls[0] += 1
        out = original(params, updates)
        return _nudge(n)(out) if calls[0] == 1 else out
    return apply


NEAR_THRESHOLD = {
    "multisteps": lambda n: setattr(optax, "MultiSteps", _nudged_multisteps(n)),
    "apply_if_finite": lambda n: setattr(optax, "apply_if_finite", _nudged_transform("apply_if_finite", n)),
    "clip": lambda n: setattr(optax, "clip_by_global_norm", _nudged_transform("clip_by_global_norm", n)),
    "schedule": lambda n: setattr(optax, "cosine_decay_schedule", _nudged_schedule(n)),
    "apply_updates": lambda n: setattr(optax, "apply_updates", _nudged_apply_updates(n)),
}


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
    if fault and fault.startswith("nudge-"):  # nudge-<target>-<n ulps>
        _, target, n = fault.split("-")
        NEAR_THRESHOLD[target](int(n))
    elif fault:
        FAULTS[fault]()
