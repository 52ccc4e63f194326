"""optax.contrib's adaptive optimizers and their update rules, fed a fixed sequence of float32 gradients over a
2-leaf tree (some steps' gradients several times larger, so clipping and normalisation matter).

References (harness/builtin/reference/) are NumPy float64 models of the docstrings and the papers they cite,
fed the float32 gradients the library received. Each configuration is one jitted lax.scan over its steps.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin import optimizer_checks as oc, optimizer_runs as runs
from harness.builtin.reference import adam_family as adam_ref, adopt as adopt_ref, muon as muon_ref

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


def _steps(run):
    """The module's run (optimizer_runs.RUNS: every run of the family one jitted program) of one configuration:
    the state after init, the updates (stacked and per step, as one vector) and the states after each step."""
    run = run()
    state0, u, states = runs.at(run.init, 0), runs.at(run.updates, 0), runs.at(run.states, 0)
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
    "adopt/no_clipping": (lambda: optax.contrib.adopt(0.05, b1=0.6, b2=0.95, eps=1e-2, use_clipping=False),
                          dict(b1=0.6, b2=0.95, eps=1e-2, nesterov=False, clip_value_fn=None), -0.05),
    "scale_by_adopt": (lambda: optax.contrib.scale_by_adopt(b1=0.7, b2=0.5, eps=0.5, use_clipping=False),
                       dict(b1=0.7, b2=0.5, eps=0.5, nesterov=False, clip_value_fn=None), 1.0),
    "scale_by_adopt/defaults": (lambda: optax.contrib.scale_by_adopt(),
                                dict(b1=0.9, b2=0.9999, eps=1e-6, nesterov=False,
                                     clip_value_fn=lambda t: t ** 0.25), 1.0),
}


_ADOPT_RUNS = {config: runs.RUNS.add(f"contrib/{config}", make, [], PARAMS0, GRADS)
               for config, (make, _, _) in _ADOPT.items()}


@pytest.mark.parametrize("config", sorted(_ADOPT))
def test_adopt(check, config):
    """8 steps of ADOPT: nothing moves on the first call (v_0 = g_0**2), then the update is the momentum of the
    gradient normalised by the previous second moment (max(sqrt(v), eps)), clipped at clip_value_fn(t):
    adopt(lr 0.1, b1 0.8, b2 0.9, eps 1e-3, nesterov, clip 0.6 t**0.25, binding on the large steps); adopt
    without clipping (use_clipping=False: the large steps' normalised gradients pass whole);
    scale_by_adopt without clipping and an eps (0.5) above some sqrt(v); scale_by_adopt's defaults (clip at
    t**0.25). Against float64; updates and the state's layout golden."""
    _, hyper, lr = _ADOPT[config]
    state0, u, us, states = _steps(_ADOPT_RUNS[config])
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
MUON = dict(ns_steps=3, beta=0.8, eps=1e-6, nesterov=False, adaptive=True)


def _dims() -> dict:
    """The documented 2-D spec for each leaf. Built when a check runs, not at import: on a stack without
    MuonDimensionNumbers the Muon checks alone are not applicable (harness.contract.stack_lacks)."""
    return {k: optax.contrib.MuonDimensionNumbers(reduction_axis=0, output_axis=1) for k in MUON_LAYOUT}
NS_WHY = ("matrix products of the normalised momentum (entries up to 1) add terms of either sign: rounding at the "
          "largest entry")
NS_GOLDEN_WHY = ("each quintic Newton-Schulz step sums terms up to |a|+|b|+|c| = 10.25 times the largest entry, and "
                 "each later step multiplies an earlier step's rounding by up to |a| = 3.44: rounding at the largest "
                 "entry times sum_k 10.25 * 3.44^k over the ns_steps steps (167 for 3)")


