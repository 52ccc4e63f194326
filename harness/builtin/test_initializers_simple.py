"""jax.nn.initializers' plain distributions (normal, uniform, truncated_normal), constants (constant, ones, zeros) and
orthogonal ones (orthogonal, delta_orthogonal): a fixed key's draws golden (the policy's golden ulps), each against
jax.random's draw with the same key times the documented parameter (float64), moments and ranges of a large draw,
orthogonality in float64 of the float32 draw, error contracts (type golden, message a golden fact), and which
initialisers flax.nnx re-exports with nnx.Linear's default kernel_init drawing lecun_normal's values."""

import importlib

import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import defaults
from harness.builtin import draw_checks as dc
from harness.builtin.reference import initializers as ref

pytestmark = pytest.mark.family("initializers")

SHAPE = (3, 3, 2, 4)
# case -> (factory name, its arguments, jax.random's draw it scales, the scale, (mean, std, kurtosis, range))
PLAIN = {
    "normal/0.5": ("normal", {"stddev": 0.5}, lambda r, k, s, d: r.normal(k, s, d), 0.5),
    "normal/default": ("normal", {}, lambda r, k, s, d: r.normal(k, s, d), 0.01),
    "uniform/3": ("uniform", {"scale": 3.0}, lambda r, k, s, d: r.uniform(k, s, d), 3.0),
    "uniform/default": ("uniform", {}, lambda r, k, s, d: r.uniform(k, s, d), 0.01),
    "truncated_normal/0.5": ("truncated_normal", {"stddev": 0.5, "lower": -1.0, "upper": 1.5},
                             lambda r, k, s, d: r.truncated_normal(k, -1.0, 1.5, s, d), 0.5),
    "truncated_normal/default": ("truncated_normal", {}, lambda r, k, s, d: r.truncated_normal(k, -2.0, 2.0, s, d),
                                 0.01),
}


@pytest.mark.parametrize("dtype", dc.DTYPES)
@pytest.mark.parametrize("case", sorted(PLAIN))
def test_plain_initializer(check, case, dtype):
    """normal(stddev), uniform(scale) and truncated_normal(stddev, lower, upper), the dtype given to the factory:
    golden, and jax.random's draw with the same key times the documented parameter (float64)."""
    name, kwargs, draw, scale = PLAIN[case]
    value = getattr(dc.inits(), name)(**kwargs, dtype=jnp.dtype(dtype))(dc.key(), SHAPE)
    plain = draw(dc.random(), dc.key(), SHAPE, jnp.dtype(dtype))
    check.exact(f"{case}/{dtype}/dtype", str(value.dtype), dtype)
    check.reference(f"{case}/{dtype}", np.asarray(value), dc.f64(plain) * scale)
    check.golden(f"{case}/{dtype}", np.asarray(value))


def test_plain_moments(check):
    """Large float32 draws: normal(0.5) mean 0, sd 0.5; uniform(3) in [0, 3), mean 1.5, sd 3/sqrt(12);
    truncated_normal(0.5, -1, 1.5) inside (-0.5, 0.75), mean and sd of the truncated normal (from erf): within 5
    standard errors (kurtosis of each distribution; the truncated one's by quadrature)."""
    inits, key, shape = dc.inits(), dc.key(), (dc.LARGE,)
    x = inits.normal(0.5)(key, shape)
    dc.moments(check, "normal", x, 0.0, 0.5, 3.0)
    x = inits.uniform(3.0)(key, shape)
    dc.moments(check, "uniform", x, 1.5, 3.0 / np.sqrt(12.0), 1.8)
    dc.within(check, "uniform", x, 0.0, 3.0, upper_open=True)
    x = inits.truncated_normal(0.5, lower=-1.0, upper=1.5)(key, shape)
    dc.moments(check, "truncated_normal", x, 0.5 * ref.truncated_mean(-1.0, 1.5), 0.5 * ref.truncated_std(-1.0, 1.5),
               ref.truncated_kurtosis(-1.0, 1.5))
    dc.within(check, "truncated_normal", x, -0.5, 0.75)


# case -> (the call, given the initializers module, a key and keyword arguments; the value; the dtype; sharded)
CONSTANTS = {
    "constant/bfloat16": (lambda i, k, **kw: i.constant(-0.75, dtype=jnp.bfloat16)(k, (2, 3), **kw), -0.75, "bfloat16"),
    "constant/float16_at_call": (lambda i, k, **kw: i.constant(-0.75)(k, (2, 3), jnp.float16, **kw), -0.75, "float16"),
    "constant/out_sharding": (lambda i, k, **kw: i.constant(-0.75)(k, (2, 3), **kw), -0.75, "float32"),
    "ones/bfloat16": (lambda i, k, **kw: i.ones(k, (2, 3), jnp.bfloat16, **kw), 1.0, "bfloat16"),
    "ones/int32": (lambda i, k, **kw: i.ones(k, (2, 3), jnp.int32, **kw), 1.0, "int32"),
    "zeros/float16": (lambda i, k, **kw: i.zeros(k, (2, 3), jnp.float16, **kw), 0.0, "float16"),
    "zeros/default": (lambda i, k, **kw: i.zeros(k, (2, 3), **kw), 0.0, "float32"),
    "zeros/out_sharding": (lambda i, k, **kw: i.zeros(k, (2, 3), **kw), 0.0, "float32"),
}


