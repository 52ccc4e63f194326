"""NumPy float64 references of the parameter-free and adaptive-step optimizers of optax.contrib (and
optax.scale_by_distance_over_gradients), written from their docstrings and the papers they cite, not from
Optax's code. Each is one step: from the state the previous step left (read back from the library as float64),
the gradient g, the params x the step saw and (MoMo) the loss value f, to the update and the new state. Vectors
are the tree's leaves concatenated (the norms and inner products of these methods are over the whole tree),
except layer-wise DoG, which takes one vector per leaf.

* COCOB-Backprop (Orabona & Tommasi 2017, Algorithm 2), with the paper's g_t = -gradient written out:
  L_t = max(L_{t-1}, |c_t|), G_t = G_{t-1} + |c_t|, R_t = max(R_{t-1} - c_t (x_t - x_1), 0), theta_t =
  theta_{t-1} - c_t, x_{t+1} = x_1 + theta_t / (L_t max(G_t + L_t, alpha L_t)) (L_t + R_t). The docstring's eps
  is L_0 (the paper starts at 0, dividing by zero on a zero first gradient).
* DoG (Ivgi et al. 2023; the docstring's formula): r_bar_t = max(r_eps, max_{k<=t} ||x_k - x_0||), G_t =
  sum_{k<=t} ||g_k||**2, eta_t = r_bar_t / sqrt(G_t + eps), x_{t+1} = x_t - eta_t g_t; init_step "learning_rate"
  gives eta_0 directly, "heuristic" r_eps = value (1 + ||x_0||). Layer-wise DoG (LDoG, the paper's Section 4,
  optax.scale_by_distance_over_gradients) takes r_bar, G and eta per leaf, r_eps = reps_rel (1 + ||x_0||).
* DoWG (Khaled et al. 2023, Algorithm 1): r_bar_t**2 = max(r_bar_{t-1}**2, ||x_t - x_0||**2), v_t = v_{t-1} +
  r_bar_t**2 ||g_t||**2, eta_t = r_bar_t**2 / (sqrt(v_t) + eps); the docstring's init_estim_sq_dist (else eps) is
  r_bar_0**2.
* MoMo and MoMo-Adam (Schaipp et al. 2023, Algorithms 1 and 2 and the weight-decay and online-lower-bound
  variants; the docstrings add only that the step is min(learning_rate, adaptive term)): d_t, f_bar_t and
  gamma_t are averages of g, f and <g, x>; h_t = f_bar_t + <d_t, x_t> - gamma_t; tau_t = min(alpha,
  ((1 + alpha wd) (f_bar_t - f_*) + ... )_+ / ||d_t||**2). MoMo's averages start at the first values (the
  paper's non-bias-corrected form); MoMo-Adam's start at zero with the bias corrections rho_t = 1 - b1**t and
  D_t = eps + sqrt(v_t / (1 - b2**t)). The paper applies weight decay proximally, x_{t+1} = (x_t - tau d_t) /
  (1 + alpha wd): see momo_step's weight_decay_form.
* Mechanic (Cutkosky et al. 2023, Algorithm 1, memory-efficient form): Delta_t = (x_t - x_ref) / (S_t + eps)
  with S_t = sum(s_t); g~ = g + wd S_t ||g|| / (||x|| + eps) x; h = <g~, Delta_t>, clipped to [-m_{t-1},
  m_{t-1}] in r only (the docstring's implementation note: added after the paper); m_t = max(beta m, |h| +
  eps); v_t = beta**2 v + h**2; r_t = beta r - s_t clip(h); W = s_init / n m_t + max(r_t, 0); s_{t+1} = W /
  (sqrt(v_t) + eps); x_{t+1} = x_ref + S_{t+1} (Delta_t + u_t), u_t the base optimizer's update; betas 1 -
  0.1**i, i = 1..num_betas (the docstring).

Every step also returns the operands' magnitude of each value (the same formula over |terms| where terms of
either sign are summed): rounding error is relative to those, not to a result that cancelled.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


def _sq(x) -> float:
    return float(np.dot(x, x))


class Cocob(NamedTuple):
    update: np.ndarray
    theta: np.ndarray  # the cumulative (negative) gradients
    scale: np.ndarray  # L
    subgradients: np.ndarray  # G
    reward: np.ndarray  # R


def cocob_step(previous: Cocob, c, x, x1, alpha: float) -> tuple[Cocob, Cocob]:
    """One COCOB-Backprop step on the coin's gradient c at params x (x1 the first params): (values, magnitudes)."""
    L = np.maximum(previous.scale, np.abs(c))
    G = previous.subgradients + np.abs(c)
    R = np.maximum(previous.reward - c * (x - x1), 0.0)
    theta = previous.theta - c
    bet = (L + R) / (L * np.maximum(G + L, alpha * L))
    update = x1 + theta * bet - x
    R_mag = np.abs(previous.reward) + np.abs(c * (x - x1))
    theta_mag = np.abs(previous.theta) + np.abs(c)
    bet_mag = (L + R_mag) / (L * np.maximum(G + L, alpha * L))
    return (Cocob(update, theta, L, G, R),
            Cocob(np.abs(x1) + theta_mag * bet_mag + np.abs(x), theta_mag, L, G, R_mag))


