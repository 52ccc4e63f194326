"""NumPy float64 reference of Muon's update rule (optax.contrib.scale_by_muon), written from its docstrings and the
sources they cite (Jordan, modded-nanogpt, 2024: zeropower_via_newtonschulz5 and the update's shape factor;
Bernstein et al., Old Optimizer, New Norm, 2024: the dual-norm scaling), not from Optax's code:

    m_t = beta m_{t-1} + (1 - beta) g_t,  m_hat = m_t / (1 - beta**t)   (the exponentially weighted average,
                                                                           bias-corrected as Adam's moments)
    X_0 = m_hat / (||m_hat||_F + eps), transposed when it has more rows than columns;
    X_{k+1} = a X_k + (b A + c A A) X_k,  A = X_k X_k^T,   ns_steps times (ns_coeffs = (a, b, c)), or once
                                                          per row of a tuple of per-step (a_k, b_k, c_k)
                                                          (the docstring: ns_steps is then ignored);
    O = X_{ns_steps} (transposed back);   adaptive: O <- <m_hat, O> O (the nuclear, dual norm);
    update = sqrt(max(1, fan_out / fan_in)) O,

the shape factor of modded-nanogpt, max(1, out / in)**0.5: PyTorch stores a weight as (out, in), JAX as (in, out)
(optax.contrib.MuonDimensionNumbers: "x W = y", the reduction axis 0 and the output axis 1), so it is
sqrt(max(1, cols / rows)) here. Axes that are neither the reduction nor the output axis are batch axes
(MuonDimensionNumbers' docstring: "considered independently in the orthogonalization"): each matrix of the batch
is orthogonalised alone; the adaptive scale is then <m_hat, O> over the whole leaf, the dual of the largest of the
matrices' spectral norms (the sum of their nuclear norms). Leaves here come with their batch axes first and the
reduction and output axes last.
"""

from __future__ import annotations

import numpy as np


def coefficient_rows(coeffs, steps: int) -> list[tuple[float, float, float]]:
    """Each Newton-Schulz step's (a, b, c): one triple repeated `steps` times, or a tuple of per-step triples."""
    return [tuple(coeffs)] * steps if np.ndim(coeffs) == 1 else [tuple(row) for row in coeffs]


def newton_schulz(x, coeffs, steps: int, eps: float):
    """The quintic Newton-Schulz iteration of modded-nanogpt on a 2-D array, in float64 (coeffs: a triple run
    `steps` times, or per-step triples)."""
    x = np.asarray(x, np.float64)
    transposed = x.shape[0] > x.shape[1]
    if transposed:
        x = x.T
    x = x / (np.linalg.norm(x) + eps)
    for a, b, c in coefficient_rows(coeffs, steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if transposed else x


def muon_updates(grads, beta: float, coeffs, steps: int, eps: float, adaptive: bool):
    """The updates (before the learning rate) for a sequence of gradients of one leaf: a matrix, or a batch of
    matrices on leading axes."""
    m, out = np.zeros_like(np.asarray(grads[0], np.float64)), []
    for t, g in enumerate(grads, 1):
        m = beta * m + (1 - beta) * np.asarray(g, np.float64)
        m_hat = m / (1 - beta ** t)
        matrices = m_hat.reshape(-1, *m_hat.shape[-2:])
        o = np.stack([newton_schulz(x, coeffs, steps, eps) for x in matrices]).reshape(m_hat.shape)
        if adaptive:
            o = float(np.sum(m_hat * o)) * o
        out.append(np.sqrt(max(1.0, m_hat.shape[-1] / m_hat.shape[-2])) * o)
    return out
