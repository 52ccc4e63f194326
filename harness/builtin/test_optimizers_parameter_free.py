"""Parameter-free and adaptive-step optimizers: optax.contrib's COCOB, DoG, DoWG, MoMo, MoMo-Adam and Mechanic,
and optax.scale_by_distance_over_gradients (layer-wise DoG), on the quadratic of harness/builtin/quadratic.py
(whose loss MoMo is given as value=), 8 steps each: their step depends on the distance travelled, the gradients
seen and the loss, so the state matters from the second step on.

References (harness/builtin/reference/parameter_free.py) are NumPy float64 models of the docstrings and the
papers. Each step's reference starts from the state the library kept after the previous step and the params
and gradient the step saw (read back as float64), so a step is a handful of float32 roundings whatever the
number of steps. Every configuration of the module runs in one jitted program (one trace and one compilation
cache load), all configurations stepping together in one lax.scan.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin.quadratic import CURV, PARAMS0, TARGET, TRAJECTORY_WHY, loss as _loss, vec as _vec
from harness.builtin.reference import parameter_free as ref
from harness.contract import stack_lacks, tolerances

pytestmark = pytest.mark.family("optimizers")

F32 = np.float32
STEPS = 8
MASK = {"b": False, "w": True}  # weight decay on the kernel only
SIZES = {k: int(np.size(v)) for k, v in PARAMS0.items()}  # leaf sizes, "b" then "w" as quadratic.vec orders them
CANCELS = ("sums and differences of terms of either sign (x - x_0, <g, x>, momentum averages, the bet's params "
           "minus the start): the ulps are taken at the same formula over |terms|")


def _f32(x: float) -> float:
    """A hyperparameter as the library holds it: rounded to float32."""
    return float(F32(x))


def _mechanic_base():
    return optax.sgd(0.2, momentum=0.5)


# configuration -> (make, whether update takes value=). All of them step together in one lax.scan of one jitted
# program: one trace of the loop, one lowering and one compilation-cache load for the module (batching
# configurations with jax.vmap measured dearer here: a vmapped scan traced at twice the cost of two plain ones).
RUNS = {
    "scale_by_cocob": (lambda: optax.contrib.scale_by_cocob(alpha=5.0, eps=0.05), False),
    "cocob": (lambda: optax.contrib.cocob(learning_rate=0.5, alpha=20.0, eps=0.3, weight_decay=0.1, mask=MASK),
              False),
    "dog": (lambda: optax.contrib.dog(learning_rate=0.7, init_step=("heuristic", 1e-2), eps=1e-2,
                                      weight_decay=0.1, mask=MASK), False),
    "dowg": (lambda: optax.contrib.dowg(learning_rate=0.8, init_estim_sq_dist=0.01, eps=1e-3, weight_decay=0.05,
                                       mask=MASK), False),
    "scale_by_distance_over_gradients": (
        lambda: optax.scale_by_distance_over_gradients(reps_rel=0.05, eps=1e-4, param_dtype=jnp.bfloat16,
                                                       global_scale=-0.5), False),
    "momo/adaptive_weight_decay": (lambda: optax.contrib.momo(learning_rate=2.0, beta=0.7, lower_bound=-20.0,
                                                              weight_decay=0.2, adapt_lower_bound=True), True),
    "momo_adam/adaptive_weight_decay": (lambda: optax.contrib.momo_adam(learning_rate=0.5, b1=0.7, b2=0.95, eps=1e-2,
                                                                        lower_bound=-20.0, weight_decay=0.2,
                                                                        adapt_lower_bound=True), True),
    "mechanize": (lambda: optax.contrib.mechanize(_mechanic_base(), weight_decay=0.05, eps=1e-6, s_init=0.5,
                                                  num_betas=3), True),
    # adapt_lower_bound at its default (False): the lower bound stays where it is given
    "momo/fixed_lower_bound": (lambda: optax.contrib.momo(learning_rate=2.0, beta=0.7, weight_decay=0.2), True),
    "momo_adam/fixed_lower_bound": (lambda: optax.contrib.momo_adam(learning_rate=0.5, b1=0.7, b2=0.95, eps=1e-2,
                                                                    weight_decay=0.2), True),
}
# configurations whose init alone is checked (a documented starting point): traced with the runs
INITS = {
    "dog/distance": lambda: optax.contrib.dog(init_step=("distance", 0.05)),
    "dog/learning_rate": lambda: optax.contrib.dog(init_step=("learning_rate", 0.02)),
    "dowg/eps_start": lambda: optax.contrib.dowg(eps=0.02),
}


# configurations whose first update alone is checked (a documented first step): traced with the runs
FIRST_UPDATES = {
    "dog/learning_rate": lambda: optax.contrib.dog(init_step=("learning_rate", 0.02)),
}


def _gradient(x):
    """The quadratic's gradient, CURV (x - TARGET), written out (cheaper to trace than jax.grad of the loss)."""
    return {k: CURV[k] * (x[k] - TARGET[k]) for k in x}


