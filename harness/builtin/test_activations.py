"""jax.nn's elementwise activations (those flax.nnx re-exports, the list derived from the installed flax, and
mish, squareplus with its b, sparse_plus and sparse_sigmoid, which it does not) against float64 references of
their documented formulas (harness/builtin/reference/activations.py), and the derivative a training step takes
(jax.vjp with a cotangent of ones: jax.grad of the sum) against the float64 derivative, in float32, bfloat16 and
float16, on one grid holding every kink (relu and leaky_relu at 0, hard_tanh, sparse_plus and sparse_sigmoid at
±1, hard_sigmoid and hard_silu at ±3, relu6 at 0 and 6, -0.0) and magnitudes where e^x overflows or a sigmoid
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
    (at a kink the docstring's stated one, or that of the case holding there; sparse_sigmoid's at ±1, where
    neither is stated, a subgradient, golden); the operands' scale where the formula cancels (gelu's 1 + tanh and
    squareplus's x + sqrt(x^2 + b) for negative x, silu's, gelu's and mish's derivative terms)."""
    row = ac.BY_CASE[case]
    x = jnp.asarray(ac.GRID, dtype)
    x64 = ac.f64(x)
    value, grad = _value_and_grad(row)(x)
    check.exact(f"{case}/{dtype}/dtypes", [str(value.dtype), str(grad.dtype)], [dtype, dtype])
    _judge_where_defined(check, f"{case}/{dtype}", np.asarray(value), x64, row.value, row.value_scale,
                         _where(row.value_overflows, x64, dtype))
    kink = np.isin(x64, [k for k, _, _ in row.kinks])
    grad = np.asarray(grad)
    _judge_where_defined(check, f"{case}/{dtype}/grad", grad, x64, row.grad, row.grad_scale,
                         _where(row.grad_overflows, x64, dtype), kink)
    if kink.any():  # no derivative there: the library's is golden, and a subgradient
        lo, hi = (np.array([dict((k, b) for k, *b in row.kinks)[v][i] for v in x64[kink]]) for i in (0, 1))
        check.exact(f"{case}/{dtype}/grad/at_kinks/subgradient", bool(np.all((lo <= grad[kink]) & (grad[kink] <= hi))),
                    True)
        check.golden(f"{case}/{dtype}/grad/at_kinks", grad[kink])


def _where(overflows, x64, dtype):
    return np.zeros(x64.shape, bool) if overflows is None else overflows(x64, dtype)


def _judge_where_defined(check, key, value, x64, formula, scale, over, kink=None):
    """Against the float64 formula except where an intermediate overflows float16 (the row says which:
    golden there) and at kinks (judged by the caller)."""
    keep = ~over if kink is None else ~over & ~kink
    ac.judge(check, key, value[keep], formula(x64[keep]), scale, x64[keep])
    if over.any():
        check.golden(f"{key}/overflowing", value[over])


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