def dog_eta(max_dist_previous: float, sum_sq_previous: float, g, x, x0, eps: float):
    """(eta, r_bar, G) of one DoG step over the whole tree (vectors)."""
    r_bar = max(max_dist_previous, float(np.sqrt(_sq(x - x0))))
    G = sum_sq_previous + _sq(g)
    return r_bar / np.sqrt(G + eps), r_bar, G


def ldog_update_as_optax_0_2_6_computes_it(r_bar: float, G: float, g, eps: float, global_scale: float):
    """Not a documented rule: optax 0.2.6's layer-wise DoG step as it computes it, its per-leaf function of
    (g, d, G) mapped over (max_dist, G, updates), so global_scale * G / sqrt(g + eps) * r_bar elementwise
    (NaN where g < -eps). The documented global_scale * r_bar / sqrt(G + eps) * g is dog_eta's; optax 0.2.8
    passes the arguments in order. Pinned so that eps and global_scale are held at value level on the
    baseline, and a change of either shows."""
    with np.errstate(invalid="ignore"):
        return global_scale * G / np.sqrt(g + eps) * r_bar


def dowg_eta(sq_dist_previous: float, weighted_previous: float, g, x, x0, eps: float):
    """(eta, r_bar**2, v) of one DoWG step over the whole tree."""
    r2 = max(sq_dist_previous, _sq(x - x0))
    v = weighted_previous + r2 * _sq(g)
    return r2 / (np.sqrt(v) + eps), r2, v


def heuristic_r_eps(value: float, x0) -> float:
    """DoG's "heuristic" initial distance (and LDoG's per leaf): value (1 + ||x_0||)."""
    return value * (1.0 + float(np.sqrt(_sq(x0))))


class Momo(NamedTuple):
    update: np.ndarray
    d: np.ndarray  # exp_avg
    v: np.ndarray | None  # exp_avg_sq (MoMo-Adam)
    f_bar: float
    gamma: float
    lower_bound: float
    tau: float


def momo_step(previous: Momo, g, x, f: float, t: int, learning_rate: float, lower_bound: float,
              weight_decay: float, adapt_lower_bound: bool, beta: float | None = None, b1: float | None = None,
              b2: float | None = None, eps: float = 0.0, weight_decay_form: str = "paper") -> tuple[Momo, Momo]:
    """One MoMo step (beta given) or MoMo-Adam step (b1, b2, eps given), t counted from 1: (values, magnitudes).

    weight_decay_form "paper": x_{t+1} = (x_t - tau D^-1 d) / (1 + alpha wd), as the paper and its authors'
    code; "decoupled": x_{t+1} = x_t / (1 + alpha wd) - tau D^-1 d (the step not shrunk by 1 + alpha wd)."""
    adam = beta is None
    b = b1 if adam else (0.0 if t == 1 else beta)  # MoMo starts its averages at the first values
    d = b * previous.d + (1 - b) * g
    f_bar = b * previous.f_bar + (1 - b) * f
    gamma = b * previous.gamma + (1 - b) * float(g @ x)
    rho = 1.0 - b1**t if adam else 1.0
    if adam:
        v = b2 * previous.v + (1 - b2) * g * g
        precond = eps + np.sqrt(v / (1.0 - b2**t))
    else:
        v, precond = None, np.ones_like(g)
    direction = d / precond
    norm = float(d @ direction)
    iprod = float(d @ x)
    shrink = 1.0 + learning_rate * weight_decay
    lb = previous.lower_bound
    if adapt_lower_bound:
        cap = shrink * (f_bar - gamma) + iprod
        if cap < shrink * rho * lb:
            lb = max(cap / (2 * shrink * rho), lower_bound)
    numerator = shrink * (f_bar - rho * lb - gamma) + iprod
    tau = min(learning_rate / rho, max(numerator, 0.0) / norm)
    if weight_decay_form == "paper":
        update = (x - tau * direction) / shrink - x
    else:
        update = x / shrink - tau * direction - x
    new_lb = max((f_bar + iprod - gamma - 0.5 * tau * norm) / rho, lower_bound) if adapt_lower_bound else lb
    # magnitudes: the sums of terms of either sign over |terms|; tau's numerator over |terms|, divided by the norm
    d_mag = b * np.abs(previous.d) + (1 - b) * np.abs(g)
    gamma_mag = b * abs(previous.gamma) + (1 - b) * float(np.abs(g) @ np.abs(x))
    f_mag = b * abs(previous.f_bar) + (1 - b) * abs(f)
    iprod_mag = float(d_mag @ np.abs(x))
    numerator_mag = shrink * (f_mag + abs(rho * lb) + gamma_mag) + iprod_mag
    capped = tau == learning_rate / rho
    # tau = numerator / norm: its rounding is the numerator's at numerator_mag plus the norm's (relative,
    # d's rounding at d_mag twice); a capped tau is the cap itself
    tau_mag = 0.0 if capped else numerator_mag / norm + tau * 2 * float(d_mag @ np.abs(direction)) / norm
    step_mag = (tau_mag * np.abs(direction) + tau * d_mag / precond)
    update_mag = (np.abs(x) + step_mag) / shrink + np.abs(x)
    lb_mag = (f_mag + iprod_mag + gamma_mag + 0.5 * (tau_mag + tau) * norm) / rho if adapt_lower_bound else abs(lb)
    values = Momo(update, d, v, f_bar, gamma, new_lb, tau)
    magnitudes = Momo(update_mag, d_mag, None if v is None else np.abs(v), f_mag, gamma_mag, lb_mag, tau_mag)
    return values, magnitudes


