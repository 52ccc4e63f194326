"""optax.contrib's optimizers that estimate their own step size or curvature: D-Adaptation's dadapt_adamw and
Prodigy (the distance to the solution d), Sophia (a clipped step preconditioned by a Hutchinson estimate of the
Hessian's diagonal) and SAM (ascent steps to an adversarial point, then the outer step), run on the separable
quadratic of harness/builtin/quadratic.py (gradients and Hessian from its objective) for a few steps.

References (harness/builtin/reference/) are NumPy float64 models of the docstrings and the papers they cite, fed
the float32 gradients and params the library saw. All configurations are one jitted program (its trace, lowering
and cache load paid once), each a lax.scan over its steps.
"""

import contextlib
import functools
import io
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin.optimizer_checks import bias_conditioning, f32
from harness.builtin.quadratic import CURV, PARAMS0, TARGET, loss, vec
from harness.builtin.reference import dadaptation as dadapt_ref, sam as sam_ref, sophia as sophia_ref
from harness.contract import trees

pytestmark = pytest.mark.family("optimizers")

STEPS = 8
F32 = np.float32


def _grad(params):
    """The quadratic's gradient CURV (y - TARGET), written out: cheaper to trace than jax.grad of its loss."""
    return {k: CURV[k] * (params[k] - TARGET[k]) for k in params}


def _trajectory(tx, params, steps, **extra):
    """init, then one update per step on the objective's gradient at the current params, which move by it."""
    state0 = tx.init(params)

    def step(carry, _):
        params, state = carry
        g = _grad(params)
        u, state = tx.update(g, state, params, **extra)
        return (optax.apply_updates(params, u), state), (g, u, params, state)

    _, seen = jax.lax.scan(step, (params, state0), None, length=steps)
    return state0, seen


def _flat(tree, steps=STEPS):
    """A tree of leaves stacked over steps -> the steps' flat vectors, [step, element], in the leaves' dtype."""
    return np.stack([vec(jax.tree.map(lambda leaf: leaf[k], tree)) for k in range(steps)])


def _f64(tree, steps=STEPS):
    """The steps' flat vectors as float64: what the references are fed."""
    return list(_flat(tree, steps).astype(np.float64))


def _last(tree):
    return jax.tree.map(lambda leaf: leaf[-1], tree)


def _warmup(k):
    """The learning-rate schedule the docstrings recommend, its warm-up part: 0.2 to 1 over 4 steps."""
    return 0.2 + 0.8 * min(k, 4) / 4


WARMUP = optax.linear_schedule(0.2, 1.0, 4)


# -- D-Adaptation (dadapt_adamw) and Prodigy ------------------------------------------------------------------
BIAS_WHY = ("the step size d lr sqrt(1 - b2**t) / (1 - b1**t): b**t is rounded to float32 near 1 and 1 - b**t "
            "magnifies that by b**t / (1 - b**t) (optimizer_checks.bias_conditioning: 500 at b2 = 0.999, step 2); d is "
            "a ratio of sums of up to two such step sizes (3 times their largest error so far), the update one more "
            "step size times d: ulps at the value times 1 + that many u")


def _step_size_conditioning(b1: float, b2: float, t: int) -> float:
    """The bias-corrected step size's conditioning at step t, in units of u: 1 - b1**t divides it, sqrt(1 - b2**t)
    (halved) multiplies it."""
    return bias_conditioning(b1, t) + bias_conditioning(b2, t) / 2


_DISTANCE = {  # callable -> (make, reference, its arguments)
    "dadapt_adamw": (lambda: optax.contrib.dadapt_adamw(WARMUP, betas=(0.8, 0.95), eps=0.05, estim_lr0=0.05,
                                                        weight_decay=0.1),
                     dadapt_ref.dadapt_adamw,
                     dict(learning_rate=_warmup, b1=0.8, b2=0.95, eps=0.05, estim_lr0=0.05, weight_decay=0.1)),
    "prodigy": (lambda: optax.contrib.prodigy(WARMUP, betas=(0.8, 0.95), beta3=0.9, eps=0.05, estim_lr0=0.01,
                                              estim_lr_coef=3.0, weight_decay=0.1, safeguard_warmup=True),
                dadapt_ref.prodigy,
                dict(learning_rate=_warmup, b1=0.8, b2=0.95, b3=0.9, eps=0.05, estim_lr0=0.01, estim_lr_coef=3.0,
                     weight_decay=0.1, safeguard_warmup=True)),
    # safeguard_warmup at its default (False): the denominator sums d-weighted gradients from the first step
    "prodigy/no_safeguard_warmup": (
        lambda: optax.contrib.prodigy(WARMUP, betas=(0.8, 0.95), beta3=0.9, eps=0.05, estim_lr0=0.01,
                                      estim_lr_coef=3.0, weight_decay=0.1),
        dadapt_ref.prodigy,
        dict(learning_rate=_warmup, b1=0.8, b2=0.95, b3=0.9, eps=0.05, estim_lr0=0.01, estim_lr_coef=3.0,
             weight_decay=0.1, safeguard_warmup=False)),
}