@pytest.mark.parametrize("case", sorted(CONSTANTS))
def test_constants(check, case):
    """constant(value, dtype), ones and zeros: every element the value, exactly, in the dtype asked (the factory's,
    the call's, float32 by default), the key ignored (another key, the same array); with out_sharding on a one-device mesh, the values the same and
    the result's sharding type a golden fact."""
    call, value, dtype = CONSTANTS[case]
    kwargs = {"out_sharding": dc.mesh_sharding()} if case.endswith("out_sharding") else {}
    drawn = [call(dc.inits(), dc.key(seed), **kwargs) for seed in (0, 1)]
    check.exact(f"{case}/dtype", str(drawn[0].dtype), dtype)
    check.exact(f"{case}/values", dc.f64(drawn[0]).tolist(), np.full((2, 3), value).tolist())
    check.identical(f"{case}/key_ignored", drawn[0], drawn[1])
    if kwargs:
        check.golden_fact(f"{case}/sharding", type(drawn[0].sharding).__name__)  # a one-device mesh's, measured


ORTHO = {"square": ((4, 4), {}), "tall": ((6, 3), {}), "wide": ((3, 6), {}), "conv": ((3, 3, 4, 4), {}),
         "column_axis0": ((4, 6), {"column_axis": 0}), "scale2": ((5, 5), {"scale": 2.0})}
WHY = ("QᵀQ's off-diagonal entries are sums of products of size 1 that cancel to 0: float32 rounding of the QR "
       "factors is at the operands' size, 1 (scale^2 for a scaled Q)")
# The draws themselves are a QR factor computed by LAPACK: jaxlib calls scipy's OpenBLAS, whose kernel the CPU (or
# OPENBLAS_CORETYPE) chooses. Householder QR is backward stable normwise: its rounding is about n·u·‖A‖, at the scale
# of the factor's norm, not of each element, so an element near 0 is as uncertain as one near ‖Q‖. Measured on the
# pinned baseline (docs/tolerances.md, "Across hosts"): OpenBLAS's kernels (Haswell, SkylakeX, Prescott, Zen) put
# elements of 0.02 up to 104 ulp apart at the value, 3.5 ulp at ‖Q‖; held to the golden ulps at ‖Q‖ (= scale).
QR_WHY = ("a QR factor from LAPACK (scipy's OpenBLAS, whose kernel the CPU picks): Householder QR rounds at the "
          "scale of the factor's norm, about n·u·‖A‖, not at each element; OpenBLAS's kernels measured up to 3.5 ulp "
          "apart at ‖Q‖ = scale (104 ulp at an element of 0.02)")


def _gram(value, column_axis):
    """The columns along column_axis as a float64 matrix (rows, columns): QᵀQ for tall or square, QQᵀ for wide."""
    q = np.moveaxis(dc.f64(value), column_axis, -1).reshape(-1, value.shape[column_axis])
    return q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T


@pytest.mark.parametrize("case", sorted(ORTHO))
def test_orthogonal(check, case):
    """orthogonal(scale, column_axis) in float32: QᵀQ = scale^2 I (QQᵀ for a wide matrix) in float64 of the draw,
    within float32's reference ulps at the operands' size; golden at the golden ulps of its norm, scale (a QR
    factor rounds normwise: QR_WHY)."""
    shape, kwargs = ORTHO[case]
    value = dc.inits().orthogonal(**kwargs)(dc.key(), shape)
    scale = kwargs.get("scale", 1.0)
    gram = _gram(value, kwargs.get("column_axis", -1)).astype(np.float32)
    check.reference(f"orthogonal/{case}/gram", gram, scale ** 2 * np.eye(len(gram)),
                    scale=np.full(gram.shape, scale ** 2), why=WHY)
    check.golden(f"orthogonal/{case}", np.asarray(value), scale=np.full(value.shape, scale), why=QR_WHY)


# kernel sizes odd and even along each spatial axis (each axis of the 5-D kernel: 5d/outer's first even, its last
# odd): the centre (k - 1) // 2 differs from k // 2 (and from (k - 1) % 2, (k | 1) // 2, (k - 2) // 2) only at
# some of them
DELTA_SHAPES = {"3d": (3, 4, 4), "4d": (4, 3, 4, 6), "5d": (3, 4, 4, 2, 2),
                "3d/even": (4, 4, 4), "4d/even": (5, 4, 4, 6), "5d/even": (3, 6, 4, 2, 2), "5d/outer": (4, 3, 3, 2, 2)}


