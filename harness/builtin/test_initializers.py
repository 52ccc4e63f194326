"""jax.nn.initializers' variance-scaling family (glorot, he, lecun; uniform and normal) and variance_scaling itself:
what a fixed key draws, golden (in the policy's golden ulps: jax 0.12.0.1 moves the scaled normal draws by an ulp), for dense
kernels, convolution kernels (HWIO: the receptive field multiplies both fans), another layout (in_axis, out_axis)
and a batch axis; each draw against jax.random's standard draw with the same key times the documented standard
deviation sqrt(scale / n), computed in float64 from NumPy fans (harness/builtin/reference/initializers.py: the
truncated normal's 0.8796 correction from erf), which pins the fans, the mode and the distribution; a large draw's
moments and range against the documented distribution. Drawn eagerly: jax.random's draws are jitted inside the
library, so a case costs no compilation once its shape and dtype have been drawn; one jitted call per initialiser
family is held to the eager one."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import draw_checks as dc
from harness.builtin.reference import initializers as ref

pytestmark = pytest.mark.family("initializers")

# name -> (scale, mode, distribution), as each docstring states it
NAMED = {"glorot_normal": (1.0, "fan_avg", "truncated_normal"), "glorot_uniform": (1.0, "fan_avg", "uniform"),
         "he_normal": (2.0, "fan_in", "truncated_normal"), "he_uniform": (2.0, "fan_in", "uniform"),
         "lecun_normal": (1.0, "fan_in", "truncated_normal"), "lecun_uniform": (1.0, "fan_in", "uniform")}
# layout -> (shape, axes): a dense kernel, and one 3x3 convolution kernel's shape read four ways: HWIO (the receptive
# field 9 multiplies both fans), transposed (HWOI: in_axis=-1, out_axis=-2), a batch axis, a tuple of input axes
CONV = (3, 3, 2, 4)
LAYOUTS = {"dense": ((4, 3), {}), "conv_hwio": (CONV, {}), "transposed": (CONV, {"in_axis": -1, "out_axis": -2}),
           "batched": (CONV, {"batch_axis": 0}), "multi_axis": (CONV, {"in_axis": (0, 2), "out_axis": -1})}


def standard(key, distribution, shape, dtype):
    """jax.random's standard draw each distribution scales: U[-1, 1), N(0, 1), N(0, 1) truncated to (-2, 2)."""
    r = dc.random()
    if distribution == "uniform":
        return r.uniform(key, shape, dtype, -1.0)
    if distribution == "normal":
        return r.normal(key, shape, dtype)
    return r.truncated_normal(key, -2.0, 2.0, shape, dtype)


def unit_std(distribution) -> float:
    """The standard deviation of the standard draw: 1/sqrt(3) for U[-1, 1), 1, and the truncated normal's."""
    return {"uniform": 1.0 / np.sqrt(3.0), "normal": 1.0, "truncated_normal": ref.truncated_std()}[distribution]


def _draws(make, layouts, dtype, distribution, factory_dtype=True):
    """Each layout's draw (the dtype given to the factory, or to the call) and jax.random's standard draw, eagerly:
    the draws are jitted inside the library, compiled once per shape and dtype and shared by every case that draws
    them (one shape for every convolution layout); test_jit_matches_eager holds the jitted call to the eager one."""
    key, out = dc.key(), {}
    for name in layouts:
        shape, axes = LAYOUTS[name]
        value = (make(**axes, dtype=jnp.dtype(dtype))(key, shape) if factory_dtype
                 else make(**axes)(key, shape, jnp.dtype(dtype)))
        out[name] = (value, standard(key, distribution, shape, jnp.dtype(dtype)))
    return out


def judge_scaled(check, label, value, std_draw, std, distribution):
    """The draw equals the standard draw times std / (the standard draw's own std), in float64 (a reference)."""
    __tracebackhide__ = True
    check.exact(f"{label}/dtype", str(value.dtype), str(std_draw.dtype))
    check.reference(label, np.asarray(value), dc.f64(std_draw) * (std / unit_std(distribution)))
    check.golden(label, np.asarray(value))


@pytest.mark.parametrize("dtype", dc.DTYPES)
@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_initializer(check, name, dtype):
    """Each named initializer (the dtype given to the factory) in every layout: golden, and the standard draw
    times sqrt(scale / n) with n the docstring's fan (float64 fans of a dense 4x3 and an HWIO 3x3x2x4 kernel)."""
    scale, mode, distribution = NAMED[name]
    found = _draws(getattr(dc.inits(), name), ("dense", "conv_hwio"), dtype, distribution)
    for layout, (value, std_draw) in found.items():
        shape, axes = LAYOUTS[layout]
        judge_scaled(check, f"{name}/{layout}/{dtype}", value, std_draw,
                     ref.stddev(scale, mode, shape, **axes), distribution)