_MUON_RUN = runs.RUNS.add("contrib/scale_by_muon", lambda: optax.contrib.scale_by_muon(**MUON, weight_dimension_numbers=_dims()), [], MUON_PARAMS,
                          MUON_GRADS)  # scale_by_muon reads no params: the steps' moved params change nothing


def test_scale_by_muon(check):
    """scale_by_muon(ns_steps=3, beta=0.8, eps=1e-6, nesterov=False, adaptive=True, weight_dimension_numbers: the
    documented 2-D spec, reduction axis 0 and output axis 1, for each leaf), 5 steps on a tall (3, 2) and a wide
    (2, 4) leaf: the bias-corrected momentum, normalised by its Frobenius norm, through 3 quintic Newton-Schulz
    steps with the default coefficients (the tall leaf transposed and back), scaled by <m_hat, O> and by
    sqrt(max(1, fan_out / fan_in)) = sqrt(max(1, cols / rows)); against float64. Updates and the state's layout
    golden, the layouts with mu_dtype='bfloat16' too."""
    run = _MUON_RUN()
    state0, u, states = runs.at(run.init, 0), runs.at(run.updates, 0), runs.at(run.states, 0)
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
    amplified = ns_amplification(coeffs, MUON["ns_steps"])
    largest = {k: np.broadcast_to(np.max(np.abs(v), axis=(1, 2), keepdims=True) * amplified, v.shape)
               for k, v in u.items()}
    check.golden_tree("scale_by_muon/updates", u, scales=largest, why=NS_GOLDEN_WHY)
    state0, state, updates = runs.shapes_after(optax.contrib.scale_by_muon(mu_dtype="bfloat16", weight_dimension_numbers=_dims()),
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


# -- muon: the composition -------------------------------------------------------------------------------------
# A bias (Adam), a (2, 3, 2) kernel (Adam by default, 3-D; with dimension numbers, a batch of two (3, 2) matrices:
# batch axis 0, reduction axis 1, output axis 2) and a (2, 4) matrix (Muon).
COMPOSITION_LAYOUT = {"b": (3,), "k": (2, 3, 2), "w": (2, 4)}
COMPOSITION_GRADS = {k: np.stack([(s * _RNG.standard_normal(shape)).astype(F32) for s in SIZES[:5]])
                     for k, shape in COMPOSITION_LAYOUT.items()}
COMPOSITION_PARAMS = {k: _RNG.standard_normal(shape).astype(F32) for k, shape in COMPOSITION_LAYOUT.items()}
ADAM_FALLBACK_DEFAULTS = dict(learning_rate=0.1, beta=0.95, eps=1e-8, weight_decay=0.0, adam_b1=0.9, adam_b2=0.999,
                              adam_eps_root=0.0, adam_weight_decay=0.0)
# Per-step Newton-Schulz coefficients: modded-nanogpt's triple, a milder one, then the classical quintic
# (15/8, -10/8, 3/8) that converges to 1; three steps, whatever ns_steps says (documented as ignored).
NS_ROWS = ((3.4445, -4.775, 2.0315), (2.8, -3.2, 1.2), (1.875, -1.25, 0.375))
def _dimension_numbers() -> dict:
    """Per leaf: Adam's (None), a 3-D kernel's spec, the default 2-D one (built when a check runs, as _dims)."""
    return {"b": None, "k": optax.contrib.MuonDimensionNumbers(reduction_axis=1, output_axis=2),
            "w": optax.contrib.MuonDimensionNumbers()}
MUON_DECAY_MASK = {"b": False, "k": False, "w": True}  # the Muon branch's weight decay on the matrix only


@dataclasses.dataclass(frozen=True)
class Composition:
    """A muon(...) configuration: which leaves Muon takes (the others Adam), its static options, the traced
    hyperparameters' variants."""
    muon_leaves: tuple[str, ...]
    static: dict
    variants: list[dict]
    decayed: tuple[str, ...]  # the Muon leaves weight_decay applies to (weight_decay_mask)
    coeffs: object = (3.4445, -4.775, 2.0315)
    ns_steps: int = 5
    adaptive: bool = False
    given_dimension_numbers: bool = False  # muon_weight_dimension_numbers=_dimension_numbers(), built when run

    def options(self) -> dict:
        """The static options muon is called with."""
        given = {"muon_weight_dimension_numbers": _dimension_numbers()} if self.given_dimension_numbers else {}
        return {**self.static, **given}


COMPOSITIONS = {
    # the dimension numbers muon derives: the 2-D leaf to Muon, the 1-D and 3-D leaves to Adam
    "muon/derived": Composition(("w",), dict(ns_steps=3, nesterov=False),
                                [ADAM_FALLBACK_DEFAULTS, dict(learning_rate=0.05, beta=0.8, eps=1e-3, weight_decay=0.2,
                                                              adam_b1=0.5, adam_b2=0.9, adam_eps_root=0.5,
                                                              adam_weight_decay=0.3)],
                                decayed=("w",), ns_steps=3),
    # given dimension numbers (the 3-D kernel a batch of matrices), per-step coefficients, adaptive, a decay mask
    "muon/given": Composition(("k", "w"), dict(ns_coeffs=NS_ROWS, ns_steps=7, nesterov=False, adaptive=True,
                                               weight_decay_mask=MUON_DECAY_MASK),
                              [dict(learning_rate=0.05, beta=0.7, eps=1e-6, weight_decay=0.4, adam_b1=0.6, adam_b2=0.8,
                                    adam_eps_root=0.1, adam_weight_decay=0.2)],
                              decayed=("w",), coeffs=NS_ROWS, adaptive=True, given_dimension_numbers=True),
}
_COMPOSITION_RUNS = {name: runs.RUNS.add(name, lambda c=c, **h: optax.contrib.muon(**h, **c.options()), c.variants,
                                         COMPOSITION_PARAMS, COMPOSITION_GRADS)
                     for name, c in COMPOSITIONS.items()}
ADAM_WHY = ("Adam's moments sum terms of either sign and its bias corrections 1 - b**t cancel: ulps at the same "
            "formula over |g|, times the corrections' conditioning (optimizer_checks.adam_conditioning)")


def _adam_fallback(grads, seen, h):
    """The Adam leaf's descent steps and their operands' magnitude: adamw(learning_rate, adam_b1, adam_b2, muon's
    eps, adam_eps_root, adam_weight_decay on every Adam leaf), in float64 from zeros."""
    hyper = dict(b1=h["adam_b1"], b2=h["adam_b2"], eps=h["eps"], eps_root=h["adam_eps_root"])
    moments = {"value": (0.0, 0.0), "magnitude": (0.0, 0.0)}
    steps, scales = [], []
    for t, g in enumerate(grads, 1):
        out = {}
        for name, x in (("value", g), ("magnitude", np.abs(g))):
            step = adam_ref.adam(x, *moments[name], t, **hyper)
            moments[name], out[name] = (step.mu, step.nu), step.update
        steps.append(adam_ref.descent(out["value"], seen[t - 1], learning_rate=h["learning_rate"],
                                      weight_decay=h["adam_weight_decay"]))
        conditioning = 1.0 + oc.adam_conditioning()(t, {"b1": h["adam_b1"], "b2": h["adam_b2"]})
        scales.append(h["learning_rate"] * (np.abs(out["magnitude"]) * conditioning
                                            + h["adam_weight_decay"] * np.abs(seen[t - 1])))
    return steps, scales


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_muon(check, name):
    """muon's own composition over 5 steps of a bias, a (2, 3, 2) kernel and a (2, 4) matrix, nesterov=False:
    derived (the default dimension numbers: Muon for 2-D leaves only; ns_steps 3) and given (dimension numbers
    that make the kernel a batch of two (3, 2) matrices and leave the bias to Adam; per-step ns_coeffs, ns_steps
    ignored; adaptive; weight decay masked to the matrix). Muon leaves: -lr * (scale_by_muon's update +
    weight_decay * params); Adam leaves: adamw(adam_b1, adam_b2, eps, adam_eps_root, adam_weight_decay), each
    against float64 for every variant (the defaults, then every traced hyperparameter moved). Updates and the
    state's layout golden; derived: the layouts with mu_dtype='bfloat16' (both branches' momenta); given: that
    ns_steps below the number of coefficient rows is ignored (no error), an error contract."""
    composition, run = COMPOSITIONS[name], _COMPOSITION_RUNS[name]()
    amplified = {}
    for v, h in enumerate(composition.variants):
        h = {k: oc.f32(x) for k, x in h.items()}
        for leaf in COMPOSITION_LAYOUT:
            grads = [np.asarray(g, np.float64) for g in COMPOSITION_GRADS[leaf]]
            seen = oc.f64(run.params[leaf][v])
            if leaf not in composition.muon_leaves:
                expected, scales = _adam_fallback(grads, seen, h)
                check.reference(f"variant {v} {leaf} (Adam) updates", run.updates[leaf][v], np.stack(expected),
                                scale=np.stack(scales), why=ADAM_WHY)
                continue
            orthogonal = muon_ref.muon_updates(grads, h["beta"], composition.coeffs, composition.ns_steps, h["eps"],
                                               composition.adaptive)
            wd = h["weight_decay"] if leaf in composition.decayed else 0.0
            expected = [adam_ref.descent(o, seen[t], learning_rate=h["learning_rate"], weight_decay=wd)
                        for t, o in enumerate(orthogonal)]
            scales = [h["learning_rate"] * (np.max(np.abs(o)) + wd * np.abs(seen[t])) for t, o in enumerate(orthogonal)]
            check.reference(f"variant {v} {leaf} (Muon) updates", run.updates[leaf][v], np.stack(expected),
                            scale=np.stack(scales), why=NS_WHY)
    for leaf in composition.muon_leaves:  # golden at the Newton-Schulz operands' scale (test_scale_by_muon)
        u = run.updates[leaf]
        amplified[leaf] = np.broadcast_to(np.max(np.abs(u), axis=tuple(range(2, u.ndim)), keepdims=True)
                                          * ns_amplification(composition.coeffs, composition.ns_steps), u.shape)
    check.golden_tree(f"{name}/updates", run.updates, scales=amplified, why=NS_GOLDEN_WHY)
    oc.layouts(check, name, run)
    if composition.coeffs is not NS_ROWS:  # mu_dtype: both branches' momenta (one composition is enough)
        state0, state, _ = runs.shapes_after(optax.contrib.muon(0.1, mu_dtype="bfloat16", **composition.options()),
                                             COMPOSITION_PARAMS, steps=1)
        check.layout(f"{name}/mu_bf16/state_after_init", state0)
        check.layout(f"{name}/mu_bf16/state_after_steps", state)
    else:  # the docstring: ns_steps "ignored if ns_coeffs is a tuple of tuples"
        fewer_steps = optax.contrib.muon(0.1, **{**composition.options(), "ns_steps": len(NS_ROWS) - 1})
        check.error_contract(f"{name}/ns_steps_below_rows", runs.shapes_after, fewer_steps, COMPOSITION_PARAMS,
                             steps=1)


def ns_amplification(coeffs, steps: int) -> float:
    """How far the Newton-Schulz steps carry one step's rounding (see NS_GOLDEN_WHY): each step's terms sum up to
    |a|+|b|+|c| times the largest entry, and every later step multiplies that by up to its |a|."""
    rows = muon_ref.coefficient_rows(coeffs, steps)
    return sum(sum(map(abs, row)) * np.prod([abs(later[0]) for later in rows[k + 1:]]) for k, row in enumerate(rows))
