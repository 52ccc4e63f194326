"""jax.nn.standardize, one_hot and glu (re-exported by flax.nnx) against float64 references of their documented
formulas (harness/builtin/reference/activations_axes.py): standardize with each of its parameters (axis, mean,
variance, epsilon, where, algorithm "fast" and "stable", a constant row where epsilon alone keeps it finite, a row
offset far from 0 where the fast variance cancels) and its vjp; one_hot's classes, out-of-range indices, dtype and
axis; glu's halves and vjp; the parameters' defaults and kinds, and error contracts."""

import inspect
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import activation_checks as ac, edges
from harness.builtin.reference import activations_axes as ref

pytestmark = pytest.mark.family("activations")

ROWS = np.array([[1.0, -2.0, 3.0, 0.5, 0.0, 2.5, -1.5, 4.0],
                 [0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25],  # variance 0: epsilon alone keeps it finite
                 [-3.0, 7.0, 1.0, -0.5, 2.0, 0.0, 5.0, -6.0]])
OFFSET = np.vstack([1000.0 + ROWS[::2],  # mean ~1000, spread ~3: mean(x^2) - mean^2 cancels six digits
                    # spread of a float32 ulp at 1000: measured, the fast variance rounds to -0.0625 (clipped to 0)
                    1000.0 + np.array([2, 2, 0, 1, 1, 0, 1, 1]) * 2.0 ** -14])
V = np.round(np.cos(np.arange(ROWS.size) * 1.3).reshape(ROWS.shape) * 4.0) / 4.0
WHERE = np.array([[1, 1, 0, 1, 1, 1, 0, 1], [1] * 8, [0, 1, 1, 1, 1, 1, 1, 0]], bool)
VJP = "r (v - <v>) and the variance's term cancel"
FAST = ("the fast variance mean(x^2) - mean(x)^2 cancels (the docstring's catastrophic cancellation): its rounding is "
        "at mean(x^2)'s size, carried into the result relative to the variance")


def _standardize(dtype="float32", x64=ROWS, **kwargs):
    """One jitted program: standardize(x, **kwargs) and its vjp of V (its first rows)."""
    def both(x, v):
        y, pull = jax.vjp(lambda q: ac.nn().standardize(q, **kwargs), x)
        return y, pull(v)[0]

    return jax.jit(both)(jnp.asarray(x64, dtype), jnp.asarray(np.resize(V, x64.shape), dtype))


@pytest.mark.parametrize("algorithm", ["default", "fast", "stable"])
@pytest.mark.parametrize("dtype", ac.DTYPES)
def test_standardize(check, dtype, algorithm):
    """(x - <x>) / sqrt(<(x - <x>)^2> + 1e-5) along the last axis, with the default algorithm ("fast") and each
    spelled out, and its vjp r (v - <v>) - r^3 (x - <x>) <v (x - <x>)>."""
    kwargs = {} if algorithm == "default" else {"algorithm": algorithm}
    value, vjp = _standardize(dtype, **kwargs)
    x64 = ac.f64(jnp.asarray(ROWS, dtype))
    v64 = ac.f64(jnp.asarray(V, dtype))
    key = f"standardize/{algorithm}/{dtype}"
    scale = np.abs(x64 - np.mean(x64, -1, keepdims=True)) / np.sqrt(np.var(x64, -1, keepdims=True) + 1e-5)
    ac.judge(check, key, value, ref.standardize(x64), ac.Scale(lambda _: scale + 1.0, FAST) if algorithm != "stable"
             else None, x64)
    # Where (var + epsilon)^(-3/2) overflows float16 (the constant row: 1e-5^-1.5 = 3e7), measured: the vjp is NaN
    # there (inf times x - <x> = 0); those rows are the baseline's, golden, the others against the formula.
    over = np.broadcast_to(ref.standardize_r3(x64) > float(np.finfo(np.float16).max), x64.shape) & (dtype == "float16")
    vjp = np.asarray(vjp)
    ac.judge(check, f"{key}/vjp", vjp[~over], ref.standardize_vjp(x64, v64)[~over],
             ac.Scale(lambda x: ref.standardize_vjp_scale(x, v64)[~over], VJP), x64)
    if over.any():
        check.golden(f"{key}/vjp/overflowing", vjp[over])


