"""NumPy float64 references of the L-BFGS direction and the linesearch criteria, written from the
documented formulas (optax.scale_by_lbfgs, optax.scale_by_backtracking_linesearch and
optax.scale_by_zoom_linesearch docstrings; Nocedal & Wright, Numerical Optimization, 1999, Alg. 7.4),
not from Optax's code. Vectors are flat float64 arrays.
"""

from __future__ import annotations

import numpy as np


def lbfgs_direction(grad, diffs_params, diffs_grads, scale_init: bool, first_grad_norm_cap: bool = True):
    """P_k u_k by the two-loop recursion (Nocedal & Wright Alg. 7.4) over the kept pairs
    (s_j = w_{j+1} - w_j, y_j = u_{j+1} - u_j), oldest first, with P_{k,k-m} = gamma_k I:
    gamma_k = s_{k-1}.y_{k-1} / y_{k-1}.y_{k-1} when scale_init (the docstring's formula), 1 otherwise.
    On the first step (no pair yet) and scale_init, the docstring's note: gamma_0 is the reciprocal of the
    gradient norm capped at 1, min(1, 1 / ||u_0||), so the first step stays in the unit ball."""
    q = np.asarray(grad, np.float64).copy()
    pairs = [(np.asarray(s, np.float64), np.asarray(y, np.float64)) for s, y in zip(diffs_params, diffs_grads)]
    rhos = [1.0 / float(s @ y) for s, y in pairs]
    alphas = []
    for (s, y), rho in reversed(list(zip(pairs, rhos))):
        alpha = rho * float(s @ q)
        alphas.append(alpha)
        q = q - alpha * y
    alphas.reverse()
    if not scale_init:
        gamma = 1.0
    elif pairs:
        s, y = pairs[-1]
        gamma = float(s @ y) / float(y @ y)
    else:
        gamma = min(1.0, 1.0 / float(np.linalg.norm(grad))) if first_grad_norm_cap else 1.0
    r = gamma * q
    for (s, y), rho, alpha in zip(pairs, rhos, alphas):
        beta = rho * float(y @ r)
        r = r + s * (alpha - beta)
    return r


def armijo_margin(f0, f_new, slope, stepsize, slope_rtol, rtol=0.0, atol=0.0):
    """Sufficient decrease (optax.scale_by_backtracking_linesearch's docstring): f(w + eta u) <=
    (1 + rtol) f(w) + eta c <u, grad f(w)> + atol; returns the right side minus the left (>= 0 holds)."""
    return (1.0 + rtol) * f0 + stepsize * slope_rtol * slope + atol - f_new


def backtracking_stepsize(f_line, f0, slope, guess, decrease_factor, slope_rtol, rtol, atol, max_steps):
    """The documented backtracking rule: start at `guess` (the previous stepsize times increase_factor,
    capped at max_learning_rate) and multiply by decrease_factor until the sufficient decrease holds.
    f_line(eta) is f(w + eta u) in float64. Returns (stepsize, number of trials, the accepted trial's margin
    and the rejected one's before it, None on the first trial)."""
    eta, rejected = guess, None
    for trial in range(1, max_steps + 2):
        margin = armijo_margin(f0, f_line(eta), slope, eta, slope_rtol, rtol, atol)
        if margin >= 0:
            return eta, trial, margin, rejected
        rejected, eta = margin, eta * decrease_factor
    raise ValueError("the backtracking reference found no stepsize: choose a descent direction")


def curvature_margin(slope0, slope_new, curv_rtol, tol=0.0):
    """The small-curvature (strong Wolfe) criterion of optax.scale_by_zoom_linesearch's docstring:
    |<grad f(w + eta u), u>| <= c2 |<grad f(w), u>| + tol; returns the right side minus the left."""
    return curv_rtol * abs(slope0) + tol - abs(slope_new)
