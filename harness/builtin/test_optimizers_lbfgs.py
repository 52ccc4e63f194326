"""L-BFGS and the linesearches it is built with: optax.lbfgs, scale_by_lbfgs, scale_by_zoom_linesearch and
scale_by_backtracking_linesearch, on a strictly convex quadratic f(w) = 1/2 w.A w - b.w over a 2-leaf tree
(7 parameters, A's eigenvalues 1..5): there the documented formulas give exact answers to compare with.

References (harness/builtin/reference/lbfgs.py) are NumPy float64 models of the docstrings, fed the float32
params and gradients the library saw: the direction P_k u_k by the two-loop recursion over the last
memory_size pairs, the sufficient-decrease and curvature criteria with the stepsize the linesearch chose, the
backtracking rule's stepsize. Each configuration is one jitted lax.scan over its steps (one compile).
A failed search's verbose diagnostics (an ascent direction, one update) are captured from stdout.
"""

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin.reference import lbfgs as ref
from harness.contract import trees

pytestmark = pytest.mark.family("optimizers")

F32 = np.float32
STEPS = 7
_RNG = np.random.default_rng(7)
_Q, _ = np.linalg.qr(_RNG.standard_normal((7, 7)))
A64 = (_Q * np.linspace(1.0, 5.0, 7)) @ _Q.T  # SPD, eigenvalues 1..5
B64 = _RNG.standard_normal(7)
A32, B32 = A64.astype(F32), B64.astype(F32)
A_IN, B_IN = A32.astype(np.float64), B32.astype(np.float64)  # the float32 problem, exactly, in float64
W_STAR = np.linalg.solve(A_IN, B_IN)
F_STAR = -0.5 * B_IN @ W_STAR
PARAMS0 = {"b": np.array([1.0, -2.0, 0.5], F32), "w": np.array([[0.3, 1.5], [-1.0, 2.0]], F32)}
TRAJECTORY_WHY = ("a trajectory: each step starts from params that carry the stack's rounding of the steps before, "
                  "so a recompiled kernel moves every later value by ulps of the params, not of the value")
TWO_LOOP_WHY = ("the two-loop recursion adds and subtracts vectors of the direction's size: a small component "
                "is a cancellation, its ulps are taken at the largest component")


def _flat(tree):
    return jnp.concatenate([tree["b"].ravel(), tree["w"].ravel()])


def _f(tree):
    """The quadratic in float32, as the library sees it."""
    x = _flat(tree)
    return 0.5 * x @ (jnp.asarray(A32) @ x) - jnp.asarray(B32) @ x


def _f64(x):
    x = np.asarray(x, np.float64)
    return 0.5 * x @ A_IN @ x - B_IN @ x


def _g64(x):
    return A_IN @ np.asarray(x, np.float64) - B_IN


def _vec(tree):
    """The leaves as one flat vector, in their own dtype (float32: what the library computed)."""
    return np.concatenate([np.asarray(tree["b"]).ravel(), np.asarray(tree["w"]).ravel()])


def _pairs(ws, gs, k, memory):
    """The pairs (s_j, y_j) L-BFGS keeps at step k: the last `memory` differences, oldest first."""
    lo = max(0, k - memory)
    return [ws[j + 1] - ws[j] for j in range(lo, k)], [gs[j + 1] - gs[j] for j in range(lo, k)]


@functools.cache
def _run(make, with_linesearch):
    """STEPS steps of make() from PARAMS0, jitted once; returns (params seen, grads seen, updates, states) and
    the state after init, stacked over steps."""
    def run(params):
        tx = make()
        state0 = tx.init(params)
        value_and_grad = optax.value_and_grad_from_state(_f)

        def step(carry, _):
            params, state = carry
            if with_linesearch:
                value, grad = value_and_grad(params, state=state)
                updates, state = tx.update(grad, state, params, value=value, grad=grad, value_fn=_f)
            else:
                grad = jax.grad(_f)(params)
                updates, state = tx.update(grad, state, params)
            return (optax.apply_updates(params, updates), state), (params, grad, updates, state)

        _, seen = jax.lax.scan(step, (params, state0), None, length=STEPS)
        return state0, seen
    return jax.jit(run)


def _steps(make, with_linesearch=False):
    state0, (params, grads, updates, states) = jax.device_get(_run(make, with_linesearch)(PARAMS0))
    ws = [_vec(jax.tree.map(lambda x: x[k], params)).astype(np.float64) for k in range(STEPS)]
    gs = [_vec(jax.tree.map(lambda x: x[k], grads)).astype(np.float64) for k in range(STEPS)]
    us = [_vec(jax.tree.map(lambda x: x[k], updates)) for k in range(STEPS)]
    return state0, ws, gs, us, updates, states


