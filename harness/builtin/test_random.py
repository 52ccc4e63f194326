"""jax.random's keys and draws under a fixed seed: key data of jax.random.key (typed) and jax.random.PRNGKey (raw
uint32), of split and fold_in, golden (integers: exactly); the raw and typed paths give the same key data and the
same draws (a relation between two library paths: PRNGKey(s) is key_data(key(s)), so every draw is identical);
normal, uniform and truncated_normal in float32, bfloat16 and float16 (the policy's golden ulps), golden, with a large float32
draw's moments and range against the documented distribution; the draws jitted and eager identical."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import draw_checks as dc
from harness.builtin.reference import initializers as ref

pytestmark = pytest.mark.family("random")

SEEDS = [0, dc.SEED, 2**32 - 1, -1]


@pytest.mark.parametrize("seed", SEEDS)
def test_keys(check, seed):
    """key(seed)'s data and PRNGKey(seed) golden and equal (-1 and 2^32 - 1: the seed's 64-bit two's complement
    split into two uint32 words); the typed key's dtype and implementation golden facts."""
    r = dc.random()
    typed, raw = r.key(seed), r.PRNGKey(seed)
    check.golden(f"key/{seed}", np.asarray(r.key_data(typed)))
    check.golden(f"PRNGKey/{seed}", np.asarray(raw))
    check.identical(f"key_vs_PRNGKey/{seed}", r.key_data(typed), raw)
    check.golden_fact(f"key/{seed}/dtype", [str(typed.dtype), str(r.key_impl(typed)), str(raw.dtype)])


def test_key_impl(check):
    """impl= and dtype=: an rbg key (4 words) and a threefry2x32 one named outright (the default's data); golden."""
    r = dc.random()
    rbg = r.key(dc.SEED, impl="rbg")
    check.golden("impl/rbg", np.asarray(r.key_data(rbg)))
    check.golden("impl/PRNGKey_rbg", np.asarray(r.PRNGKey(dc.SEED, impl="rbg")))
    check.identical("impl/threefry_named", r.key_data(r.key(dc.SEED, impl="threefry2x32")), r.key_data(r.key(dc.SEED)))
    check.identical("dtype/rbg", r.key_data(r.key(dc.SEED, dtype=rbg.dtype)), r.key_data(rbg))
    check.golden("impl/rbg/uniform", np.asarray(r.uniform(rbg, (4,))))


