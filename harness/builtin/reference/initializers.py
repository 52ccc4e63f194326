"""Independent NumPy float64 references of jax.nn.initializers' scales and of the distributions jax.random draws
from, written from their docstrings (jax 0.11.2: jax/_src/nn/initializers.py, jax/_src/random/core.py), never
from JAX's code: the fans of a dense or convolution kernel (axes in none of in_axis, out_axis, batch_axis are the
receptive field), variance_scaling's standard deviation sqrt(scale / n) per mode, the standard deviation of a
standard normal truncated to (-2, 2) (the docstring's 0.87962566103423978, here from erf), and the standard errors
the moments contracts derive their bounds from. Every function returns float64 (or Python floats)."""

from __future__ import annotations

import math

import numpy as np


def _size(shape, axes) -> int:
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    return math.prod(shape[a] for a in axes)


def fans(shape, in_axis=-2, out_axis=-1, batch_axis=()) -> tuple[float, float]:
    """(fan_in, fan_out): the input and output sizes times the receptive field's (the product of the axes in
    none of in_axis, out_axis, batch_axis)."""
    named = {a % len(shape) for axes in (in_axis, out_axis, batch_axis)
             for a in ((axes,) if isinstance(axes, int) else axes)}
    receptive = math.prod(shape[a] for a in range(len(shape)) if a not in named)
    return float(_size(shape, in_axis) * receptive), float(_size(shape, out_axis) * receptive)


def denominator(mode: str, fan_in: float, fan_out: float) -> float:
    """n of the docstring: the inputs, the outputs, their arithmetic or their geometric mean."""
    return {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0,
            "fan_geo_avg": math.sqrt(fan_in * fan_out)}[mode]


def stddev(scale: float, mode: str, shape, in_axis=-2, out_axis=-1, batch_axis=()) -> float:
    """sqrt(scale / n): the documented standard deviation of every variance_scaling distribution."""
    return math.sqrt(scale / denominator(mode, *fans(shape, in_axis, out_axis, batch_axis)))


def _phi(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def truncated_std(lower: float = -2.0, upper: float = 2.0) -> float:
    """The standard deviation of a standard normal truncated to (lower, upper): Var = 1 + (a phi(a) - b phi(b)) / Z
    - ((phi(a) - phi(b)) / Z)^2, Z = Phi(b) - Phi(a)."""
    z = _cdf(upper) - _cdf(lower)
    mean = (_phi(lower) - _phi(upper)) / z
    return math.sqrt(1.0 + (lower * _phi(lower) - upper * _phi(upper)) / z - mean * mean)


def truncated_mean(lower: float, upper: float) -> float:
    return (_phi(lower) - _phi(upper)) / (_cdf(upper) - _cdf(lower))


def truncated_kurtosis(lower: float = -2.0, upper: float = 2.0) -> float:
    """E[(x - mu)^4] / sigma^4 of the truncated standard normal, by quadrature (Simpson, 20001 points)."""
    x = np.linspace(lower, upper, 20001)
    w = np.exp(-0.5 * x * x)
    w /= np.trapezoid(w, x)
    mu = np.trapezoid(x * w, x)
    var = np.trapezoid((x - mu) ** 2 * w, x)
    return float(np.trapezoid((x - mu) ** 4 * w, x) / var ** 2)


# Kurtosis of each standard distribution: the standard error of a sample variance is sigma^2 sqrt((k - 1) / N).
KURTOSIS = {"normal": 3.0, "uniform": 1.8}


def variance_se(kurtosis: float, n: int) -> float:
    """The standard error of s^2 / sigma^2 for n draws."""
    return math.sqrt((kurtosis - 1.0) / n)


def mean_se(n: int) -> float:
    """The standard error of the sample mean, in units of sigma."""
    return 1.0 / math.sqrt(n)


# The moments contracts hold a statistic within this many standard errors of the documented value: with a fixed
# key the draw is deterministic, and under a correct PRNG a statistic beyond 5 standard errors has probability
# under 1e-6 (normal approximation), so a failure is a changed distribution, not bad luck.
SIGMAS = 5.0


def moments(x) -> tuple[float, float, float, float]:
    """(mean, variance, min, max) of a draw, in float64."""
    x = np.asarray(x, np.float64).ravel()
    return float(x.mean()), float(x.var()), float(x.min()), float(x.max())