def _trajectory_scales(ws, tree):
    """Per leaf path, each step's largest |param| broadcast to the leaf's (steps, ...) shape: where golden ulps of a
    trajectory are taken (TRAJECTORY_WHY)."""
    per_step = np.array([np.max(np.abs(w)) for w in ws])
    return {path: np.broadcast_to(per_step.reshape((-1,) + (1,) * (np.ndim(leaf) - 1)), np.shape(leaf))
            for path, leaf in trees.leaves(tree).items()}


def _last(states):
    return jax.tree.map(lambda x: x[-1], states)


# -- lbfgs with a fixed learning rate, without a linesearch -----------------------------------------------------
def _lbfgs_fixed():
    return optax.lbfgs(learning_rate=0.4, memory_size=2, scale_init_precond=False, linesearch=None)


def test_lbfgs_fixed_learning_rate(check):
    """lbfgs(learning_rate=0.4, memory_size=2, scale_init_precond=False, linesearch=None), 7 steps: the update is
    -0.4 P_k u_k with P_k the two-loop recursion over the last 2 pairs (the buffer wraps after step 2) and the
    identity as the initial preconditioner (gamma_k = s.y / y.y with the default scale_init_precond:
    test_lbfgs_zoom_linesearch)."""
    state0, ws, gs, us, updates, states = _steps(_lbfgs_fixed)
    for k in range(STEPS):
        expected = -0.4 * ref.lbfgs_direction(gs[k], *_pairs(ws, gs, k, 2), False)
        check.reference(f"step {k} update", us[k], expected, scale=np.max(np.abs(expected)), why=TWO_LOOP_WHY)
    check.layout("lbfgs/fixed/state_after_init", state0)
    check.golden_tree("lbfgs/fixed/updates", updates, scales=_trajectory_scales(ws, updates), why=TRAJECTORY_WHY)


# -- lbfgs with a zoom linesearch ---------------------------------------------------------------------------------
ZOOM = dict(max_linesearch_steps=12, max_learning_rate=2.0, tol=1e-6, increase_factor=3.0, slope_rtol=0.01,
            curv_rtol=0.5, approx_dec_rtol=None, stepsize_precision=1e-4, initial_guess_strategy="one")


def _lbfgs_zoom():
    return optax.lbfgs(memory_size=4, linesearch=optax.scale_by_zoom_linesearch(**ZOOM))


def _lbfgs_default():
    return optax.lbfgs()


_LINESEARCH = {"custom": (_lbfgs_zoom, 4, ZOOM), "default": (_lbfgs_default, 10, None)}