def _fast_offset_scale(x):
    second = np.mean(x * x, -1, keepdims=True)
    var = np.var(x, -1, keepdims=True) + 1e-5
    return np.abs(ref.standardize(x)) * second / var


@pytest.mark.parametrize("algorithm", ["fast", "stable"])
def test_standardize_offset(check, algorithm):
    """Rows of mean ~1000: the two-pass "stable" variance keeps float32's accuracy; the "fast" one's result is
    held at mean(x^2) / var times its value (the cancellation its docstring names), its values golden."""
    value, _ = _standardize(x64=OFFSET, algorithm=algorithm)
    x64 = ac.f64(jnp.asarray(OFFSET, jnp.float32))
    # The fast variance is clipped at 0 (a cancellation below it would make rsqrt(var + epsilon) NaN): finite.
    check.exact(f"standardize/offset/{algorithm}/finite", bool(np.isfinite(np.asarray(value)).all()), True)
    scale = ac.Scale(_fast_offset_scale, FAST) if algorithm == "fast" else None
    ac.judge(check, f"standardize/offset/{algorithm}", value, ref.standardize(x64), scale, x64)


STANDARDIZE_PARAMS = {
    "axis0": ({"axis": 0}, {"axis": 0}),
    "axisNone": ({"axis": None}, {"axis": None}),
    "mean_variance": ({"mean": jnp.float32(0.5), "variance": jnp.float32(4.0)}, {"mean": 0.5, "variance": 4.0}),
    "epsilon0.5": ({"epsilon": 0.5}, {"epsilon": 0.5}),
    "where": ({"where": jnp.asarray(WHERE), "algorithm": "stable"}, {"where": WHERE}),
}


@pytest.mark.parametrize("case", sorted(STANDARDIZE_PARAMS))
def test_standardize_parameters(check, case):
    """axis 0 and None, a given mean and variance (used as they are), epsilon 0.5, a where mask (the moments over
    the included elements, every element standardized by them); float32, "stable" where the moments cancel."""
    kwargs, ref_kwargs = STANDARDIZE_PARAMS[case]
    kwargs = {"algorithm": "stable", **kwargs}
    value, vjp = _standardize(**kwargs)
    ac.judge(check, f"standardize/{case}", value, ref.standardize(ROWS, **ref_kwargs))
    if case == "mean_variance":  # constants: the vjp is v / sqrt(variance + epsilon)
        ac.judge(check, f"standardize/{case}/vjp", vjp, V / np.sqrt(4.0 + 1e-5))


def _mesh():
    """A one-device mesh with an explicit axis (one_hot refuses an out_sharding over automatic axes)."""
    return jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))


def _one_hot_case(nn, case, indices):
    """(value, class axis, expected dtype) of one way to call one_hot."""
    x = jnp.asarray(indices)
    if case == "int32":
        return nn.one_hot(x, 5, dtype=jnp.int32), -1, "int32"
    if case == "bfloat16/axis0":
        return nn.one_hot(x, 5, dtype=jnp.bfloat16, axis=0), 0, "bfloat16"
    if case == "out_sharding":  # a one-device mesh: the class axis unsharded, the index axes as x's
        out = jax.sharding.NamedSharding(_mesh(), jax.sharding.PartitionSpec(None, None, "x"))
        return nn.one_hot(x, 5, out_sharding=out), -1, "float32"
    if case == "out_sharding/axis1":  # the class axis inside, sharded: x's spec is the out spec without entry 1
        out = jax.sharding.NamedSharding(_mesh(), jax.sharding.PartitionSpec(None, "x", None))
        return nn.one_hot(x, 5, axis=1, out_sharding=out), 1, "float32"
    return nn.one_hot(x, 5), -1, "float32"


