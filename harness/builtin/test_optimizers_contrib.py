"""optax.contrib's adaptive optimizers and their update rules, fed a fixed sequence of float32 gradients over a
2-leaf tree (some steps' gradients several times larger, so clipping and normalisation matter).

References (harness/builtin/reference/) are NumPy float64 models of the docstrings and the papers they cite,
fed the float32 gradients the library received. Each configuration is one jitted lax.scan over its steps.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin.reference import adopt as adopt_ref

pytestmark = pytest.mark.family("optimizers")

F32 = np.float32
LAYOUT = {"b": (3,), "w": (2, 2)}
STEPS = 8
SIZES = [1.0, 1.0, 4.0, 0.3, 2.0, 1.0, 6.0, 0.5]  # each step's gradient scale
_RNG = np.random.default_rng(31)
GRADS = {k: np.stack([(s * _RNG.standard_normal(shape)).astype(F32) for s in SIZES]) for k, shape in LAYOUT.items()}
PARAMS0 = {k: _RNG.standard_normal(shape).astype(F32) for k, shape in LAYOUT.items()}
MOMENT_WHY = "a moving average of terms of either sign: rounding at the terms' size"


def _vec(tree):
    return np.concatenate([np.asarray(tree["b"]).ravel(), np.asarray(tree["w"]).ravel()])


@functools.cache
def _run(make):
    """init, then one update per step's gradient, params moved by the updates; jitted once per configuration."""
    def run(grads, params):
        tx = make()
        state0 = tx.init(params)

        def step(carry, g):
            params, state = carry
            u, state = tx.update(g, state, params)
            return (optax.apply_updates(params, u), state), (u, state)

        _, (u, states) = jax.lax.scan(step, (params, state0), grads)
        return state0, u, states
    return jax.jit(run)


def _steps(make):
    state0, u, states = jax.device_get(_run(make)(GRADS, PARAMS0))
    return state0, u, [_vec(jax.tree.map(lambda leaf: leaf[k], u)) for k in range(STEPS)], states


GS = [_vec({k: GRADS[k][t] for k in LAYOUT}).astype(np.float64) for t in range(STEPS)]


def _last(tree):
    return jax.tree.map(lambda leaf: leaf[-1], tree)


# -- ADOPT ------------------------------------------------------------------------------------------------------
def _clip_value(count):
    return 0.6 * count ** 0.25


_ADOPT = {
    "adopt": (lambda: optax.contrib.adopt(0.1, b1=0.8, b2=0.9, eps=1e-3, nesterov=True, clip_value_fn=_clip_value),
              dict(b1=0.8, b2=0.9, eps=1e-3, nesterov=True, clip_value_fn=_clip_value), -0.1),
    "scale_by_adopt": (lambda: optax.contrib.scale_by_adopt(b1=0.7, b2=0.5, eps=0.5, use_clipping=False),
                       dict(b1=0.7, b2=0.5, eps=0.5, nesterov=False, clip_value_fn=None), 1.0),
    "scale_by_adopt/defaults": (lambda: optax.contrib.scale_by_adopt(),
                                dict(b1=0.9, b2=0.9999, eps=1e-6, nesterov=False, clip_value_fn=lambda t: t ** 0.25), 1.0),
}


@pytest.mark.parametrize("config", sorted(_ADOPT))
def test_adopt(check, config):
    """8 steps of ADOPT: nothing moves on the first call (v_0 = g_0**2), then the update is the momentum of the
    gradient normalised by the previous second moment (max(sqrt(v), eps)), clipped at clip_value_fn(t):
    adopt(lr 0.1, b1 0.8, b2 0.9, eps 1e-3, nesterov, clip 0.6 t**0.25, binding on the large steps);
    scale_by_adopt without clipping and an eps (0.5) above some sqrt(v); scale_by_adopt's defaults (clip at
    t**0.25). Against float64; updates and the state's layout golden."""
    make, hyper, lr = _ADOPT[config]
    state0, u, us, states = _steps(make)
    expected = adopt_ref.adopt(GS, **hyper)
    for k in range(STEPS):
        check.reference(f"step {k} update", us[k], lr * expected[k], scale=abs(lr) * np.max(np.abs(expected[k])),
                        why=MOMENT_WHY)
    check.layout(f"{config}/state_after_init", state0)
    check.layout(f"{config}/state_after_steps", _last(states))
    check.golden_tree(f"{config}/updates", u)


def test_adopt_mu_dtype(check):
    """mu_dtype='bfloat16' (adopt and scale_by_adopt): the first moment is kept in bfloat16, the second moment and the updates in the
    params' float32; on bfloat16 params every leaf is bfloat16. Layouts after init and one step golden."""
    for name, params, tx in (("adopt/mu_bf16", PARAMS0, optax.contrib.adopt(0.1, mu_dtype="bfloat16")),
                             ("scale_by_adopt/mu_bf16", PARAMS0, optax.contrib.scale_by_adopt(mu_dtype="bfloat16")),
                             ("adopt/params_bf16", jax.tree.map(lambda p: np.asarray(p, jnp.bfloat16), PARAMS0),
                              optax.contrib.adopt(0.1))):
        state0, state, updates = _shapes(tx, params)
        check.layout(f"{name}/state_after_init", state0)
        check.layout(f"{name}/state_after_steps", state)
        check.layout(f"{name}/updates", updates)


def _shapes(tx, params):
    """The state after init and after two updates, and the updates, by shape and dtype only (jax.eval_shape:
    nothing is compiled or run), as zeros of those shapes and dtypes for check.layout."""
    def init_and_steps(params):
        state0 = tx.init(params)
        grads = jax.tree.map(jnp.ones_like, params)
        _, state = tx.update(grads, state0, params)
        updates, state = tx.update(grads, state, params)
        return state0, state, updates
    return jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), jax.eval_shape(init_and_steps, params))