@functools.cache
def _buildable() -> tuple[tuple[dict, dict, dict], tuple[dict, dict, dict]]:
    """The RUNS', INITS' and FIRST_UPDATES' constructors this stack can build, and why each other is not
    applicable here (harness.contract.stack_lacks): one it lacks would take the whole program with it."""
    runs, runs_lacking = stack_lacks.sort_buildable({name: make for name, (make, _) in RUNS.items()})
    inits, inits_lacking = stack_lacks.sort_buildable(INITS)
    firsts, firsts_lacking = stack_lacks.sort_buildable(FIRST_UPDATES)
    return (runs, inits, firsts), (runs_lacking, inits_lacking, firsts_lacking)


def _result(part: int, name: str):
    """_runs()[part][name], or the check skipped as not applicable when this stack lacks its constructor."""
    lacking = _buildable()[1][part]
    if name in lacking:
        stack_lacks.skip(lacking[name])
    return _runs()[part][name]


def _program(params):
    """Every configuration from params: (state after init, (values, grads, updates, params seen, states) per
    step), and the INITS' states."""
    (runs, inits_made, firsts), _ = _buildable()
    txs = {name: make() for name, make in runs.items()}
    inits = {name: tx.init(params) for name, tx in txs.items()}

    def step(carry, _):
        out = {}
        for name, (x, state) in carry.items():
            g = _gradient(x)
            value = _loss(x) if RUNS[name][1] else jnp.zeros((), F32)
            u, state = txs[name].update(g, state, x, **({"value": value} if RUNS[name][1] else {}))
            out[name] = ((optax.apply_updates(x, u), state), (value, g, u, x, state))
        return {n: o[0] for n, o in out.items()}, {n: o[1] for n, o in out.items()}

    _, seen = jax.lax.scan(step, {name: (params, inits[name]) for name in txs}, None, length=STEPS)
    return ({name: (inits[name], seen[name]) for name in txs},
            {name: make().init(params) for name, make in inits_made.items()},
            {name: make().update(_gradient(params), make().init(params), params)[0]
             for name, make in firsts.items()})


@functools.cache
def _runs() -> tuple[dict, dict, dict]:
    return jax.device_get(jax.jit(_program)(PARAMS0))


class Steps:
    """One configuration's run, per step as float64 vectors ("b" then "w")."""

    def __init__(self, name: str):
        self.name = name
        self.init, (values, grads, updates, params, states) = _result(0, name)
        self.values = np.asarray(values, np.float64)
        self.g = [_vec(_at(grads, k)).astype(np.float64) for k in range(STEPS)]
        self.u = np.stack([_vec(_at(updates, k)) for k in range(STEPS)])
        self.x = [_vec(_at(params, k)).astype(np.float64) for k in range(STEPS)]
        self.grads, self.updates, self.params, self.states = grads, updates, params, states

    def state(self, kind, k: int):
        """The rule's state (the first named tuple of that type) before step k (k = 0: init's)."""
        return _find(self.init if k == 0 else _at(self.states, k - 1), kind)

    def golden(self, check):
        """The updates golden (ulps at each step's largest |param|: a trajectory), the state's layout after init
        and after the steps."""
        check.layout(f"{self.name}/state_after_init", self.init)
        check.layout(f"{self.name}/state_after_steps", _at(self.states, -1))
        scale = np.max(np.abs(np.stack(self.x)), axis=1)
        scales = {path: np.broadcast_to(scale.reshape((-1,) + (1,) * (np.ndim(leaf) - 1)), np.shape(leaf))
                  for path, leaf in (("b", self.updates["b"]), ("w", self.updates["w"]))}
        check.golden_tree(f"{self.name}/updates", self.updates, scales=scales, why=TRAJECTORY_WHY)


