"""The classic optimizers' update rules in NumPy float64, from their documented formulas.

Each function takes one leaf's gradients over the steps (and its parameter where the rule reads it) as
float64 arrays and returns what the rule emits at every step (and its running statistics where a
contract compares them). Hyperparameters are plain floats: a contract passes them rounded to the dtype
the library computed with. Sources are in each docstring; where Optax documents a variant (eps inside or
outside the square root) the function takes the same switch and follows the documented formula.
"""

from __future__ import annotations

import numpy as np


def momentum_trace(updates: list[np.ndarray], momentum: float, nesterov: bool) -> list[np.ndarray]:
    """Heavy-ball momentum (Sutskever et al. 2013, as optax.sgd documents it): t <- u + momentum * t, emitting
    t, or u + momentum * t with Nesterov's look-ahead."""
    trace, out = np.zeros_like(updates[0]), []
    for u in updates:
        trace = u + momentum * trace
        out.append(u + momentum * trace if nesterov else trace)
    return out


def sgd(grads: list[np.ndarray], learning_rate: float, momentum: float | None, nesterov: bool) -> list[np.ndarray]:
    """optax.sgd: -lr * g, or -lr * the momentum trace of g."""
    steps = grads if momentum is None else momentum_trace(grads, momentum, nesterov)
    return [-learning_rate * s for s in steps]