@pytest.mark.parametrize("case", ["default", "bfloat16/axis0", "int32", "out_sharding", "out_sharding/axis1"])
def test_one_hot(check, case):
    """1 at the index's class, 0 elsewhere, a row of zeros for -1 and num_classes (out of range); float32 by
    default (x64 off), the dtype asked, the class axis where asked, an out_sharding (with the class axis last, and
    at an odd position, where the spec of x is the rest of it); exactly."""
    indices = np.array([[0, 3, -1], [4, 2, 5]])
    # Whether the call is taken is a contract too: a release without a parameter (jax 0.10.2's one_hot has no
    # out_sharding) records that error as its behaviour, and the candidate that adds or drops one is a change.
    called = check.error_contract(f"one_hot/{case}/call", _one_hot_case, ac.nn(), case, indices)
    if isinstance(called, Exception):
        return
    value, axis, dtype = called
    check.exact(f"one_hot/{case}/dtype", str(value.dtype), dtype)
    check.exact(f"one_hot/{case}", np.asarray(value, np.float64).tolist(), ref.one_hot(indices, 5, axis).tolist())
    check.golden_fact(f"one_hot/{case}", np.asarray(value, np.float64).tolist())


MANY_CLASSES = 300  # more than an 8-bit width counts


@pytest.mark.parametrize("width", edges.INTEGER_WIDTHS)
def test_one_hot_index_widths(check, width):
    """The indices in each integer width JAX holds without x64 (8, 16 and 32 bits, signed and unsigned): 1 at
    each index's class and a row of zeros out of the range, exactly, as NumPy casts the indices (-1 wraps to the
    width's largest value unsigned: out of range either way); float32. A release that mishandles a narrow width
    (an index compared after a cast that overflows) changes it; so does one that fixes the wrap below."""
    indices = np.array([[0, 3, -1], [4, 2, 5], [1, 127, 128]]).astype(width)
    called = check.error_contract(f"one_hot/indices_{width}/call", lambda: ac.nn().one_hot(jnp.asarray(indices), 5))
    if isinstance(called, Exception):
        return
    check.exact(f"one_hot/indices_{width}/dtype", str(called.dtype), "float32")
    check.exact(f"one_hot/indices_{width}", np.asarray(called, np.float64).tolist(),
                ref.one_hot(indices.astype(np.int64), 5, -1).tolist())
    # More classes than an 8-bit width counts: jax 0.11.2 makes the class ids in the indices' width, which wraps
    # past 255 (index 5 is also class 261 in int8 and uint8). That is the baseline's, pinned as a fact: where each
    # row's 1s are, and whether they are the float64 reference's.
    many = np.array([5, 0, 127]).astype(width)
    value = np.asarray(ac.nn().one_hot(jnp.asarray(many), MANY_CLASSES), np.float64)
    check.golden_fact(f"one_hot/indices_{width}/{MANY_CLASSES}_classes", [np.flatnonzero(row).tolist() for row in value])
    check.golden_fact(f"one_hot/indices_{width}/{MANY_CLASSES}_classes/as_reference",
                      bool(np.array_equal(value, ref.one_hot(many.astype(np.int64), MANY_CLASSES, -1))))


def test_one_hot_named_axis(check):
    """axis a named (vmapped) axis of num_classes' size: element i is 1 where x_i = i, the index along it."""
    value = jax.vmap(lambda q: ac.nn().one_hot(q, 3, axis="i"), axis_name="i")(jnp.asarray([0, 2, 2]))
    check.exact("one_hot/named_axis", np.asarray(value, np.float64).tolist(), [1.0, 0.0, 1.0])


