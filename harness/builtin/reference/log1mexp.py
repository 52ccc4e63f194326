"""An independent reference of jax.nn.log1mexp, log(1 - e^-x) for x > 0, and of its derivative 1 / (e^x - 1),
in 80-digit decimal arithmetic (Python's decimal), not in float64: 1 - e^-x cancels for small x and
log(1 - u) loses u for small u, the regions Mächler's note (the docstring's reference) is about, so the
reference must not rely on the same branch choice the library makes. Each element is evaluated on the exact
value of its float64 input and rounded once to float64."""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

_DIGITS = 80


def _each(fn, x):
    x = np.asarray(x, np.float64)
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        return np.array([fn(Decimal(float(v))) for v in x.ravel()], np.float64).reshape(x.shape)


def _log1mexp(x: Decimal) -> float:
    u = (-x).exp()
    if u < Decimal("1e-30"):  # log(1 - u) = -u - u^2/2 - ...: -u is exact to 60 digits there
        return float(-u)
    return float((1 - u).ln())


def _derivative(x: Decimal) -> float:
    return float(1 / (x.exp() - 1))


def log1mexp(x):
    """log(1 - e^-x), x > 0."""
    return _each(_log1mexp, x)


def log1mexp_grad(x):
    """d/dx log(1 - e^-x) = e^-x / (1 - e^-x) = 1 / (e^x - 1), x > 0."""
    return _each(_derivative, x)