def _at(tree, k):
    return jax.tree.map(lambda leaf: leaf[k], tree)


def _find(state, kind: str):
    """The first named tuple of that type name in a (chain's) state."""
    if type(state).__name__ == kind:
        return state
    if isinstance(state, tuple):
        for part in state:
            found = _find(part, kind)
            if found is not None:
                return found
    return None


def _f64(x):
    return np.asarray(x, np.float64)


def _flat(tree):
    return _vec(tree).astype(np.float64)


def _within_reference(value, expected, magnitude) -> bool:
    """Whether a float32 value is within the reference ulps of float32 at max(|expected|, magnitude): the
    comparison check.reference makes, as a fact (for a known deviation pinned as golden)."""
    ulps = tolerances.lookup(tolerances.REFERENCE, "float32").tolerance.ulps
    allowed = ulps * tolerances.ulp(np.maximum(np.abs(expected), magnitude), "float32")
    return bool(np.all(np.abs(np.asarray(value, np.float64) - expected) <= allowed))


class Rows:
    """Per-step values and their operand magnitudes gathered by label, compared once per label over all steps."""

    def __init__(self):
        self.rows: dict[str, list] = {}

    def add(self, label, value, expected, magnitude):
        self.rows.setdefault(label, []).append((np.asarray(value), _f64(expected), _f64(magnitude)))

    def compare(self, check, name):
        for label, rows in self.rows.items():
            value, expected, magnitude = (np.stack([np.broadcast_to(r[i], np.shape(r[1])) for r in rows])
                                          for i in range(3))
            check.reference(f"{name} {label}, every step", value, expected, scale=np.abs(magnitude), why=CANCELS)


# -- COCOB ---------------------------------------------------------------------------------------------------------
_COCOB = {  # name -> (learning_rate, alpha, eps, weight_decay)
    "scale_by_cocob": (1.0, 5.0, 0.05, 0.0),
    "cocob": (0.5, 20.0, 0.3, 0.1),
}


@pytest.mark.parametrize("name", sorted(_COCOB))
def test_cocob(check, name):
    """COCOB-Backprop, 8 steps: scale_by_cocob(alpha=5, eps=0.05) bets on the raw gradient; cocob(learning_rate=0.5,
    alpha=20, eps=0.3, weight_decay=0.1 on the kernel only) bets on 0.5 (g + 0.1 x) (the chain the docstring's
    arguments build). The bet is scale-free but for L_0 = eps: eps=0.3
    is of the coin's size, so the learning rate moves the steps. Updates and the state (L, G, reward, cumulative
    gradients) against float64 from the library's previous state; updates and layouts golden."""
    lr, alpha, eps, wd = map(_f32, _COCOB[name])
    run = Steps(name)
    x1 = _flat(PARAMS0)
    decay = np.concatenate([np.full(SIZES[k], float(MASK[k]) if wd else 0.0) for k in ("b", "w")])
    rows = Rows()
    for k in range(STEPS):
        kept = run.state("COCOBState", k)
        previous = ref.Cocob(None, _flat(kept.cumulative_gradients), _flat(kept.scale), _flat(kept.subgradients),
                             _flat(kept.reward))
        if k == 0:
            check.reference(f"{name} L_0", _vec(kept.scale), np.full(x1.shape, eps))
        coin = lr * (run.g[k] + wd * decay * run.x[k])
        values, magnitudes = ref.cocob_step(previous, coin, run.x[k], x1, alpha)
        after = run.state("COCOBState", k + 1)
        rows.add("update", run.u[k], values.update, magnitudes.update)
        for field, kept_field in (("theta", "cumulative_gradients"), ("scale", "scale"),
                                  ("subgradients", "subgradients"), ("reward", "reward")):
            rows.add(field, _vec(getattr(after, kept_field)), getattr(values, field), getattr(magnitudes, field))
    rows.compare(check, name)
    run.golden(check)