@pytest.mark.parametrize("config", sorted(_DISTANCE))
def test_distance_estimate(check, config):
    """8 steps of D-Adapt AdamW / Prodigy: the distance estimate d (the state's estim_lr) grows from estim_lr0 as
    the gradients' weighted sum correlates with them (D-Adaptation) or with the distance travelled (Prodigy), and
    scales a bias-corrected AdamW step; the step size follows the docstrings' recommended warm-up (0.2 to 1 over 4
    steps). dadapt_adamw(betas (0.8, 0.95), eps 0.05, estim_lr0 0.05, weight_decay 0.1); prodigy(betas (0.8, 0.95),
    beta3 0.9, eps 0.05, estim_lr0 0.01, estim_lr_coef 3, weight_decay 0.1, safeguard_warmup): d grows from step 5.
    eps is a fifth of sqrt(v) or more: it shows. The updates and d after each step against float64; updates, d and
    the state's layout golden."""
    state0, (g, u, params, states) = _runs().trajectories[config]
    _, reference, hyper = _DISTANCE[config]
    # b**t is a float32 power: of b as the library holds it beside a float32 count, rounded to float32 (1 - b**t
    # magnifies that rounding by t b**t / (1 - b**t), 2000 u at b2 = 0.999, step 1)
    expected = reference(_f64(g), _f64(params), **hyper, bias_betas=(f32(hyper["b1"]), f32(hyper["b2"])))
    d = np.array([step.d for step in expected])
    updates = np.stack([step.update for step in expected])
    conditioning = np.maximum.accumulate([_step_size_conditioning(hyper["b1"], hyper["b2"], t)
                                          for t in range(1, STEPS + 1)])
    check.exact("d grows", bool(d[-1] > hyper["estim_lr0"]), True)
    check.reference("d after each step", states.estim_lr, d, scale=np.abs(d) * (1 + 3 * conditioning),
                    why=BIAS_WHY)
    check.reference("update, every step", _flat(u), updates,
                    scale=np.abs(updates) * (1 + 4 * conditioning[:, None]), why=BIAS_WHY)
    check.layout(f"{config}/state_after_init", state0)
    check.layout(f"{config}/state_after_steps", _last(states))
    check.golden_tree(f"{config}/updates", u)
    check.golden(f"{config}/estim_lr", states.estim_lr)


# -- SAM ----------------------------------------------------------------------------------------------------------
SAM_STEPS = 9  # three periods of sync_period 3
OUTER = sam_ref.Momentum(0.1, 0.5)
ADVERSARY = sam_ref.Momentum(0.05, 0.5, normalized=True)
SHIFT = {"b": np.array([0.7, -0.4, 0.2], F32), "w": np.array([[-0.3, 0.6], [0.5, -0.8]], F32)}
SAM_WHY = "an outer step from the cached params: cache - params + update sums terms of either sign"


def _sam(opaque_mode=False, reset_state=True, batch_axis_name=None):
    return optax.contrib.sam(optax.sgd(OUTER.learning_rate, momentum=OUTER.momentum),
                             optax.chain(optax.contrib.normalize(),
                                         optax.sgd(ADVERSARY.learning_rate, momentum=ADVERSARY.momentum)),
                             sync_period=3, reset_state=reset_state, opaque_mode=opaque_mode,
                             batch_axis_name=batch_axis_name)