def rms_scaling(grads: list[np.ndarray], decay: float, eps: float, initial_scale: float, eps_in_sqrt: bool,
                bias_correction: bool, centered: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """RMSProp's rescaling (Hinton 2012; centered: Graves 2014, eq. 38-40; optax.rmsprop's docstring):
    nu <- decay nu + (1 - decay) g^2 from nu_0 = initial_scale; centered also mu <- decay mu + (1 - decay) g
    from 0 and the denominator uses nu - mu^2; bias_correction divides nu (and mu) by 1 - decay^t; the
    scaled gradient is g / sqrt(den + eps) (eps_in_sqrt) or g / (sqrt(den) + eps) (PyTorch's form, the
    docstring's warning). Returns (scaled gradients, nu after each step)."""
    nu = np.full_like(grads[0], initial_scale)
    mu = np.zeros_like(grads[0])
    scaled, nus = [], []
    for t, g in enumerate(grads, 1):
        nu = decay * nu + (1 - decay) * g * g
        mu = decay * mu + (1 - decay) * g
        correction = 1 - decay ** t if bias_correction else 1.0
        den = nu / correction - ((mu / correction) ** 2 if centered else 0.0)
        scaled.append(g / np.sqrt(den + eps) if eps_in_sqrt else g / (np.sqrt(den) + eps))
        nus.append(nu)
    return scaled, nus


def rmsprop(grads: list[np.ndarray], learning_rate: float, momentum: float | None, nesterov: bool,
            **scaling) -> list[np.ndarray]:
    """optax.rmsprop: the rescaled gradient times -lr, then the momentum trace of that when momentum is set
    (the LaProp order the docstring cites: momentum over the already rescaled step)."""
    steps = [-learning_rate * s for s in rms_scaling(grads, **scaling)[0]]
    return steps if momentum is None else momentum_trace(steps, momentum, nesterov)


def adagrad_scaling(grads: list[np.ndarray], initial_accumulator_value: float, eps: float) -> list[np.ndarray]:
    """Adagrad (Duchi et al. 2011, optax.adagrad's docstring): g_t / sqrt(G_t + eps), G_t = the initial
    accumulator value + the sum of g_tau^2 up to t."""
    total, out = np.full_like(grads[0], initial_accumulator_value), []
    for g in grads:
        total = total + g * g
        out.append(g / np.sqrt(total + eps))
    return out


def adadelta_scaling(grads: list[np.ndarray], rho: float, eps: float) -> list[np.ndarray]:
    """Adadelta (Zeiler 2012, Algorithm 1; optax.adadelta's docstring): E[g^2] <- rho E[g^2] + (1 - rho) g^2,
    dx = sqrt(E[dx^2]_{t-1} + eps) / sqrt(E[g^2]_t + eps) * g, E[dx^2] <- rho E[dx^2] + (1 - rho) dx^2.
    Returns dx with the paper's sign (+, a step along g); the learning rate is a global factor after it."""
    eg, ex, out = np.zeros_like(grads[0]), np.zeros_like(grads[0]), []
    for g in grads:
        eg = rho * eg + (1 - rho) * g * g
        dx = np.sqrt(ex + eps) / np.sqrt(eg + eps) * g
        ex = rho * ex + (1 - rho) * dx * dx
        out.append(dx)
    return out


def trust_ratio(update: np.ndarray, param: np.ndarray, trust_coefficient: float, eps: float,
                min_norm: float) -> np.ndarray:
    """LARS's layer-wise trust ratio (You et al. 2017, eq. 6; optax.scale_by_trust_ratio's docstring):
    u * coefficient * max(||w||, min_norm) / (max(||u||, min_norm) + eps), u itself where a norm is 0."""
    w_norm = max(np.linalg.norm(param), min_norm)
    u_norm = max(np.linalg.norm(update), min_norm)
    if w_norm == 0 or u_norm == 0:
        return update
    return update * trust_coefficient * w_norm / (u_norm + eps)


def lars(grads: list[np.ndarray], param: np.ndarray, learning_rate: float, weight_decay: float, decayed: bool,
         trust_coefficient: float, eps: float, trusted: bool, momentum: float, nesterov: bool) -> list[np.ndarray]:
    """LARS (You et al. 2017, Algorithm 1): g + weight_decay * w (where the weight-decay mask is True), scaled
    by the trust ratio (where its mask is True), times -lr, then the momentum trace."""
    steps = []
    for g in grads:
        u = g + weight_decay * param if decayed else g
        u = trust_ratio(u, param, trust_coefficient, eps, 0.0) if trusted else u
        steps.append(-learning_rate * u)
    return momentum_trace(steps, momentum, nesterov)


def fromage(grads: list[np.ndarray], param: np.ndarray, learning_rate: float | list[float],
            min_norm: float) -> list[np.ndarray]:
    """Fromage (Bernstein et al. 2020, Algorithm 1): w <- (w - lr * g ||w|| / ||g||) / sqrt(1 + lr^2), as an
    update w_new - w (norms held at least min_norm, as in LARS: the docstring); learning_rate: one per step
    for a schedule."""
    rates = learning_rate if isinstance(learning_rate, list) else [learning_rate] * len(grads)
    out = []
    for g, learning_rate in zip(grads, rates):
        ratio = max(np.linalg.norm(param), min_norm) / max(np.linalg.norm(g), min_norm)
        out.append((param - learning_rate * ratio * g) / np.sqrt(1 + learning_rate ** 2) - param)
    return out


def sm3(grads: list[np.ndarray], b1: float, eps: float, b2: float = 1.0) -> list[np.ndarray]:
    """SM3-II (Anil et al. 2019, Algorithm 2) with one cover set per row and per column of a matrix (one per
    element of a vector): nu_ij = min(mu_row_i, mu_col_j) + g_ij^2, mu_row_i <- max_j nu_ij, mu_col_j <-
    max_i nu_ij; the step g / sqrt(nu + eps) (0 where nu is 0) goes through momentum m <- b1 m + (1 - b1) step
    (the paper's Section 5 momentum), which is emitted. b2 < 1 (optax.scale_by_sm3's "decay rate for the
    exponentially weighted average of squared grads", not in the paper): nu_ij = b2 min(...) + (1 - b2) g_ij^2;
    b2 = 1 is the paper's sum."""
    shape = grads[0].shape
    rows = np.zeros(shape[0]) if len(shape) == 2 else None
    cols = np.zeros(shape[1]) if len(shape) == 2 else None
    acc = np.zeros(shape)
    new = 1.0 if b2 == 1.0 else 1 - b2
    m, out = np.zeros(shape), []
    for g in grads:
        if len(shape) == 2:
            acc = b2 * np.minimum(rows[:, None], cols[None, :]) + new * g * g
            rows, cols = acc.max(axis=1), acc.max(axis=0)
        else:
            acc = b2 * acc + new * g * g
        step = np.where(acc > 0, g / np.sqrt(acc + eps), 0.0)
        m = b1 * m + (1 - b1) * step
        out.append(m)
    return out


def rprop(grads: list[np.ndarray], learning_rate: float, eta_minus: float, eta_plus: float, min_step: float,
          max_step: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """iRprop- (Igel & Huesken 2003, Fig. 1; Riedmiller & Braun 1993): per element, with the previous gradient
    g', step <- min(step * eta_plus, max) if g g' > 0, max(step * eta_minus, min) if g g' < 0 and then g := 0
    (the next product is 0: no change), unchanged if g g' = 0; the update is -sign(g) * step from the initial
    step learning_rate. Returns (updates, step sizes)."""
    step = np.full_like(grads[0], learning_rate)
    previous = np.zeros_like(grads[0])
    updates, steps = [], []
    for g in grads:
        product = g * previous
        step = np.where(product > 0, np.minimum(step * eta_plus, max_step),
                        np.where(product < 0, np.maximum(step * eta_minus, min_step), step))
        g = np.where(product < 0, 0.0, g)
        updates.append(-np.sign(g) * step)
        steps.append(step)
        previous = g
    return updates, steps


def factored_rms(grads: list[np.ndarray], decay_rate: float, first_count: int, step_offset: int, epsilon: float,
                 factored: bool, beta_fn=None) -> list[np.ndarray]:
    """Adafactor's rescaling (Shazeer & Stern 2018, Algorithms 4 and 5 with beta2_t = 1 - t^-decay_rate, t the
    step number counted from 1 at step_offset: the first step, at count first_count, is t = first_count -
    step_offset + 1, the statistics starting from zero): for a matrix, row and column sums R <- b R + (1 - b) (G^2 + eps) 1,
    C <- b C + (1 - b) 1^T (G^2 + eps), V = R C / (1^T R); else V <- b V + (1 - b) (G^2 + eps); emits G / sqrt(V).
    Factors the two largest axes of a matrix (here: any 2-d leaf, the contract sets min_dim_size_to_factor).
    beta_fn(step, decay_rate): a custom schedule of beta2 (scale_by_factored_rms's decay_rate_fn, given "the
    current step", counted from 0 at step_offset) in place of 1 - t^-decay_rate."""
    shape = grads[0].shape
    two_d = factored and len(shape) == 2
    rows, cols, v = np.zeros(shape[0] if two_d else 1), np.zeros(shape[1] if two_d else 1), np.zeros(shape)
    out = []
    for t, g in enumerate(grads, first_count - step_offset + 1):
        beta = 1 - float(t) ** -decay_rate if beta_fn is None else beta_fn(t - 1, decay_rate)
        sq = g * g + epsilon
        if two_d:
            rows = beta * rows + (1 - beta) * sq.sum(axis=1)
            cols = beta * cols + (1 - beta) * sq.sum(axis=0)
            v = np.outer(rows, cols) / rows.sum()
        else:
            v = beta * v + (1 - beta) * sq
        out.append(g / np.sqrt(v))
    return out


def rms(x: np.ndarray) -> float:
    """The root mean square of an array's elements."""
    return float(np.sqrt(np.mean(x * x)))


def adafactor(grads: list[np.ndarray], param: np.ndarray, learning_rate: float, clipping_threshold: float,
              multiply_by_parameter_scale: bool, momentum: float | None, weight_decay_rate: float | None,
              **scaling) -> list[np.ndarray]:
    """Adafactor (Shazeer & Stern 2018, Algorithm 4-5 and Section 6, eq. 7 and 12): U = G / sqrt(V), clipped
    to U / max(1, RMS(U) / d), times the relative step lr * max(1e-3, RMS(W)) (or lr), its momentum
    m <- b1 m + (1 - b1) u when set, plus weight_decay_rate * W, negated."""
    out, m = [], np.zeros_like(param)
    for u in factored_rms(grads, **scaling):
        u = u / max(1.0, rms(u) / clipping_threshold)
        u = learning_rate * u * (max(rms(param), 1e-3) if multiply_by_parameter_scale else 1.0)
        if momentum is not None:
            m = momentum * m + (1 - momentum) * u
            u = m
        if weight_decay_rate is not None:
            u = u + weight_decay_rate * param
        out.append(-u)
    return out