class Mechanic(NamedTuple):
    update: np.ndarray
    m: np.ndarray
    v: np.ndarray
    r: np.ndarray
    s: np.ndarray


def mechanic_betas(num_betas: int) -> np.ndarray:
    return np.array([1.0 - 0.1**i for i in range(1, num_betas + 1)])


def mechanic_step(previous: Mechanic, g, x, x_ref, base_update, betas, weight_decay: float, eps: float,
                  s_init: float) -> tuple[Mechanic, Mechanic]:
    """One Mechanic step: (values, magnitudes); base_update is u_t, the base optimizer's (descent) update."""
    S = float(np.sum(previous.s))
    g_norm, x_norm = np.sqrt(_sq(g)), np.sqrt(_sq(x))
    g_decayed = g + weight_decay * S * g_norm / (x_norm + eps) * x
    delta = (x - x_ref) / (S + eps)
    h = float(g_decayed @ delta)
    m_prev = previous.m
    clipped = np.clip(h, -m_prev, m_prev)
    m = np.maximum(betas * m_prev, abs(h) + eps)
    v = betas**2 * previous.v + h * h
    r = betas * previous.r - previous.s * clipped
    s = (s_init / len(betas) * m + np.maximum(r, 0.0)) / (np.sqrt(v) + eps)
    x_new = x_ref + np.sum(s) * (delta + base_update)
    values = Mechanic(x_new - x, m, v, r, s)
    # magnitudes: h sums terms of either sign (and x - x_ref cancels); r and the new params likewise
    h_mag = float((np.abs(g) + weight_decay * S * g_norm / (x_norm + eps) * np.abs(x))
                  @ ((np.abs(x) + np.abs(x_ref)) / (S + eps)))
    r_mag = betas * np.abs(previous.r) + previous.s * np.minimum(h_mag, m_prev)
    # s_{t+1} moves with h (through m, v and r): first order, |ds/dh| h_mag, plus r's rounding at r_mag
    dh = 1e-7 * max(h_mag, 1e-30)
    m_up = np.maximum(betas * m_prev, abs(h + dh) + eps)
    r_up = betas * previous.r - previous.s * np.clip(h + dh, -m_prev, m_prev)
    s_up = (s_init / len(betas) * m_up + np.maximum(r_up, 0.0)) / (np.sqrt(betas**2 * previous.v + (h + dh)**2) + eps)
    s_mag = np.abs(s_up - s) / 1e-7 + r_mag / (np.sqrt(v) + eps) + np.abs(s)
    step = delta + base_update
    step_mag = (np.abs(x) + np.abs(x_ref)) / (S + eps) + np.abs(base_update)
    x_new_mag = np.abs(x_ref) + float(np.sum(s_mag)) * np.abs(step) + np.sum(s) * step_mag
    magnitudes = Mechanic(x_new_mag + np.abs(x), np.abs(m), np.abs(v), r_mag, s_mag)
    return values, magnitudes