@pytest.mark.parametrize("num", [2, 3, (2, 2)], ids=["default", "3", "2x2"])
def test_split(check, num):
    """split(key, num) (num 2 by default, an int, a shape): the children's key data golden and all distinct from each
    other and from the parent; the typed and raw paths' data identical."""
    r = dc.random()
    typed = r.split(r.key(dc.SEED)) if num == 2 else r.split(r.key(dc.SEED), num)
    raw = r.split(r.PRNGKey(dc.SEED), num)
    data = np.asarray(r.key_data(typed))
    check.golden(f"split/{num}", data)
    check.identical(f"split/{num}/raw", r.key_data(typed), raw)
    rows = {tuple(x) for x in data.reshape(-1, 2).tolist()} | {tuple(np.asarray(r.PRNGKey(dc.SEED)).tolist())}
    check.exact(f"split/{num}/distinct", len(rows), data.size // 2 + 1)


def test_fold_in(check):
    """fold_in(key, data) for 0, 1, 2^31 - 1 and a uint32 above it: key data golden, all distinct (and from the
    parent), the typed and raw paths identical; a folded key's draw differs from the parent's."""
    r = dc.random()
    data = [0, 1, 2**31 - 1, np.uint32(2**32 - 1)]
    typed = [np.asarray(r.key_data(r.fold_in(r.key(dc.SEED), d))) for d in data]
    raw = [np.asarray(r.fold_in(r.PRNGKey(dc.SEED), d)) for d in data]
    check.golden("fold_in", np.stack(typed))
    check.identical("fold_in/raw", np.stack(typed), np.stack(raw))
    rows = {tuple(t.tolist()) for t in typed} | {tuple(np.asarray(r.PRNGKey(dc.SEED)).tolist())}
    check.exact("fold_in/distinct", len(rows), len(data) + 1)


DRAWS = {
    "normal": lambda r, k, d: r.normal(k, (3, 4), d),
    "uniform": lambda r, k, d: r.uniform(k, (3, 4), d),
    "uniform/-2_3": lambda r, k, d: r.uniform(k, (3, 4), d, minval=-2.0, maxval=3.0),
    "truncated_normal": lambda r, k, d: r.truncated_normal(k, -1.0, 2.0, (3, 4), d),
    "scalar_normal": lambda r, k, d: r.normal(k, dtype=d),
}


@pytest.mark.parametrize("dtype", dc.DTYPES)
@pytest.mark.parametrize("case", sorted(DRAWS))
def test_draws(check, case, dtype):
    """A fixed key's draw golden (the policy's golden ulps); the raw key's draw and the jitted draw identical to it;
    uniform's and truncated_normal's within their bounds."""
    r = dc.random()
    d = jnp.dtype(dtype)
    value = DRAWS[case](r, r.key(dc.SEED), d)
    check.exact(f"{case}/{dtype}/dtype", str(value.dtype), dtype)
    check.golden(f"{case}/{dtype}", np.asarray(value))
    check.identical(f"{case}/{dtype}/PRNGKey", DRAWS[case](r, r.PRNGKey(dc.SEED), d), value)
    check.identical(f"{case}/{dtype}/jit", jax.jit(lambda k: DRAWS[case](dc.random(), k, d))(r.key(dc.SEED)), value)
    if case.startswith("uniform"):
        lo, hi = (-2.0, 3.0) if "/" in case else (0.0, 1.0)
        dc.within(check, f"{case}/{dtype}", value, lo, hi, upper_open=True)
    if case == "truncated_normal":
        dc.within(check, f"{case}/{dtype}", value, -1.0, 2.0)


def test_moments(check):
    """Large float32 draws against the documented distributions, within 5 standard errors: normal N(0, 1);
    uniform on [-2, 3) (mean 0.5, sd 5/sqrt(12)); truncated_normal on (-1, 2) (mean and sd from erf, kurtosis by
    quadrature), inside its bounds."""
    r, key, shape = dc.random(), dc.key(), (dc.LARGE,)
    dc.moments(check, "normal", r.normal(key, shape), 0.0, 1.0, 3.0)
    x = r.uniform(key, shape, minval=-2.0, maxval=3.0)
    dc.moments(check, "uniform", x, 0.5, 5.0 / np.sqrt(12.0), 1.8)
    dc.within(check, "uniform", x, -2.0, 3.0, upper_open=True)
    x = r.truncated_normal(key, -1.0, 2.0, shape)
    dc.moments(check, "truncated_normal", x, ref.truncated_mean(-1.0, 2.0), ref.truncated_std(-1.0, 2.0),
               ref.truncated_kurtosis(-1.0, 2.0))
    dc.within(check, "truncated_normal", x, -1.0, 2.0)


SHARDED = {
    "normal": lambda r, k, **kw: r.normal(k, (4,), **kw),
    "uniform": lambda r, k, **kw: r.uniform(k, (4,), **kw),
    "truncated_normal": lambda r, k, **kw: r.truncated_normal(k, -1.0, 1.0, (4,), **kw),
    "randint": lambda r, k, **kw: r.randint(k, (4,), 0, 10, **kw),
    "bernoulli": lambda r, k, **kw: r.bernoulli(k, 0.5, (4,), **kw),
    "categorical": lambda r, k, **kw: r.categorical(k, jnp.zeros((4, 3)), **kw),
    "permutation": lambda r, k, **kw: r.permutation(k, 4, **kw),
}


def test_out_sharding(check):
    """out_sharding (a one-device mesh, replicated): the same draw as without it, sharded as asked."""
    r, sharding = dc.random(), dc.mesh_sharding()
    for name, draw in SHARDED.items():
        value = draw(r, r.key(dc.SEED), out_sharding=sharding)
        check.identical(f"out_sharding/{name}", value, draw(r, r.key(dc.SEED)))
        check.exact(f"out_sharding/{name}/sharding", value.sharding.is_equivalent_to(sharding, value.ndim), True)


def test_complex_normal(check):
    """normal in complex64: real and imaginary parts each N(0, 1/2) (the docstring: unit variance in all), golden
    bit for bit; a large draw's parts' moments within 5 standard errors of sd sqrt(1/2)."""
    r = dc.random()
    value = np.asarray(r.normal(dc.key(), (3, 4), jnp.complex64))
    check.exact("complex_normal/dtype", str(value.dtype), "complex64")
    check.golden("complex_normal/real", value.real)
    check.golden("complex_normal/imag", value.imag)
    large = np.asarray(r.normal(dc.key(), (dc.LARGE,), jnp.complex64))
    dc.moments(check, "complex_normal/real", large.real, 0.0, np.sqrt(0.5), 3.0)
    dc.moments(check, "complex_normal/imag", large.imag, 0.0, np.sqrt(0.5), 3.0)
