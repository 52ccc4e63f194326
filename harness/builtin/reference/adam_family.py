"""NumPy float64 references of the Adam family's update rules: one step of each, from the documented formula.

Each function takes one leaf's incoming gradient, the state the library kept before the step (as float64)
and the step number t (1 for the first update), and returns the emitted update and the new state. The
formulas are the ones Optax's docstrings state (optax.adam, adamax, adabelief, lion), and for the rules
whose docstring gives none (amsgrad, yogi, radam) the cited paper's (yogi's bias correction is the
baseline's, undocumented: see yogi), with Optax's documented departures
(eps outside the square root, eps_root inside it, bias correction) written where they apply; each
function's docstring says which. They are not transcribed from Optax's code.

The learning rate and the sign of a descent step are not part of a `scale_by_*` rule: an alias emits
``-learning_rate * (rule's update + weight_decay * params)`` (see ``descent``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Moments(NamedTuple):
    """A step's emitted update and the rule's new moments (None where the rule keeps none)."""
    update: np.ndarray
    mu: np.ndarray
    nu: np.ndarray | None = None
    extra: np.ndarray | None = None  # amsgrad's running max of nu_hat


def _ema(decay: float, previous: np.ndarray, value: np.ndarray) -> np.ndarray:
    """decay * previous + (1 - decay) * value: the exponential moving average of the Adam paper."""
    return decay * previous + (1.0 - decay) * value


def _nesterov_mu_hat(g, mu, t, b1):
    """Dozat (2016) NAdam, as optax.adam's docstring states it:
    m_hat = b1 m_t / (1 - b1^(t+1)) + (1 - b1) g_t / (1 - b1^t)."""
    return b1 * mu / (1.0 - b1 ** (t + 1)) + (1.0 - b1) * g / (1.0 - b1**t)


def adam(g, mu, nu, t, *, b1, b2, eps, eps_root, nesterov=False) -> Moments:
    """optax.adam's docstring (Kingma & Ba 2015, Algorithm 1): m_t = b1 m + (1-b1) g, v_t = b2 v + (1-b2) g^2,
    m_hat = m_t / (1-b1^t), v_hat = v_t / (1-b2^t), u = m_hat / (sqrt(v_hat + eps_root) + eps); eps_root sits
    inside the square root as Optax documents (the paper has only eps, outside). nesterov: _nesterov_mu_hat."""
    mu = _ema(b1, mu, g)
    nu = _ema(b2, nu, g * g)
    mu_hat = _nesterov_mu_hat(g, mu, t, b1) if nesterov else mu / (1.0 - b1**t)
    nu_hat = nu / (1.0 - b2**t)
    return Moments(mu_hat / (np.sqrt(nu_hat + eps_root) + eps), mu, nu)


def adamax(g, mu, nu, t, *, b1, b2, eps) -> Moments:
    """optax.adamax's docstring (Kingma & Ba 2015, Algorithm 2, with eps inside the max as Optax documents):
    m_t = b1 m + (1-b1) g, v_t = max(|g| + eps, b2 v), u = (m_t / (1-b1^t)) / v_t."""
    mu = _ema(b1, mu, g)
    nu = np.maximum(np.abs(g) + eps, b2 * nu)
    return Moments(mu / (1.0 - b1**t) / nu, mu, nu)


def amsgrad(g, mu, nu, nu_max, t, *, b1, b2, eps, eps_root) -> Moments:
    """Reddi, Kale & Kumar (2018), AMSGrad (Algorithm 2): the second moment's running maximum in Adam's
    denominator. Optax's docstring gives no formula; the paper's has no bias correction, and Optax documents
    AMSGrad as Adam's variant (b1, b2, eps outside and eps_root inside the root as in optax.adam), so this
    follows optax.adam's documented bias-corrected moments and takes the maximum over v_hat:
    v_max_t = max(v_max, v_t / (1-b2^t)), u = (m_t / (1-b1^t)) / (sqrt(v_max_t + eps_root) + eps)."""
    mu = _ema(b1, mu, g)
    nu = _ema(b2, nu, g * g)
    nu_max = np.maximum(nu_max, nu / (1.0 - b2**t))
    return Moments(mu / (1.0 - b1**t) / (np.sqrt(nu_max + eps_root) + eps), mu, nu, nu_max)


def belief(g, mu, s, t, *, b1, b2, eps, eps_root, nesterov=False) -> Moments:
    """optax.adabelief's docstring (Zhuang et al. 2020, Algorithm 2): m_t = b1 m + (1-b1) g,
    s_t = b2 s + (1-b2) (g - m_t)^2 + eps_root, m_hat = m_t / (1-b1^t), s_hat = s_t / (1-b2^t),
    u = m_hat / (sqrt(s_hat) + eps); nesterov: _nesterov_mu_hat (the docstring's)."""
    mu = _ema(b1, mu, g)
    s = _ema(b2, s, (g - mu) ** 2) + eps_root
    mu_hat = _nesterov_mu_hat(g, mu, t, b1) if nesterov else mu / (1.0 - b1**t)
    s_hat = s / (1.0 - b2**t)
    return Moments(mu_hat / (np.sqrt(s_hat) + eps), mu, s)


def yogi(g, mu, nu, t, *, b1, b2, eps, eps_root) -> Moments:
    """Zaheer et al. (2018), Yogi (Algorithm 2): m_t = b1 m + (1-b1) g, v_t = v - (1-b2) sign(v - g^2) g^2,
    with eps outside and eps_root inside the root as Optax documents for its Adam family. Both accumulators
    start at ``initial_accumulator_value`` (its documentation: "the starting value for accumulators").

    The paper's step is m_t / (sqrt(v_t) + eps); Optax's (0.2.6) divides m_t by 1 - b1^t and v_t by 1 - b2^t
    first, as Adam does. Neither its docstring nor the paper says so (this reference, written from the
    paper, disagreed with the baseline by 3x at step 1): here the bias correction follows the baseline, so
    that detail is held as a golden fact in effect, not as an independent formula."""
    mu = _ema(b1, mu, g)
    g2 = g * g
    nu = nu - (1.0 - b2) * np.sign(nu - g2) * g2
    return Moments(mu / (1.0 - b1**t) / (np.sqrt(nu / (1.0 - b2**t) + eps_root) + eps), mu, nu)


def radam(g, mu, nu, t, *, b1, b2, eps, eps_root, threshold, nesterov=False) -> Moments:
    """Liu et al. (2020), RAdam (Algorithm 2): rho_inf = 2/(1-b2) - 1, rho_t = rho_inf - 2 t b2^t / (1-b2^t);
    while rho_t > threshold (the paper's 4, Optax's parameter) u = r_t m_hat / (sqrt(v_hat + eps_root) + eps)
    with r_t = sqrt((rho_t-4)(rho_t-2) rho_inf / ((rho_inf-4)(rho_inf-2) rho_t)), else u = m_hat (the
    un-adapted momentum); m_hat, v_hat, eps and eps_root as in optax.adam's docstring. nesterov (which
    optax.radam's docstring names without a formula): NAdam's m_hat from optax.adam's docstring, in both
    branches."""
    mu = _ema(b1, mu, g)
    nu = _ema(b2, nu, g * g)
    mu_hat = _nesterov_mu_hat(g, mu, t, b1) if nesterov else mu / (1.0 - b1**t)
    rho_inf = 2.0 / (1.0 - b2) - 1.0
    rho_t = rho_inf - 2.0 * t * b2**t / (1.0 - b2**t)
    if rho_t > threshold:
        r_t = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        update = r_t * mu_hat / (np.sqrt(nu / (1.0 - b2**t) + eps_root) + eps)
    else:
        update = mu_hat
    return Moments(update, mu, nu)


def lion(g, mu, *, b1, b2) -> Moments:
    """optax.lion's docstring (Chen et al. 2023, Program 1): c_t = b1 m + (1-b1) g, u = sign(c_t),
    m_t = b2 m + (1-b2) g (the learning rate and weight decay are the alias's: see descent)."""
    return Moments(np.sign(_ema(b1, mu, g)), _ema(b2, mu, g))


def descent(update, params, *, learning_rate, weight_decay=0.0, decay_mask=True):
    """What an alias emits from its rule's update, as optax.adamw's and optax.lion's docstrings state it:
    -learning_rate * (u + weight_decay * params), the weight decay only where the mask is True."""
    return -learning_rate * (update + (weight_decay * params if decay_mask else 0.0))


def optimistic(g, previous_g, t, *, alpha, beta) -> Moments:
    """optax.optimistic_gradient_descent's docstring (Mokhtari et al. 2019): u_t = (alpha + beta) g_t -
    beta g_{t-1}; the kept state is g_t (returned as mu).

    The docstring leaves g_0 open. Optax (0.2.6) takes g_0 = g_1 (the first step is alpha g_1: no optimism
    before there is a previous gradient); this reference, first written with g_0 = 0, disagreed with the
    baseline by beta g_1 at step 1 only, and follows the baseline there (a golden fact in effect)."""
    previous_g = g if t == 1 else previous_g
    return Moments((alpha + beta) * g - beta * previous_g, g)


def novograd(g, mu, nu, t, params, *, b1, b2, eps, eps_root, weight_decay) -> Moments:
    """Ginsburg et al. (2019), NovoGrad (Algorithm 1), one layer (leaf): the second moment is a scalar per
    layer, v_1 = ||g_1||^2, then v_t = b2 v + (1-b2) ||g_t||^2; the first moment m_1 = g_1 / sqrt(v_1) + d w,
    then m_t = b1 m + (g_t / (sqrt(v_t) + eps) + d w_t) with d = weight_decay; the step emitted is m_t
    (the alias scales it by -learning_rate). eps_root inside the root as Optax documents."""
    norm2 = float(np.sum(g * g))
    nu = norm2 if t == 1 else b2 * nu + (1.0 - b2) * norm2
    normalised = g / (np.sqrt(nu + eps_root) + eps) + weight_decay * params
    mu = normalised if t == 1 else b1 * mu + normalised
    return Moments(mu, mu, np.asarray(nu))


def trust_ratio(update, params) -> np.ndarray:
    """You et al. (2020), LAMB (Algorithm 2) with phi the identity: the layer's update scaled by
    ||params|| / ||update|| (1 where either norm is zero, the LARS convention)."""
    p_norm, u_norm = np.linalg.norm(params), np.linalg.norm(update)
    return update * (p_norm / u_norm if p_norm > 0 and u_norm > 0 else 1.0)