# -- DoG, DoWG, layer-wise DoG ---------------------------------------------------------------------------------------
def _decayed(run, k, wd):
    decay = np.concatenate([np.full(SIZES[k], float(MASK[k])) for k in ("b", "w")])
    return run.g[k] + wd * decay * run.x[k], np.abs(run.g[k]) + wd * decay * np.abs(run.x[k])


def test_dog(check):
    """DoG, 8 steps: eta_t = max(r_eps, max_k ||x_k - x_0||) / sqrt(sum ||g_k||**2 + eps), the update -lr eta_t g_t:
    dog(learning_rate=0.7, init_step=("heuristic", 1e-2): r_eps = 1e-2 (1 + ||x_0||), eps=1e-2, weight_decay=0.1
    on the kernel: g + 0.1 x is what DoG sees). ("distance", 0.05) sets r_eps = 0.05 (its init alone);
    ("learning_rate", 0.02) starts r_eps at 0 and makes the first step -0.02 g_0 (its init and first update
    alone). Updates, r_bar and G against float64 from the library's previous state; updates and layouts
    golden."""
    lr, eps, wd = map(_f32, (0.7, 1e-2, 0.1))
    run = Steps("dog")
    x0 = _flat(PARAMS0)
    kind = "DoGState"
    check.reference("dog heuristic r_eps", run.state(kind, 0).max_dist, ref.heuristic_r_eps(_f32(1e-2), x0))
    check.reference("dog distance r_eps", _find(_result(1, "dog/distance"), kind).max_dist, _f32(0.05))
    check.reference("dog learning_rate r_eps", _find(_result(1, "dog/learning_rate"), kind).max_dist, 0.0)
    g0 = _flat(_gradient(PARAMS0))
    check.reference("dog learning_rate first update", _vec(_result(2, "dog/learning_rate")), -_f32(0.02) * g0)
    rows = Rows()
    for k in range(STEPS):
        kept = run.state(kind, k)
        g, g_mag = _decayed(run, k, wd)
        eta, r_bar, G = ref.dog_eta(float(kept.max_dist), float(kept.sum_sq_norm_grads), g, run.x[k], x0, eps)
        rows.add("update", run.u[k], -lr * eta * g, lr * eta * g_mag)
        after = run.state(kind, k + 1)
        rows.add("max_dist", after.max_dist, r_bar, r_bar)
        rows.add("sum_sq_norm_grads", after.sum_sq_norm_grads, G, G)
    rows.compare(check, "dog")
    run.golden(check)


def test_dowg(check):
    """DoWG, 8 steps: eta_t = r_bar_t**2 / (sqrt(v_t) + eps), v_t = sum_k r_bar_k**2 ||g_k||**2, the update
    -lr eta_t g_t: dowg(learning_rate=0.8, init_estim_sq_dist=0.01, eps=1e-3, weight_decay=0.05 on the kernel);
    dowg(eps=0.02) without init_estim_sq_dist starts r_bar**2 at eps (read from its init alone). Updates,
    r_bar**2 and v against float64 from the library's previous state; updates and layouts golden."""
    lr, start, eps, wd = map(_f32, (0.8, 0.01, 1e-3, 0.05))
    run = Steps("dowg")
    x0 = _flat(PARAMS0)
    kind = "DoWGState"
    check.reference("dowg r_bar_0**2", run.state(kind, 0).estim_sq_dist, start)
    check.reference("dowg r_bar_0**2 from eps", _find(_result(1, "dowg/eps_start"), kind).estim_sq_dist, _f32(0.02))
    rows = Rows()
    for k in range(STEPS):
        kept = run.state(kind, k)
        g, g_mag = _decayed(run, k, wd)
        eta, r2, v = ref.dowg_eta(float(kept.estim_sq_dist), float(kept.weighted_sq_norm_grads), g, run.x[k], x0,
                                  eps)
        rows.add("update", run.u[k], -lr * eta * g, lr * eta * g_mag)
        after = run.state(kind, k + 1)
        rows.add("estim_sq_dist", after.estim_sq_dist, r2, r2)
        rows.add("weighted_sq_norm_grads", after.weighted_sq_norm_grads, v, v)
    rows.compare(check, "dowg")
    run.golden(check)


