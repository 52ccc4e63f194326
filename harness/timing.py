"""Compile time and steady-state time of a JAX computation, measured the way the guides ask:
compile separately (lower + compile), then warm up, then time with block_until_ready.

Timings are informational: the comparison shows candidate/baseline ratios and never changes the
exit status, because two processes sharing two cores are a noisy clock.
"""

from __future__ import annotations

import statistics
import time

WARMUP = 3
REPEATS = 200


def measure(fn, *args, repeats: int = REPEATS) -> dict:
    """{compile_s, steady_s (median), steady_min_s, repeats} for jax.jit(fn)(*args)."""
    import jax

    start = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    compile_s = time.perf_counter() - start
    for _ in range(WARMUP):
        jax.block_until_ready(compiled(*args))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        samples.append(time.perf_counter() - start)
    return {
        "compile_s": compile_s,
        "steady_s": statistics.median(samples),
        "steady_min_s": min(samples),
        "repeats": repeats,
    }
