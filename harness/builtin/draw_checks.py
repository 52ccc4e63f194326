"""What the random and initializers families' contracts share: the fixed seed, the modules looked up at call time
(so a patched or mutated jax is seen), a one-device mesh for out_sharding, and the moments contract: a large draw's
mean and variance within SIGMAS standard errors of the documented distribution's (the draw is deterministic under
a fixed key; the bound is derived from the standard error, never tuned), its range within the documented bounds."""

from __future__ import annotations

import importlib
import re

import numpy as np

from harness.builtin.reference import initializers as ref

SEED = 42
DTYPES = ["float32", "bfloat16", "float16"]
LARGE = 1 << 16  # draws in a moments contract: the mean's standard error is 0.4% of sigma


def random():
    """jax.random, imported now."""
    return importlib.import_module("jax.random")


def inits():
    """jax.nn.initializers, imported now."""
    return importlib.import_module("jax.nn.initializers")


def key(seed: int = SEED):
    """A typed key (jax.random.key)."""
    return random().key(seed)


def mesh_sharding():
    """A NamedSharding over a one-device mesh with an explicit axis, replicated (what out_sharding accepts)."""
    import jax

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())


def f64(x) -> np.ndarray:
    return np.asarray(x, np.float64)


def moments(check, label: str, x, mean: float, std: float, kurtosis: float) -> None:
    """The sample mean within SIGMAS standard errors (std / sqrt(N)) of `mean`, and the sample variance's ratio to
    std^2 within SIGMAS standard errors (sqrt((kurtosis - 1) / N)) of 1: bounds on float64 statistics of the draw."""
    __tracebackhide__ = True
    x = f64(x).ravel()
    n = x.size
    check.bound(f"{label}/mean", abs(x.mean() - mean) / std, ref.SIGMAS * ref.mean_se(n))
    check.bound(f"{label}/variance", abs(x.var() / std ** 2 - 1.0), ref.SIGMAS * ref.variance_se(kurtosis, n))


def frequencies(check, label: str, counts, probabilities) -> None:
    """Each outcome's observed frequency within SIGMAS binomial standard errors sqrt(p (1 - p) / N) of p."""
    __tracebackhide__ = True
    counts = f64(counts)
    p = f64(probabilities)
    n = counts.sum()
    z = np.abs(counts / n - p) / np.sqrt(p * (1.0 - p) / n)
    check.bound(f"{label}/frequencies", float(z.max()), ref.SIGMAS)


def within(check, label: str, x, lower: float, upper: float, *, upper_open: bool = False) -> None:
    """Every element in [lower, upper] (or [lower, upper) where the docs say so), exactly: a range, not a tolerance."""
    __tracebackhide__ = True
    x = f64(x)
    inside = bool((x >= lower).all() and ((x < upper).all() if upper_open else (x <= upper).all()))
    bounds = f"[{lower}, {upper}{')' if upper_open else ']'}"
    check.exact(f"{label}/in_range", inside, True,
                message=f"{label}: draws outside {bounds}: min {x.min()!r}, max {x.max()!r}")


def error_message(found) -> str:
    """An error contract's result as a golden fact: the message's first line with memory addresses elided (they
    differ per process), or "no error"."""
    if not isinstance(found, Exception):
        return "no error"
    return re.sub(r" at 0x[0-9a-f]+", "", (str(found).splitlines() or [""])[0])