def _first_update_as_computed(check, label: str, update, expected) -> None:
    """optax 0.2.6's first layer-wise DoG update (arguments swapped, reference.parameter_free): NaN exactly where
    the gradient is below -eps, the rest against float64 at the reference ulps."""
    check.exact(f"{label} first update NaN where g < -eps (as optax 0.2.6 computes it)", np.isnan(update).tolist(),
                np.isnan(expected).tolist())
    finite = ~np.isnan(expected)
    check.reference(f"{label} first update, global_scale G / sqrt(g + eps) r_bar (as optax 0.2.6 computes it)",
                    update[finite], expected[finite])


def test_scale_by_distance_over_gradients(check):
    """Layer-wise DoG, 8 steps, per leaf: eta = global_scale r_bar / sqrt(G + eps), r_bar = max(reps_rel (1 +
    ||x_0||), max_k ||x_k - x_0||): reps_rel=0.05, eps=1e-4, global_scale=-0.5 (a descent step) and
    param_dtype=bfloat16: x_0 is kept in bfloat16, so distances are measured from the rounded start. The init
    state (r_eps, G = 0, x_0's dtype) and, while the params stay finite, r_bar and G after each step against
    float64 from the library's previous state; the state's layouts golden.

    optax 0.2.6 maps its per-leaf step over (max_dist, G, updates) into a function of (g, d, G): each update is
    global_scale G / sqrt(g + eps) r_bar, NaN wherever g < -eps, and the params NaN from the second step on.
    Whether every update follows the documented rule (within the reference ulps) is a golden fact, False as
    recorded on 0.2.6: a fix (optax 0.2.8 passes the arguments in order) shows as a change. The first update
    as 0.2.6 computes it is held to float64 (where eps and global_scale act). The state's first step is right
    on both."""
    name = "scale_by_distance_over_gradients"
    reps_rel, eps, scale = map(_f32, (0.05, 1e-4, -0.5))
    run = Steps(name)
    kind = "ScaleByDistanceOverGradientsState"
    kept0 = run.state(kind, 0)
    check.exact(f"{name} x_0 dtype", {k: str(v.dtype) for k, v in kept0.init_params.items()},
                {k: "bfloat16" for k in PARAMS0})
    finite = next((k for k in range(STEPS) if not np.all(np.isfinite(run.x[k]))), STEPS)
    rows, follows = Rows(), []
    for leaf in ("b", "w"):
        start = _f64(PARAMS0[leaf]).ravel()
        check.reference(f"{name} {leaf} r_eps", kept0.max_dist[leaf], ref.heuristic_r_eps(reps_rel, start))
        check.exact(f"{name} {leaf} G_0", kept0.grad_sum_of_squares[leaf].tolist(), [0.0])
        x0 = _f64(kept0.init_params[leaf]).ravel()
        for k in range(finite):
            kept = run.state(kind, k)
            g, x = _f64(_at(run.grads, k)[leaf]).ravel(), _f64(_at(run.params, k)[leaf]).ravel()
            eta, r_bar, G = ref.dog_eta(float(kept.max_dist[leaf]), float(kept.grad_sum_of_squares[leaf][0]), g, x,
                                        x0, eps)
            follows.append(_within_reference(np.ravel(_at(run.updates, k)[leaf]), scale * eta * g, 0.0))
            if k == 0:  # the first update as the baseline computes it: eps and global_scale at value level
                _first_update_as_computed(check, f"{name} {leaf}", np.ravel(_at(run.updates, 0)[leaf]),
                                          ref.ldog_update_as_optax_0_2_6_computes_it(r_bar, G, g, eps, scale))
            after = run.state(kind, k + 1)
            rows.add(f"{leaf} max_dist", after.max_dist[leaf], r_bar, r_bar)
            rows.add(f"{leaf} grad_sum_of_squares", after.grad_sum_of_squares[leaf][0], G, G)
    rows.compare(check, name)
    check.golden_fact(f"{name}/updates_follow_the_documented_rule", finite == STEPS and all(follows))
    check.layout(f"{name}/state_after_init", run.init)
    check.layout(f"{name}/state_after_steps", _at(run.states, -1))


