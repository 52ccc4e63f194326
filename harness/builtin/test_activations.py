"""jax.nn's elementwise activations that flax.nnx re-exports (the list derived from the installed flax) against
float64 references of their documented formulas (harness/builtin/reference/activations.py), and the derivative
a training step takes (jax.vjp with a cotangent of ones: jax.grad of the sum) against the float64 derivative, in
float32, bfloat16 and float16, on one grid holding every kink (relu and leaky_relu at 0, hard_tanh at ±1,
hard_sigmoid and hard_silu at ±3, relu6 at 0 and 6, -0.0) and magnitudes where e^x overflows or a sigmoid
saturates (±20, ±100, ±1e4); values and derivatives golden. One jitted program per case."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import activation_checks as ac

pytestmark = pytest.mark.family("activations")


def _value_and_grad(row):
    """One jitted program: the activation and the vjp of a cotangent of ones (the gradient of its sum)."""
    def both(x):
        y, pull = jax.vjp(lambda q: row.call(ac.nn(), q), x)
        return y, pull(jnp.ones_like(y))[0]

    return jax.jit(both)


@pytest.mark.parametrize("dtype", ac.DTYPES)
@pytest.mark.parametrize("case", [row.case for row in ac.ROWS])
def test_activation(check, case, dtype):
    """The value in the input's dtype against the documented formula at the rounded input, and the derivative
    (at a kink the docstring's stated one, or that of the case holding there); the operands' scale where the
    formula cancels (gelu's 1 + tanh for negative x, silu's and gelu's derivative terms)."""
    row = ac.BY_CASE[case]
    x = jnp.asarray(ac.GRID, dtype)
    x64 = ac.f64(x)
    value, grad = _value_and_grad(row)(x)
    check.exact(f"{case}/{dtype}/dtypes", [str(value.dtype), str(grad.dtype)], [dtype, dtype])
    ac.judge(check, f"{case}/{dtype}", value, row.value(x64), row.value_scale, x64)
    over = np.zeros(x64.shape, bool) if row.grad_overflows is None else row.grad_overflows(x64, dtype)
    grad = np.asarray(grad)
    ac.judge(check, f"{case}/{dtype}/grad", grad[~over], row.grad(x64[~over]), row.grad_scale, x64[~over])
    if over.any():  # where an intermediate of the derivative overflows float16 (the row says which): golden
        check.golden(f"{case}/{dtype}/grad/overflowing", grad[over])


def test_flax_reexports(check):
    """Which of jax.nn's functions flax.nnx re-exports (the same objects) is a golden fact, and every one has
    contracts here: a name Flax adds or drops shows, and one the table lacks fails."""
    names = ac.flax_reexports()
    if names is None:
        pytest.skip("flax is not installed: nothing re-exports jax.nn")
    check.golden_fact("flax_reexports", names)
    check.exact("flax_reexports/uncovered", sorted(set(names) - set(ac.covered())), [])


def test_aliases(check):
    """swish is silu and hard_swish is hard_silu (the same function objects), as their docstrings say."""
    nn = ac.nn()
    check.golden_fact("aliases", {"swish is silu": nn.swish is nn.silu, "hard_swish is hard_silu":
                                  nn.hard_swish is nn.hard_silu})