def _sam_devices(params):
    """opaque SAM with batch_axis_name over two devices (a vmap with that axis name), each device's objective the
    quadratic plus a linear term of opposite sign (gradients differing by 2 SHIFT, averaging to the quadratic's):
    the loop averages the outer gradient itself (lax.pmean), SAM the adversarial ones."""
    def device(sign):
        tx = _sam(opaque_mode=True, reset_state=False, batch_axis_name="devices")
        def grad_fn(params, i):
            del i
            return jax.tree.map(lambda g, shift: g + sign * shift, _grad(params), SHIFT)

        def step(carry, _):
            params, state = carry
            g = jax.lax.pmean(grad_fn(params, 0), "devices")
            u, state = tx.update(g, state, params, grad_fn=grad_fn)
            return (optax.apply_updates(params, u), state), (g, u, params, state)

        state0 = tx.init(params)
        return state0, jax.lax.scan(step, (params, state0), None, length=4)[1]
    return jax.vmap(device, axis_name="devices")(jnp.array([1.0, -1.0], F32))


def _grad_at(w):
    """The quadratic's gradient, float64: CURV (w - TARGET)."""
    return vec(CURV).astype(np.float64) * (w - vec(TARGET).astype(np.float64))


def test_sam(check):
    """sam(sgd(0.1, momentum 0.5), chain(normalize(), sgd(0.05, momentum 0.5)), sync_period=3), transparent: 9 calls,
    each period two ascent steps along the normalised gradient with momentum (the adversary's update negated),
    then the outer momentum step from the params cached before the ascent, on the gradient at the adversarial
    point; the adversary's momentum restarts each period (reset_state's default; test_sam_opaque carries it
    over). Updates against float64; updates and the state's layout golden; sync_period=0 refused (its error type
    golden)."""
    config = "sam/transparent"
    state0, (g, u, params, states) = _runs().trajectories[config]
    expected = sam_ref.transparent(_f64(g, SAM_STEPS), _f64(params, SAM_STEPS), OUTER, ADVERSARY, 3,
                                   reset_state=True)
    seen = _flat(params, SAM_STEPS)
    operands = np.abs(np.stack(expected)) + np.abs(seen) + np.abs(seen[np.arange(SAM_STEPS) // 3 * 3])
    check.reference("update, every call", _flat(u, SAM_STEPS), np.stack(expected), scale=operands, why=SAM_WHY)
    check.exact("steps since the last outer step", states.steps_since_sync.tolist(), [1, 2, 0] * 3)
    check.layout(f"{config}/state_after_init", state0)
    check.layout(f"{config}/state_after_steps", _last(states))
    largest = np.max(operands, axis=1)  # each call's largest operand: where a recompiled kernel's rounding shows
    scales = {path: np.broadcast_to(largest.reshape((-1,) + (1,) * (leaf.ndim - 1)), leaf.shape)
              for path, leaf in trees.leaves(u).items()}
    check.golden_tree(f"{config}/updates", u, scales=scales, why=SAM_WHY)
    check.error_contract("sam/sync_period=0", optax.contrib.sam, optax.sgd(0.1), optax.sgd(0.1), sync_period=0)


def test_sam_opaque(check):
    """The same SAM with opaque_mode=True, reset_state=False and batch_axis_name, on two devices (a vmap with that
    axis name) whose objectives differ by a linear term of opposite sign: each of 4 calls runs the two ascent steps
    inside (grad_fn gives each device's gradient at each adversarial point, SAM averages them with lax.pmean) and
    emits the outer step; the adversary's momentum carries over between calls. Both devices take the steps of the
    averaged objective, the quadratic's. Updates against float64 (gradients at the adversarial points in float64
    from the quadratic's formula); updates and the state's layout golden."""
    config = "sam/opaque_devices"
    state0, (g, u, params, states) = _runs().trajectories[config]
    for d in range(2):
        g_d, u_d, params_d = jax.tree.map(lambda leaf, d=d: leaf[d], (g, u, params))
        expected = sam_ref.opaque(_f64(g_d, 4), _f64(params_d, 4), _grad_at, OUTER, ADVERSARY, 3, reset_state=False)
        check.reference(f"device {d} update, every call", _flat(u_d, 4), np.stack(expected))
    check.layout(f"{config}/state_after_init", state0)
    check.layout(f"{config}/state_after_steps", _last(states))
    check.golden_tree(f"{config}/updates", u)


# -- Sophia -------------------------------------------------------------------------------------------------------
SOPHIA = dict(learning_rate=0.1, b1=0.8, b2=0.5, eps=0.6, weight_decay=0.05, gamma=2.0, clip_threshold=0.8,
              update_interval=3)
DECAY_MASK = {"b": False, "w": True}
WIN_RATE = "Sophia optimizer win rate: "
SOPHIA_WHY = ("a momentum of gradients of either sign over the curvature, clipped, plus the weight decay: ulps at the "
              "same formula over |g| and |params|")


def _sophia(mu_dtype=None):
    """sophia with every option away from its default: Hutchinson's estimator with a fixed key, and the win rate
    printed every 2 steps."""
    return optax.contrib.sophia(**SOPHIA, weight_decay_mask=DECAY_MASK, mu_dtype=mu_dtype,
                                hessian_diagonal_fn=optax.contrib.hutchinson_estimator_diag_hessian(
                                    jax.random.PRNGKey(7)),
                                verbose=True, print_win_rate_every_n_steps=2)


def test_sophia(check):
    """sophia(lr 0.1, b1 0.8, b2 0.5, eps 0.6, weight_decay 0.05 on "w" only, gamma 2, clip_threshold 0.8,
    update_interval 3, Hutchinson's estimate with a fixed key), 8 steps on the quadratic, whose Hessian is
    diagonal (CURV): Hutchinson's estimate is exact whatever the key, the EMA h is refreshed after steps 1, 4 and
    7 and each step divides by max(gamma h, eps) the h before it (the first step by eps alone), eps binding where
    gamma h is below 0.6, clip_threshold on 6 of 7 elements at first, on 1 at the end. Updates against float64;
    the win rate printed on even steps (verbose) against the float64 fraction not clipped; updates, the final state
    (the key included) and the state's layout golden, the layout after init with mu_dtype='bfloat16' too."""
    state0, (g, u, params, states) = _runs().trajectories["sophia"]
    printed = [float(line.split(WIN_RATE)[1]) for line in _runs().printed.splitlines() if WIN_RATE in line]
    mask = vec({k: np.full(np.shape(PARAMS0[k]), DECAY_MASK[k]) for k in PARAMS0})
    hyper = {name: f32(value) if isinstance(value, float) else value for name, value in SOPHIA.items()}
    args = dict(hessian_diag=vec(CURV).astype(np.float64), decay_mask=mask, **hyper)
    expected = sophia_ref.sophia(_f64(g), _f64(params), **args)
    operands = sophia_ref.sophia([np.abs(x) for x in _f64(g)], [np.abs(x) for x in _f64(params)], **args)
    updates = np.stack([update for update, _ in expected])
    check.reference("update, every step", _flat(u), updates, scale=np.abs(np.stack([o for o, _ in operands])),
                    why=SOPHIA_WHY)
    win_rates = [win for _, win in expected]
    check.exact("some steps clip some elements and not others", 0 < min(win_rates[1:]) < 1, True)
    check.reference("win rate printed on steps 2, 4, 6, 8", np.array(printed, F32), win_rates[1::2])
    check.exact("count after each step", states[0].count.tolist(), list(range(1, STEPS + 1)))
    check.layout("sophia/state_after_init", state0)
    check.golden_tree("sophia/updates", u)
    check.golden_tree("sophia/state_after_steps", _last(states))
    # the update casts mu back to mu_dtype: init's layout is the state's (the default estimator: PRNGKey(7) made
    # outside a jit would compile two programs)
    bf16 = jax.eval_shape(optax.contrib.sophia(0.1, mu_dtype="bfloat16").init, PARAMS0)
    check.layout("sophia/mu_bf16/state_after_init", jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), bf16))


# -- every configuration above as one program ---------------------------------------------------------------------
class Runs(NamedTuple):
    trajectories: dict  # configuration -> (state after init, (gradients, updates, params, states) per step)
    printed: str  # what the program printed (Sophia's win rate)


def _program(params):
    out = {name: _trajectory(make(), params, STEPS) for name, (make, _, _) in _DISTANCE.items()}
    out["sam/transparent"] = _trajectory(_sam(), params, SAM_STEPS)
    out["sam/opaque_devices"] = _sam_devices(params)
    out["sophia"] = _trajectory(_sophia(), params, STEPS, obj_fn=loss)
    return out


@functools.cache
def _runs() -> Runs:
    """The module's configurations traced, compiled (or loaded from the cache) and run once, as one program: the
    fixed cost of a jit paid once."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        trajectories = jax.device_get(jax.jit(_program)(PARAMS0))
        jax.effects_barrier()  # every print of the program has run
    return Runs(trajectories, printed.getvalue())