# -- MoMo, MoMo-Adam ---------------------------------------------------------------------------------------------
_MOMO_FIXED = {  # adapt_lower_bound at its default (False), lower_bound at its default (0)
    "momo/fixed_lower_bound": (dict(learning_rate=2.0, beta=0.7, lower_bound=0.0, weight_decay=0.2,
                                    adapt_lower_bound=False), "MomoState"),
    "momo_adam/fixed_lower_bound": (dict(learning_rate=0.5, b1=0.7, b2=0.95, eps=1e-2, lower_bound=0.0,
                                         weight_decay=0.2, adapt_lower_bound=False), "MomoAdamState"),
}
_MOMO = {  # name -> (hyperparameters of momo_step, the state's type)
    "momo/adaptive_weight_decay": (dict(learning_rate=2.0, beta=0.7, lower_bound=-20.0, weight_decay=0.2,
                                        adapt_lower_bound=True), "MomoState"),
    "momo_adam/adaptive_weight_decay": (dict(learning_rate=0.5, b1=0.7, b2=0.95, eps=1e-2, lower_bound=-20.0,
                                             weight_decay=0.2, adapt_lower_bound=True), "MomoAdamState"),
}


def _momo_steps(name, weight_decay_form):
    """Every step of a MoMo run against momo_step from the library's previous state: (update rows, state rows,
    taus)."""
    hyper, kind = {**_MOMO, **_MOMO_FIXED}[name]
    hyper = {k: (_f32(v) if isinstance(v, float) else v) for k, v in hyper.items()}
    run = Steps(name)
    rows, updates, taus = Rows(), Rows(), []
    for k in range(STEPS):
        kept = run.state(kind, k)
        previous = ref.Momo(None, _flat(kept.exp_avg), _flat(kept.exp_avg_sq) if hasattr(kept, "exp_avg_sq") else None,
                            float(kept.barf), float(kept.gamma), float(kept.lb), None)
        values, magnitudes = ref.momo_step(previous, run.g[k], run.x[k], float(run.values[k]), k + 1,
                                           weight_decay_form=weight_decay_form, **hyper)
        taus.append(values.tau)
        updates.add("update", run.u[k], values.update, magnitudes.update)
        after = run.state(kind, k + 1)
        rows.add("exp_avg", _vec(after.exp_avg), values.d, magnitudes.d)
        if values.v is not None:
            rows.add("exp_avg_sq", _vec(after.exp_avg_sq), values.v, magnitudes.v)
        for field, kept_field in (("f_bar", "barf"), ("gamma", "gamma"), ("lower_bound", "lb")):
            rows.add(field, getattr(after, kept_field), getattr(values, field), getattr(magnitudes, field))
        rows.add("count", after.count, k + 1, 0.0)
    return run, rows, updates, taus, hyper


