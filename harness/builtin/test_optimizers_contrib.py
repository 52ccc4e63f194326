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

from harness.builtin import optimizer_runs as runs
from harness.builtin.reference import adopt as adopt_ref, muon as muon_ref

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
                                dict(b1=0.9, b2=0.9999, eps=1e-6, nesterov=False,
                                     clip_value_fn=lambda t: t ** 0.25), 1.0),
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
    """mu_dtype='bfloat16' (adopt and scale_by_adopt): the first moment is kept in bfloat16, the second moment and
    the updates in the params' float32; on bfloat16 params every leaf is bfloat16. Layouts after init and after two
    steps golden (read with jax.eval_shape)."""
    for name, params, tx in (("adopt/mu_bf16", PARAMS0, optax.contrib.adopt(0.1, mu_dtype="bfloat16")),
                             ("scale_by_adopt/mu_bf16", PARAMS0, optax.contrib.scale_by_adopt(mu_dtype="bfloat16")),
                             ("adopt/params_bf16", jax.tree.map(lambda p: np.asarray(p, jnp.bfloat16), PARAMS0),
                              optax.contrib.adopt(0.1))):
        state0, state, updates = runs.shapes_after(tx, params)
        check.layout(f"{name}/state_after_init", state0)
        check.layout(f"{name}/state_after_steps", state)
        check.layout(f"{name}/updates", updates)


# -- Muon --------------------------------------------------------------------------------------------------------
MUON_LAYOUT = {"tall": (3, 2), "wide": (2, 4)}
MUON_GRADS = {k: np.stack([(s * _RNG.standard_normal(shape)).astype(F32) for s in SIZES[:5]])
              for k, shape in MUON_LAYOUT.items()}
MUON_PARAMS = {k: np.zeros(shape, F32) for k, shape in MUON_LAYOUT.items()}
DIMS = {k: optax.contrib.MuonDimensionNumbers(reduction_axis=0, output_axis=1) for k in MUON_LAYOUT}
MUON = dict(ns_steps=3, beta=0.8, eps=1e-6, nesterov=False, adaptive=True, weight_dimension_numbers=DIMS)
NS_WHY = ("matrix products of the normalised momentum (entries up to 1) add terms of either sign: rounding at the "
          "largest entry")
NS_GOLDEN_WHY = ("each quintic Newton-Schulz step sums terms up to |a|+|b|+|c| = 10.25 times the largest entry, and "
                 "each later step multiplies an earlier step's rounding by up to |a| = 3.44: rounding at the largest "
                 "entry times sum_k 10.25 * 3.44^k over the ns_steps steps (167 for 3)")


@functools.cache
def _muon_run():
    def run(grads, params):
        tx = optax.contrib.scale_by_muon(**MUON)
        state0 = tx.init(params)

        def step(state, g):
            u, state = tx.update(g, state, params)
            return state, (u, state)

        _, (u, states) = jax.lax.scan(step, state0, grads)
        return state0, u, states
    return jax.jit(run)


def test_scale_by_muon(check):
    """scale_by_muon(ns_steps=3, beta=0.8, eps=1e-6, nesterov=False, adaptive=True, weight_dimension_numbers: the
    documented 2-D spec, reduction axis 0 and output axis 1, for each leaf), 5 steps on a tall (3, 2) and a wide
    (2, 4) leaf: the bias-corrected momentum, normalised by its Frobenius norm, through 3 quintic Newton-Schulz
    steps with the default coefficients (the tall leaf transposed and back), scaled by <m_hat, O> and by
    sqrt(max(1, fan_out / fan_in)) = sqrt(max(1, cols / rows)); against float64. Updates and the state's layout
    golden, the layouts with mu_dtype='bfloat16' too."""
    state0, u, states = jax.device_get(_muon_run()(MUON_GRADS, MUON_PARAMS))
    coeffs = (3.4445, -4.775, 2.0315)
    for leaf in MUON_LAYOUT:
        expected = muon_ref.muon_updates(list(MUON_GRADS[leaf]), MUON["beta"], coeffs, MUON["ns_steps"], MUON["eps"],
                                         MUON["adaptive"])
        for k, e in enumerate(expected):
            check.reference(f"step {k} update {leaf}", u[leaf][k], e, scale=np.max(np.abs(e)), why=NS_WHY)
    check.layout("scale_by_muon/state_after_init", state0)
    check.layout("scale_by_muon/state_after_steps", _last(states))
    # Stack against stack, the rounding of each Newton-Schulz step's terms (a X, b (X X^T) X, c (X X^T)^2 X: up to
    # |a|+|b|+|c| times the largest entry) is carried through the later steps, each of which can multiply an input
    # error by up to |p'(0)| = |a| (p(s) = a s + b s^3 + c s^5 on the normalised singular values): compared at
    # that operand scale. XLA reassociating a matmul (jax 0.12) moved the tall leaf 13 ulp of its largest entry.
    amplified = sum(sum(map(abs, coeffs)) * abs(coeffs[0]) ** k for k in range(MUON["ns_steps"]))
    largest = {k: np.broadcast_to(np.max(np.abs(v), axis=(1, 2), keepdims=True) * amplified, v.shape)
               for k, v in u.items()}
    check.golden_tree("scale_by_muon/updates", u, scales=largest, why=NS_GOLDEN_WHY)
    state0, state, updates = runs.shapes_after(optax.contrib.scale_by_muon(mu_dtype="bfloat16", weight_dimension_numbers=DIMS),
                                     MUON_PARAMS)
    check.layout("scale_by_muon/mu_bf16/state_after_steps", state)


def test_scale_by_muon_default_dimension_numbers(check):
    """scale_by_muon()'s default weight_dimension_numbers=None is documented as "all parameters are 2D matrices", yet
    optax 0.2.6 raises on a dict of 2-D params (ValueError: a None where the tree has a dict) and on a single 2-D
    array (AttributeError: None has no reduction_axis); muon() itself passes its own spec and works. The error
    types are the contract: a fix shows as a change."""
    def first_update(params):
        tx = optax.contrib.scale_by_muon()
        return jax.eval_shape(lambda p: tx.update(p, tx.init(p))[0], params)
    check.error_contract("scale_by_muon/default_dimension_numbers/dict", first_update, MUON_PARAMS)
    check.error_contract("scale_by_muon/default_dimension_numbers/array", first_update, MUON_PARAMS["tall"])