MODES = ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]
DISTRIBUTIONS = ["truncated_normal", "normal", "uniform"]


# each mode on another layout: the axes (in_axis, out_axis, batch_axis, tuples of axes) meet every mode
LAYOUT_OF_MODE = {"fan_in": "transposed", "fan_out": "batched", "fan_avg": "multi_axis", "fan_geo_avg": "conv_hwio"}


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("mode", MODES)
def test_variance_scaling(check, mode, distribution):
    """variance_scaling(0.5, mode, distribution), float32 given at the call, each mode in another layout (HWOI's
    in_axis=-1/out_axis=-2, a batch axis, a tuple in_axis, HWIO): golden and the standard draw times sqrt(0.5 / n)."""
    def make(**axes):
        return dc.inits().variance_scaling(0.5, mode, distribution, **axes)

    layout = LAYOUT_OF_MODE[mode]
    (value, std_draw), = _draws(make, (layout,), "float32", distribution, factory_dtype=False).values()
    shape, axes = LAYOUTS[layout]
    judge_scaled(check, f"{mode}/{distribution}/{layout}/float32", value, std_draw,
                 ref.stddev(0.5, mode, shape, **axes), distribution)


@pytest.mark.parametrize("distribution", ["truncated_normal", "uniform"])
def test_variance_scaling_complex(check, distribution):
    """A complex64 kernel: golden, and every modulus within the documented disk (uniform: radius sqrt(2) sigma for a
    unit-variance disk; truncated normal: the modulus truncated at 2 before scaling by sigma / 0.9531)."""
    shape = CONV
    value = dc.inits().variance_scaling(2.0, "fan_in", distribution)(dc.key(), shape, jnp.complex64)
    check.exact(f"complex/{distribution}/dtype", str(value.dtype), "complex64")
    sigma = ref.stddev(2.0, "fan_in", shape)
    radius = sigma * (np.sqrt(2.0) if distribution == "uniform" else 2.0 / 0.95311164380491208)
    check.bound(f"complex/{distribution}/modulus", np.abs(np.asarray(value)).astype(np.float32), radius)
    check.golden(f"complex/{distribution}/real", np.real(np.asarray(value)))
    check.golden(f"complex/{distribution}/imag", np.imag(np.asarray(value)))


MOMENTS_SHAPE = (3, 3, 64, 128)  # 73728 draws; fan_in 576, fan_out 1152


@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_initializer_moments(check, name):
    """A large float32 HWIO kernel's mean 0 and standard deviation sqrt(scale / n) within 5 standard errors (the
    standard error of the variance from the distribution's kurtosis), and its range: truncated draws inside
    +-2 sigma / 0.8796 (the untruncated sigma), uniform ones in [-sqrt(3) sigma, sqrt(3) sigma]."""
    scale, mode, distribution = NAMED[name]
    value = getattr(dc.inits(), name)()(dc.key(), MOMENTS_SHAPE)
    sigma = ref.stddev(scale, mode, MOMENTS_SHAPE)
    kurtosis = ref.KURTOSIS.get(distribution) or ref.truncated_kurtosis()
    dc.moments(check, f"{name}/moments", value, 0.0, sigma, kurtosis)
    half = sigma * (np.sqrt(3.0) if distribution == "uniform" else 2.0 / ref.truncated_std())
    check.bound(f"{name}/range", np.abs(np.asarray(value)), np.float32(half))


@pytest.mark.parametrize("dtype", dc.DTYPES)
@pytest.mark.parametrize("name", ["glorot_uniform", "lecun_normal"])
def test_jit_matches_eager(check, name, dtype):
    """A jitted initialiser draws what the eager call draws (a relation between two library paths: the same draw
    and scale, one program or op by op): bit for bit for the uniform and truncated normal draws (measured identical;
    a normal draw's erf_inv fused with its scale under jit moves by an ulp: not held here)."""
    make = getattr(dc.inits(), name)(dtype=jnp.dtype(dtype))
    shape = LAYOUTS["conv_hwio"][0]
    check.identical(f"{name}/{dtype}/jit", jax.jit(lambda k: make(k, shape))(dc.key()), make(dc.key(), shape))