@pytest.mark.parametrize("name", sorted(_MOMO))
def test_momo(check, name):
    """MoMo and MoMo-Adam with the quadratic's loss as value=, 8 steps, every parameter set: momo(learning_rate=2,
    beta=0.7, lower_bound=-20, weight_decay=0.2, adapt_lower_bound=True) and momo_adam(learning_rate=0.5, b1=0.7,
    b2=0.95, eps=1e-2, lower_bound=-20, weight_decay=0.2, adapt_lower_bound=True). tau = min(lr / rho,
    ((1 + lr wd) (f_bar - rho f_* - gamma) + <d, x>)_+ / <d, D^-1 d>), the online estimate f_* reset and moved
    from -20 (the steps both reach the cap lr / rho and take the adaptive term). The paper (and its authors'
    code) take the proximal step (x - tau D^-1 d) / (1 + lr wd); optax 0.2.6 (and 0.2.8) step x / (1 + lr wd) -
    tau D^-1 d: the state and the update in optax's form against float64 from the library's previous state, and
    the update's disagreement with the paper's form pinned as a fact (a fix shows as a change). Updates and
    layouts golden."""
    run, rows, updates, taus, hyper = _momo_steps(name, weight_decay_form="decoupled")
    updates.compare(check, name)
    rows.compare(check, name)
    rho = [1.0 - hyper["b1"] ** t if "b1" in hyper else 1.0 for t in range(1, STEPS + 1)]
    capped = [tau == hyper["learning_rate"] / r for tau, r in zip(taus, rho)]
    check.exact(f"{name} steps at the cap / adaptive", [any(capped), not all(capped)], [True, True])
    lower_bounds = run.states.lb
    check.exact(f"{name} the online lower bound moves", bool(np.any(lower_bounds != lower_bounds[0])), True)
    paper = _momo_steps(name, weight_decay_form="paper")[2]
    value, expected, magnitude = (np.stack([r[i] for r in paper.rows["update"]]) for i in range(3))
    check.exact(f"{name} update within the reference ulps of the paper's proximal step",
                _within_reference(value, expected, magnitude), False)
    run.golden(check)


@pytest.mark.parametrize("name", sorted(_MOMO_FIXED))
def test_momo_fixed_lower_bound(check, name):
    """MoMo and MoMo-Adam at their default adapt_lower_bound=False and lower_bound=0, 8 steps with the quadratic's
    loss as value=, weight_decay=0.2: the lower bound kept in the state never moves from 0 (exact), and the state
    and the update against momo_step in float64 from the library's previous state, in optax's decoupled form
    (test_momo pins its disagreement with the paper's); updates and layouts golden."""
    run, rows, updates, _, hyper = _momo_steps(name, weight_decay_form="decoupled")
    updates.compare(check, name)
    rows.compare(check, name)
    check.exact(f"{name} the lower bound stays at lower_bound", np.asarray(run.states.lb).tolist(),
                [hyper["lower_bound"]] * STEPS)
    run.golden(check)


# -- Mechanic ------------------------------------------------------------------------------------------------------
MECHANIC = dict(weight_decay=0.05, eps=1e-6, s_init=0.5)


def test_mechanize(check):
    """mechanize(sgd(0.2, momentum=0.5), weight_decay=0.05, eps=1e-6, s_init=0.5, num_betas=3), value= passed
    through to the base, 8 steps: the base's update u_t (-0.2 (g + 0.5 trace)) is accumulated in Delta and the
    params set to x_ref + sum(s) Delta, the scales s (one per beta 0.9, 0.99, 0.999) learned by Mechanic's
    coin-betting from h = <g + wd sum(s) ||g|| / ||x|| x, Delta>. Updates, s, m, v, r against float64 from the
    library's previous state; updates and layouts golden."""
    hyper = {k: _f32(v) for k, v in MECHANIC.items()}
    run = Steps("mechanize")
    kind = "MechanicState"
    betas = ref.mechanic_betas(3).astype(F32).astype(np.float64)
    check.reference("mechanize s_0", run.state(kind, 0).s, np.full(3, hyper["s_init"]))
    rows = Rows()
    for k in range(STEPS):
        kept = run.state(kind, k)
        trace = _flat(_find(kept.base_optimizer_state, "TraceState").trace)
        base_update = -_f32(0.2) * (run.g[k] + _f32(0.5) * trace)
        x_ref = run.x[0] if k == 0 else _flat(kept.x0)
        previous = ref.Mechanic(None, _f64(kept.m), _f64(kept.v), _f64(kept.r), _f64(kept.s))
        values, magnitudes = ref.mechanic_step(previous, run.g[k], run.x[k], x_ref, base_update, betas, **hyper)
        rows.add("update", run.u[k], values.update, magnitudes.update)
        after = run.state(kind, k + 1)
        for field in ("m", "v", "r", "s"):
            rows.add(field, getattr(after, field), getattr(values, field), getattr(magnitudes, field))
    rows.compare(check, "mechanize")
    check.exact("mechanize: r turns negative on some step (wealth takes its positive part)",
                bool(np.any(run.states.r < 0)), True)
    run.golden(check)

