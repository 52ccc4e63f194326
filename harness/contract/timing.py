"""Compile time and steady-state time of a JAX computation, measured the way the guides ask:
compile separately (lower + compile), then warm up, then time with block_until_ready.

Timings are informational: the comparison shows candidate/baseline ratios and never changes the
exit status, because two processes sharing two cores are a noisy clock.
"""

from __future__ import annotations

import contextlib
import statistics
import time

WARMUP = 3
REPEATS = 200


@contextlib.contextmanager
def _without_persistent_cache():
    """Compile for real even when the sessions' persistent compilation cache is on: a cache hit
    would time a disk read, not the compiler. Uses JAX's cache reset; if that internal API is
    gone, the measurement still runs (and may then be a cache hit)."""
    import jax

    try:
        from jax._src import compilation_cache
    except ImportError:
        yield
        return
    saved = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", None)
    compilation_cache.reset_cache()
    try:
        yield
    finally:
        jax.config.update("jax_compilation_cache_dir", saved)
        compilation_cache.reset_cache()


def measure(fn, *args, repeats: int = REPEATS) -> dict:
    """{compile_s, steady_s (median), steady_min_s, repeats} for jax.jit(fn)(*args)."""
    import jax

    with _without_persistent_cache():
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