@pytest.mark.parametrize("case", sorted(DELTA_SHAPES))
def test_delta_orthogonal(check, case):
    """delta_orthogonal(scale=1.5): zeros except at the kernel's centre ((k - 1) // 2 along each spatial axis), where
    the slice is orthogonal(1.5)'s draw (kernel sizes odd and even: (k - 1) // 2 differs from k // 2 there) for the last two axes (the same key: identical) with orthonormal rows
    (in x out, in <= out) times 1.5; golden at the golden ulps of its norm, 1.5 (QR_WHY). column_axis=-2 on the 4-D kernel: its columns orthonormal instead."""
    shape = DELTA_SHAPES[case]
    for column_axis in (-1, -2) if len(shape) == 4 else (-1,):
        value = dc.f64(dc.inits().delta_orthogonal(1.5, column_axis=column_axis)(dc.key(), shape))
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        label = f"delta_orthogonal/{case}/{column_axis}"
        rest = value.copy()
        rest[centre] = 0.0
        check.exact(f"{label}/zeros_elsewhere", bool((rest == 0.0).all()), True)
        ortho = dc.inits().orthogonal(1.5, column_axis=column_axis)(dc.key(), shape[-2:])
        check.identical(f"{label}/centre", np.asarray(value[centre], np.float32), np.asarray(ortho))
        gram = _gram(value[centre], column_axis).astype(np.float32)
        check.reference(f"{label}/gram", gram, 2.25 * np.eye(len(gram)), scale=np.full(gram.shape, 2.25), why=WHY)
        check.golden(label, np.asarray(value[centre], np.float32), scale=np.full(shape[-2:], 1.5), why=QR_WHY)


def _init(name, *args, **kwargs):
    return lambda key, shape, *call: getattr(dc.inits(), name)(*args, **kwargs)(key, shape, *call)


ERRORS = {
    "orthogonal/1d": lambda: _init("orthogonal")(dc.key(), (4,)),
    "orthogonal/bfloat16": lambda: _init("orthogonal")(dc.key(), (4, 4), jnp.bfloat16),
    "orthogonal/float16": lambda: _init("orthogonal")(dc.key(), (4, 4), jnp.float16),
    "orthogonal/out_sharding": lambda: dc.inits().orthogonal()(dc.key(), (4, 4), out_sharding=dc.mesh_sharding()),
    "delta_orthogonal/2d": lambda: _init("delta_orthogonal")(dc.key(), (4, 4)),
    "delta_orthogonal/in_above_out": lambda: _init("delta_orthogonal")(dc.key(), (3, 3, 6, 4)),
    "variance_scaling/bad_mode": lambda: _init("variance_scaling", 1.0, "fan_max", "normal")(dc.key(), (4, 3)),
    "variance_scaling/bad_distribution": lambda: _init("variance_scaling", 1.0, "fan_in", "laplace")(dc.key(), (4, 3)),
    "lecun_normal/1d": lambda: _init("lecun_normal")(dc.key(), (4,)),
    "he_uniform/int32": lambda: _init("he_uniform")(dc.key(), (4, 3), jnp.int32),
    "normal/int32": lambda: _init("normal")(dc.key(), (4, 3), jnp.int32),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(check, case):
    """A 1-D or 16-bit orthogonal, a sharded one, delta_orthogonal on a 2-D kernel or with more inputs than outputs,
    an unknown mode or distribution, a 1-D kernel with the default in_axis, an integer dtype: the exception type
    golden, its message's first line a golden fact."""
    found = check.error_contract(f"errors/{case}", ERRORS[case])
    check.golden_fact(f"errors/{case}/message", dc.error_message(found))


def test_flax_reexports(check):
    """Which of jax.nn.initializers' functions flax.nnx.initializers re-exports (the same objects) is a golden fact,
    and nnx.Linear's default kernel_init draws what lecun_normal() draws (identical, the same key and shape)."""
    try:
        nnx = importlib.import_module("flax.nnx")
    except ImportError:
        pytest.skip("flax is not installed: nothing re-exports jax.nn.initializers")
    inits = dc.inits()
    names = sorted(n for n in dir(nnx.initializers) if not n.startswith("_") and
                   getattr(inits, n, None) is getattr(nnx.initializers, n))
    check.golden_fact("flax_reexports", names)
    default = nnx.Linear.__init__.__kwdefaults__["kernel_init"]
    check.identical("nnx_linear_kernel_init", default(dc.key(), (4, 3), jnp.float32),
                    inits.lecun_normal()(dc.key(), (4, 3), jnp.float32))


def test_public_modules(check):
    """Each initialiser's __module__ is jax.nn.initializers (what `@export` sets, what documentation, pickling by
    reference and error messages name): a golden fact per function; and that the Initializer protocol answers
    isinstance."""
    inits = dc.inits()
    names = [name.rsplit(".", 1)[-1] for name in defaults.ledger_params("initializers")]  # the ledger's initialisers
    check.golden_fact("modules", {name: getattr(inits, name).__module__ for name in names})
    # Initializer is a runtime-checkable protocol: isinstance tells an initialiser from any other callable
    found = check.error_contract("protocol/isinstance/call", isinstance, inits.lecun_normal(), inits.Initializer)
    check.golden_fact("protocol/isinstance", found if isinstance(found, bool) else type(found).__name__)