@pytest.mark.parametrize("config", sorted(_LINESEARCH))
def test_lbfgs_zoom_linesearch(check, config):
    """lbfgs with a zoom linesearch (the default one: lbfgs(); custom: memory_size=4 and every linesearch
    parameter set), 7 steps: each update is -eta_k P_k u_k with P_k the two-loop recursion and eta_k the
    stepsize the linesearch kept; that stepsize satisfies the docstring's sufficient decrease (slope_rtol)
    and small curvature (curv_rtol) criteria within tol, and max_learning_rate; the value and gradient the
    state keeps are f and grad f at the new params; on this 7-parameter quadratic the iterates approach the
    minimiser faster than gradient descent with its best fixed step could. Stepsizes, updates and the state's
    layout are golden."""
    make, memory, zoom = _LINESEARCH[config]
    state0, ws, gs, us, updates, states = _steps(make, with_linesearch=True)
    c1, c2, tol = (0.0001, 0.9, 0.0) if zoom is None else (zoom["slope_rtol"], zoom["curv_rtol"], zoom["tol"])
    ls = states[-1]  # the linesearch's state, stacked over steps
    for k in range(STEPS - 1):
        eta = float(ls.learning_rate[k])
        direction = ref.lbfgs_direction(gs[k], *_pairs(ws, gs, k, memory), True)
        check.reference(f"step {k} update", us[k], -eta * direction, scale=eta * np.max(np.abs(direction)),
                        why=TWO_LOOP_WHY)
        slope0 = float(gs[k] @ us[k])  # <grad f(w), eta u>: the criteria scaled by eta
        f0, f1 = _f64(ws[k]), _f64(ws[k + 1])
        # float32 evaluations of f decide the search: its rounding (|f| and the terms of w.A w) is the scale.
        w_abs = np.abs(ws[k])
        f_scale = abs(f0) + 0.5 * float(w_abs @ np.abs(A_IN) @ w_abs) + float(np.abs(B_IN) @ w_abs)
        check.bound(f"step {k} sufficient decrease", f1 - f0, c1 * slope0 + tol, scale=f_scale,
                    why="a difference of float32 values of f: rounding at f's terms")
        slope1 = float(_g64(ws[k + 1]) @ us[k])
        check.bound(f"step {k} small curvature", abs(slope1), c2 * abs(slope0) + tol, scale=abs(slope0),
                    why="the slope along the step is a dot product of gradients of either sign")
        check.reference(f"step {k} kept value", ls.value[k], _f64(ws[k + 1]), scale=f_scale,
                        why="f is a sum of terms of either sign")
        kept_grad = _vec(jax.tree.map(lambda x: x[k], ls.grad))
        check.reference(f"step {k} kept gradient", kept_grad, _g64(ws[k + 1]),
                        scale=np.abs(A_IN) @ np.abs(ws[k + 1]) + np.abs(B_IN), why="A w - b: terms of either sign")
        if zoom is not None:
            check.bound(f"step {k} stepsize <= max_learning_rate", eta, zoom["max_learning_rate"])
    # Gradient descent with the best fixed step contracts f - f* by ((k - 1) / (k + 1))**2 a step at best
    # (condition number k = 5): a quasi-Newton method must do better than (2/3)**12 over 6 steps.
    check.bound("f - f* after 6 steps, relative to the start", (_f64(ws[-1]) - F_STAR) / (_f64(ws[0]) - F_STAR),
                (2.0 / 3.0) ** 12)
    check.layout(f"lbfgs/{config}/state_after_init", state0)
    check.layout(f"lbfgs/{config}/state_after_steps", _last(states))
    check.golden(f"lbfgs/{config}/stepsizes", ls.learning_rate)
    check.golden_exact(f"lbfgs/{config}/linesearch_steps", ls.info.num_linesearch_steps)
    check.golden_tree(f"lbfgs/{config}/updates", updates, scales=_trajectory_scales(ws, updates), why=TRAJECTORY_WHY)


# -- backtracking linesearch ----------------------------------------------------------------------------------
BACKTRACK = dict(max_backtracking_steps=10, slope_rtol=0.3, decrease_factor=0.5, increase_factor=2.0,
                 max_learning_rate=1.2, atol=1e-4, rtol=1e-3, store_grad=True)


def _gradient_descent_backtracking():
    return optax.chain(optax.scale(-1.0), optax.scale_by_backtracking_linesearch(**BACKTRACK))


def test_backtracking_linesearch(check):
    """Gradient descent with scale_by_backtracking_linesearch (every parameter set), 7 steps: each stepsize
    is the documented rule's, the first of guess, guess * decrease_factor, ... (guess = the previous
    stepsize * increase_factor, at most max_learning_rate; 1 before the first step) meeting f(w + eta u) <=
    (1 + rtol) f(w) + eta slope_rtol <u, grad f> + atol, found on the same trial; store_grad keeps grad f at
    the new params. Stepsizes, trial counts and updates are golden."""
    b = BACKTRACK
    state0, ws, gs, us, updates, states = _steps(_gradient_descent_backtracking, with_linesearch=True)
    ls = states[-1]
    previous = 1.0
    for k in range(STEPS):
        u = -gs[k]
        guess = min(previous * b["increase_factor"], b["max_learning_rate"])
        eta, trials, margin, rejected = ref.backtracking_stepsize(
            lambda e: _f64(ws[k] + e * u), _f64(ws[k]), float(gs[k] @ u), guess, b["decrease_factor"],
            b["slope_rtol"], b["rtol"], b["atol"], b["max_backtracking_steps"])
        check.reference(f"step {k} stepsize", ls.learning_rate[k], eta)
        check.exact(f"step {k} trials", int(ls.info.num_linesearch_steps[k]), trials)
        check.reference(f"step {k} update", us[k], eta * u)
        kept_grad = _vec(jax.tree.map(lambda x: x[k], ls.grad))
        check.reference(f"step {k} kept gradient", kept_grad, _g64(ws[k] + eta * u),
                        scale=np.abs(A_IN) @ np.abs(ws[k] + eta * u) + np.abs(B_IN),
                        why="A w - b: terms of either sign")
        previous = float(ls.learning_rate[k])
    check.layout("backtracking/state_after_init", state0)
    check.layout("backtracking/state_after_steps", _last(states))
    check.golden("backtracking/stepsizes", ls.learning_rate)
    check.golden_exact("backtracking/trials", ls.info.num_linesearch_steps)
    check.golden_tree("backtracking/updates", updates, scales=_trajectory_scales(ws, updates), why=TRAJECTORY_WHY)


