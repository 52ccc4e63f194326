"""NumPy float64 references of the D-Adaptation family's Adam variants, written from the papers the docstrings
cite and their authors' implementations (the papers' algorithms leave bias correction and weight decay to them),
not from Optax's code:

* optax.contrib.dadapt_adamw: Defazio & Mishchenko 2023, "Learning-Rate-Free Learning by D-Adaptation",
  Adam D-Adaptation, as facebookresearch/dadaptation's DAdaptAdam(use_bias_correction=True, decouple=True,
  growth_rate=inf) runs it. With sqrt_b2 = sqrt(b2), d_0 = estim_lr0 and step k = 0, 1, ...:

      dlr_k = d_k lr_k sqrt(1 - b2**(k+1)) / (1 - b1**(k+1))
      r_{k+1} = sqrt_b2 r_k + (1 - sqrt_b2) dlr_k <g_k, s_k / (sqrt(v_k) + eps)>   (the s and v before this step)
      m_{k+1} = b1 m_k + (1 - b1) dlr_k g_k,   v_{k+1} = b2 v_k + (1 - b2) g_k**2
      s_{k+1} = sqrt_b2 s_k + (1 - sqrt_b2) dlr_k g_k
      d_{k+1} = max(d_k, r_{k+1} / ((1 - sqrt_b2) ||s_{k+1}||_1))
      update_k = -m_{k+1} / (sqrt(v_{k+1}) + eps) - weight_decay dlr_k x_k

* optax.contrib.prodigy: Mishchenko & Defazio 2023, "Prodigy: An Expeditiously Adaptive Parameter-Free
  Learner", Algorithm (Adam version), as konstmish/prodigy's Prodigy(use_bias_correction=True, decouple=True,
  growth_rate=inf, d_coef=estim_lr_coef) runs it. With x_0 the starting params:

      dlr_k = d_k lr_k sqrt(1 - b2**(k+1)) / (1 - b1**(k+1))
      m_{k+1} = b1 m_k + (1 - b1) d_k g_k,   v_{k+1} = b2 v_k + (1 - b2) d_k**2 g_k**2
      r_{k+1} = b3 r_k + (d_k / d_0) dlr_k <g_k, x_0 - x_k>
      s_{k+1} = b3 s_k + (d_k / d_0) w_k g_k,   w_k = d_k (safeguard_warmup: lr left out) or dlr_k
      d_{k+1} = max(d_k, estim_lr_coef r_{k+1} / ||s_{k+1}||_1)
      update_k = -dlr_k m_{k+1} / (sqrt(v_{k+1}) + d_{k+1} eps) - weight_decay dlr_k x_k

  b3 defaults to sqrt(b2). Optax always applies the bias correction (the authors' option, off by default in
  their code) and always decouples the weight decay: the docstrings say "AdamW".
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np


class Step(NamedTuple):
    """One step's update and the distance estimate d after it (the state's estim_lr)."""
    update: np.ndarray
    d: float


def _bias_corrected(d: float, lr: float, betas: tuple[float, float], t: int) -> float:
    b1, b2 = betas
    return d * lr * np.sqrt(1.0 - b2**t) / (1.0 - b1**t)


def dadapt_adamw(grads, params, learning_rate: Callable[[int], float], b1: float, b2: float, eps: float,
                 estim_lr0: float, weight_decay: float, bias_betas: tuple[float, float] | None = None) -> list[Step]:
    """Every step's update and d, from the gradients and params (flat float64 vectors) each step was given;
    bias_betas: (b1, b2) as the bias correction's powers see them (default: b1, b2)."""
    sqrt_b2 = np.sqrt(b2)
    m = v = s = np.zeros_like(grads[0])
    r, d, out = 0.0, estim_lr0, []
    for k, (g, x) in enumerate(zip(grads, params)):
        dlr = _bias_corrected(d, learning_rate(k), bias_betas or (b1, b2), k + 1)
        r = sqrt_b2 * r + (1 - sqrt_b2) * dlr * float(g @ (s / (np.sqrt(v) + eps)))
        m = b1 * m + (1 - b1) * dlr * g
        v = b2 * v + (1 - b2) * g**2
        s = sqrt_b2 * s + (1 - sqrt_b2) * dlr * g
        d = max(d, r / ((1 - sqrt_b2) * np.abs(s).sum()))
        out.append(Step(-m / (np.sqrt(v) + eps) - weight_decay * dlr * x, d))
    return out


def prodigy(grads, params, learning_rate: Callable[[int], float], b1: float, b2: float, b3: float | None,
            eps: float, estim_lr0: float, estim_lr_coef: float, weight_decay: float,
            safeguard_warmup: bool, bias_betas: tuple[float, float] | None = None) -> list[Step]:
    """Every step's update and d, from the gradients and params (flat float64 vectors) each step was given; the
    first params are x_0. bias_betas: as for dadapt_adamw."""
    b3 = np.sqrt(b2) if b3 is None else b3
    x0 = params[0]
    m = v = s = np.zeros_like(grads[0])
    r, d, out = 0.0, estim_lr0, []
    for k, (g, x) in enumerate(zip(grads, params)):
        dlr = _bias_corrected(d, learning_rate(k), bias_betas or (b1, b2), k + 1)
        m = b1 * m + (1 - b1) * d * g
        v = b2 * v + (1 - b2) * d**2 * g**2
        r = b3 * r + (d / estim_lr0) * dlr * float(g @ (x0 - x))
        s = b3 * s + (d / estim_lr0) * (d if safeguard_warmup else dlr) * g
        d = max(d, estim_lr_coef * r / np.abs(s).sum())
        out.append(Step(-dlr * m / (np.sqrt(v) + d * eps) - weight_decay * dlr * x, d))
    return out