def test_one_hot_float_indices(check):
    """Float indices: the warning (its category) and the values, golden."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        value = ac.nn().one_hot(jnp.asarray([0.0, 2.0, 1.5]), 3)
    check.golden_fact("one_hot/float_indices/warnings", sorted({w.category.__name__ for w in seen}))
    check.golden_fact("one_hot/float_indices", np.asarray(value, np.float64).tolist())


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("dtype", ac.DTYPES)
def test_glu(check, dtype, axis):
    """a sigmoid(b), a and b the halves along the axis (-1, the default, or 0), and the vjp (v sigmoid(b),
    v a sigmoid'(b))."""
    x = jnp.asarray(ROWS[:2] * 3.0 if axis == 0 else ROWS, dtype)
    v = jnp.asarray(V[:2, :4] if axis == 0 else V[:, :4], dtype)
    fn = (lambda q: ac.nn().glu(q)) if axis == -1 else (lambda q: ac.nn().glu(q, axis=0))
    value, vjp = jax.jit(lambda q, c: (lambda y, pull: (y, pull(c)[0]))(*jax.vjp(fn, q)))(x, v.reshape(
        (1, 8) if axis == 0 else (3, 4)))
    x64, v64 = ac.f64(x), ac.f64(v).reshape((1, 8) if axis == 0 else (3, 4))
    ac.judge(check, f"glu/{axis}/{dtype}", value, ref.glu(x64, axis))
    ac.judge(check, f"glu/{axis}/{dtype}/vjp", vjp, ref.glu_vjp(x64, v64, axis),
             ac.Scale(lambda q: ref.glu_vjp_scale(q, v64, axis), "sigmoid'(b) = s (1 - s): 1 - s cancels at 1's scale "
                      "for positive b (measured: 36 bfloat16 ulps at b = 5, under 1 at that scale)"), x64)


ERRORS = {
    "glu/odd_size": lambda nn: nn.glu(jnp.ones((2, 3))),
    "standardize/unknown_algorithm": lambda nn: nn.standardize(jnp.ones(4), algorithm="exact"),
    "softmax/bad_axis": lambda nn: nn.softmax(jnp.ones((2, 3)), axis=2),
    "logsumexp/unbroadcastable_b": lambda nn: nn.logsumexp(jnp.ones((2, 3)), b=jnp.ones(4)),
    "one_hot/traced_num_classes": lambda nn: jax.jit(lambda n: nn.one_hot(jnp.arange(3), n))(3),
    "standardize/list_input": lambda nn: nn.standardize([1.0, 2.0]),
    "one_hot/out_sharding_of_another_spec": lambda nn: nn.one_hot(jnp.arange(2), 3, out_sharding=jax.sharding.NamedSharding(
        _mesh(), jax.sharding.PartitionSpec("x", None))),
    "squareplus/unbroadcastable_b": lambda nn: nn.squareplus(jnp.ones(3), jnp.ones(2)),
    "logmeanexp/bad_axis": lambda nn: nn.logmeanexp(jnp.ones((2, 3)), axis=2),
    "logmeanexp/unbroadcastable_where": lambda nn: nn.logmeanexp(jnp.ones((2, 3)), axis=-1,
                                                                 where=jnp.ones(4, bool)),
    **{f"{name}/list_input": (lambda nn, name=name: getattr(nn, name)([1.0, 2.0]))
       for name in ("log1mexp", "mish", "sparse_plus", "sparse_sigmoid", "squareplus")},
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(check, case):
    """An odd size to halve, an unknown algorithm, an axis the input lacks, b or where that cannot broadcast, a
    traced num_classes, a list input: the exception type (or no error) is the baseline's."""
    check.error_contract(f"errors/{case}", ERRORS[case], ac.nn())


def test_signatures(check):
    """Each re-exported function's parameters: names, kinds and defaults (leaky_relu's 0.01, elu's and celu's
    alpha 1, gelu's approximate=True, standardize's epsilon 1e-5 and algorithm "fast", ...) and its wrapper
    (jit, custom_jvp, plain), golden facts."""
    nn = ac.nn()
    for name in ac.covered():
        params = inspect.signature(getattr(nn, name)).parameters.values()
        check.golden_fact(f"signature/{name}", [[p.name, p.kind.name, "required" if p.default is p.empty else repr(p.default)]
                                                       for p in params])
        # jit-wrapped (PjitFunction), a custom derivative (custom_jvp) or plain: what a call eagerly compiles
        check.golden_fact(f"wrapper/{name}", type(getattr(nn, name)).__name__)


def test_public_modules(check):
    """Each function's __module__ (what JAX's `@export` sets to the public module it is documented in: what
    documentation, pickling by reference and `help` name), a golden fact."""
    nn = ac.nn()
    check.golden_fact("modules", {name: getattr(nn, name).__module__ for name in ac.covered()})
