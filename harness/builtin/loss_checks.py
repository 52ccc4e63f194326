"""What the losses family's contracts share: the dtypes, the loss looked up at call time (so a patched or
mutated optax is seen), float64 copies of the library's inputs, and the one judgement each value gets:
against its float64 reference and against the baseline's recording."""

from __future__ import annotations

import numpy as np

DTYPES = ["float32", "bfloat16", "float16"]


def module():
    """optax.losses, imported now."""
    import optax

    return optax.losses


def loss(name: str):
    return getattr(module(), name)


def f64(x) -> np.ndarray:
    """The library's input (any float dtype, bfloat16 included: ml_dtypes casts it exactly) as float64."""
    return np.asarray(x, np.float64)


def judge(check, key: str, value, expected, *, scale=None, why: str | None = None) -> None:
    """The value against its float64 reference (in the value's dtype) and golden, both at the operands' scale
    where the caller names a cancellation: a compiler's few ulps of the operands are many ulps of a cancelled
    value (measured: ntxent's gradient moved 2.98e-8 at a cancelled element under jax 0.12.0.1, beyond 8 ulp at
    the value, one ulp at the operands' scale 0.28)."""
    __tracebackhide__ = True
    value = np.asarray(value)
    check.reference(key, value, np.asarray(expected, np.float64), scale=scale, why=why)
    check.golden(key, value, scale=scale, why=why)