# -- verbose: what a failed search prints ---------------------------------------------------------------------
_FAILING = {  # name -> the linesearch, verbose, given an ascent direction (+grad): no stepsize can decrease f
    "backtracking": lambda: optax.scale_by_backtracking_linesearch(max_backtracking_steps=3, verbose=True),
    "zoom": lambda: optax.scale_by_zoom_linesearch(max_linesearch_steps=3, verbose=True),
}
_NUMBER = re.compile(r"-?(?:\d+\.\d*(?:e[-+]?\d+)?|inf|nan)")
PRINT_WHY = ("printed float32 values of f, of its slope and of differences of f's values (a stepsize: exact): "
             "sums of terms of either sign, rounding at f's terms")


def _failed_search(name):
    """One update of the named verbose linesearch from PARAMS0 along +grad, jitted; returns the gradient."""
    def run(params):
        value, grad = jax.value_and_grad(_f)(params)
        tx = _FAILING[name]()
        tx.update(grad, tx.init(params), params, value=value, grad=grad, value_fn=_f)
        return grad
    grad = jax.jit(run)(PARAMS0)
    jax.effects_barrier()  # the prints are host callbacks: all of them done before stdout is read
    return _vec(grad).astype(np.float64)


def _printed_numbers(text: str) -> dict[str, float]:
    """'Label: number' lines -> {label: number}."""
    return {label.strip(): float(number) for label, number in re.findall(rf"^([A-Z][\w ]+): ({_NUMBER.pattern}),?$", text, re.M)}


@pytest.mark.parametrize("name", sorted(_FAILING))
def test_linesearch_verbose(check, capfd, name):
    """scale_by_backtracking_linesearch(max_backtracking_steps=3, verbose=True) and
    scale_by_zoom_linesearch(max_linesearch_steps=3, verbose=True), one update along +grad (an ascent direction)
    from PARAMS0: the search fails and prints its diagnostics to stdout. The text, numbers replaced by <x>, is a
    golden fact (its lines sorted: the zoom's diagnostics are unordered host callbacks); the numbers it prints
    are golden too, and the value f(w), the slope <grad f, u> = ||grad f||^2 (and backtracking's stepsize
    0.8^3 and decrease error f(w + eta u) - f(w) - eta slope_rtol slope) are held to float64."""
    capfd.readouterr()
    g = _failed_search(name)
    text = capfd.readouterr().out
    check.golden_fact(f"{name}_linesearch/verbose_failure_text", sorted(_NUMBER.sub("<x>", text).splitlines()))
    numbers = _printed_numbers(text)
    w = _vec(PARAMS0).astype(np.float64)
    w_abs = np.abs(w)
    f_scale = abs(_f64(w)) + 0.5 * float(w_abs @ np.abs(A_IN) @ w_abs) + float(np.abs(B_IN) @ w_abs)
    printed = np.array(list(numbers.values()))
    check.golden(f"{name}_linesearch/verbose_failure_numbers", printed.astype(F32),
                 scale=np.maximum(np.abs(printed), f_scale), why=PRINT_WHY)
    check.reference("printed value at the current params", F32(numbers["Value at current params"]), _f64(w),
                    scale=f_scale, why=PRINT_WHY)
    check.reference("printed slope along the update", F32(numbers["Slope along update direction"]), float(g @ g))
    if name == "backtracking":
        eta = 0.8**3  # 1, then times decrease_factor on each of max_backtracking_steps rejections
        check.reference("printed stepsize", F32(numbers["Stepsize"]), eta)
        w_new = w + eta * g
        new_abs = np.abs(w_new)
        check.reference("printed decrease error", F32(numbers["Decrease Error"]),
                        -ref.armijo_margin(_f64(w), _f64(w_new), float(g @ g), eta, 1e-4),
                        scale=f_scale + 0.5 * float(new_abs @ np.abs(A_IN) @ new_abs) + float(np.abs(B_IN) @ new_abs),
                        why=PRINT_WHY)
