"""jax.random's discrete draws a training step makes (dropout's bernoulli, shuffling's permutation and choice,
sampling's categorical, randint): a fixed key's draws golden (exact: integers and booleans) and, beside them, what
holds whatever the bits: randint within [minval, maxval) up to the dtype's edges, its frequencies uniform;
bernoulli's rate p; categorical's frequencies the softmax of the logits, without replacement distinct; choice with
and without replacement, with p; permutation a permutation (independent: each row its own); error contracts."""

import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import draw_checks as dc

pytestmark = pytest.mark.family("random")

N = 1 << 14  # draws in a frequencies contract


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32"])
def test_randint(check, dtype):
    """randint over the dtype's whole range (iinfo.min to iinfo.max: max excluded) and over [3, 11): golden, every
    value inside; [3, 11)'s eight values each at frequency 1/8 within 5 standard errors (int32 only: the bits are
    the dtype's). A minval below the dtype's range (a Python int) is clipped to its edge: golden."""
    r, info = dc.random(), np.iinfo(dtype)
    whole = r.randint(dc.key(), (64,), np.array(info.min, dtype), np.array(info.max, dtype), jnp.dtype(dtype))
    check.exact(f"randint/{dtype}/dtype", str(whole.dtype), dtype)
    check.golden(f"randint/{dtype}/whole", np.asarray(whole))
    dc.within(check, f"randint/{dtype}/whole", np.asarray(whole), int(info.min), int(info.max), upper_open=True)
    small = np.asarray(r.randint(dc.key(), (N,), 3, 11, jnp.dtype(dtype)))
    dc.within(check, f"randint/{dtype}/3_11", small, 3, 11, upper_open=True)
    check.golden(f"randint/{dtype}/3_11", small[:32])
    dc.frequencies(check, f"randint/{dtype}/3_11", np.bincount(small.astype(np.int64) - 3, minlength=8), [1 / 8] * 8)
    if dtype != "int32":  # a Python int outside the dtype's range (int32's would overflow the argument itself)
        clipped = r.randint(dc.key(), (8,), int(info.min) - 5 if dtype.startswith("int") else -5, 11, jnp.dtype(dtype))
        check.golden(f"randint/{dtype}/below_range", np.asarray(clipped))


@pytest.mark.parametrize("mode", ["low", "high"])
def test_bernoulli(check, mode):
    """bernoulli(p=0.3) (mode low, the default, and high): the rate within 5 standard errors of 0.3; p as an array
    broadcast against the shape (rows at 0 and 1: all False and all True); golden."""
    r = dc.random()
    x = np.asarray(r.bernoulli(dc.key(), 0.3, (N,), mode=mode))
    check.exact(f"bernoulli/{mode}/dtype", str(x.dtype), "bool")
    dc.frequencies(check, f"bernoulli/{mode}", [(~x).sum(), x.sum()], [0.7, 0.3])
    check.golden(f"bernoulli/{mode}", x[:64])
    p = jnp.asarray([[0.0], [1.0], [0.5]])
    rows = np.asarray(r.bernoulli(dc.key(), p, (3, 16), mode))
    check.exact(f"bernoulli/{mode}/edges", [rows[0].any(), rows[1].all()], [False, True])
    check.golden(f"bernoulli/{mode}/rows", rows)
    check.golden(f"bernoulli/{mode}/default_p", np.asarray(r.bernoulli(dc.key(), shape=(16,), mode=mode)))


LOGITS = np.log(np.array([0.1, 0.2, 0.3, 0.4]))


@pytest.mark.parametrize("case", ["default", "axis0", "high", "without_replacement", "without_replacement_2d"])
def test_categorical(check, case):
    """categorical's frequencies the softmax of the logits (4 classes; axis 0 with the logits as a column; mode
    high), within 5 standard errors; without replacement (shape (4, *batch), batch (5,) and (2, 3)): each batch
    element's 4 samples a permutation of the classes; golden."""
    r = dc.random()
    if case.startswith("without_replacement"):  # batch shape (5,) and (2, 3): the samples lead, the batch follows
        batch = (5,) if case == "without_replacement" else (2, 3)
        logits = jnp.broadcast_to(jnp.asarray(LOGITS), (*batch, 4))
        x = np.asarray(r.categorical(dc.key(), logits, shape=(4, *batch), replace=False))
        check.exact(f"categorical/{case}/permutations", sorted(map(sorted, x.reshape(4, -1).T.tolist())),
                    [[0, 1, 2, 3]] * int(np.prod(batch)))
        check.golden(f"categorical/{case}", x)
        return
    logits = jnp.asarray(LOGITS)[:, None] if case == "axis0" else jnp.asarray(LOGITS)
    kwargs = {"axis": 0} if case == "axis0" else {"mode": "high"} if case == "high" else {}
    x = np.asarray(r.categorical(dc.key(), logits, shape=(N, 1) if case == "axis0" else (N,), **kwargs)).ravel()
    dc.frequencies(check, f"categorical/{case}", np.bincount(x, minlength=4), np.exp(LOGITS) / np.exp(LOGITS).sum())
    check.golden(f"categorical/{case}", x[:64])


P = np.array([0.5, 0.0, 0.25, 0.25])


@pytest.mark.parametrize("case", ["int", "array_axis1", "without_replacement", "p", "p_without_replacement", "high"])
def test_choice(check, case):
    """choice from range(a) (uniform frequencies), from a matrix's columns (axis=1: whole columns), without
    replacement (distinct, a subset), with p (frequencies p, never a p = 0 element), with p and without replacement
    (distinct, never p = 0), mode high; golden."""
    r, key = dc.random(), dc.key()
    if case == "int":
        x = np.asarray(r.choice(key, 5, (N,)))
        dc.frequencies(check, "choice/int", np.bincount(x, minlength=5), [0.2] * 5)
    elif case == "array_axis1":
        a = np.arange(12).reshape(3, 4)
        x = np.asarray(r.choice(key, jnp.asarray(a), (6,), axis=1))
        check.exact("choice/array_axis1/columns", [col.tolist() in a.T.tolist() for col in x.T], [True] * 6)
    elif case == "p":
        x = np.asarray(r.choice(key, 4, (N,), p=jnp.asarray(P)))
        counts = np.bincount(x, minlength=4)
        check.exact("choice/p/zero", int(counts[1]), 0)
        dc.frequencies(check, "choice/p", counts[[0, 2, 3]], P[[0, 2, 3]])
    else:
        kwargs = {"p": jnp.asarray(P)} if case == "p_without_replacement" else {"mode": "high"} if case == "high" else {}
        x = np.asarray(r.choice(key, jnp.arange(10, 14), (3,), replace=False, **kwargs))
        check.exact(f"choice/{case}/distinct", len(set(x.tolist())), 3)
        allowed = {10, 12, 13} if "p" in kwargs else {10, 11, 12, 13}
        check.exact(f"choice/{case}/subset", set(x.tolist()) <= allowed, True)
    check.golden(f"choice/{case}", x[:64] if x.ndim == 1 else x)


@pytest.mark.parametrize("case", ["int", "rows", "axis1", "independent"])
def test_permutation(check, case):
    """permutation of range(n), of a matrix's rows (axis 0), its columns (axis=1), and independent=True (each row's
    own permutation of its elements): a permutation, exactly; golden."""
    r, key = dc.random(), dc.key()
    a = np.arange(24).reshape(4, 6)
    x = np.asarray({"int": lambda: r.permutation(key, 10), "rows": lambda: r.permutation(key, jnp.asarray(a)),
                    "axis1": lambda: r.permutation(key, jnp.asarray(a), axis=1),
                    "independent": lambda: r.permutation(key, jnp.asarray(a), axis=1, independent=True)}[case]())
    if case == "int":
        check.exact("permutation/int", sorted(x.tolist()), list(range(10)))
    elif case == "rows":
        check.exact("permutation/rows", sorted(x.tolist()), a.tolist())
    elif case == "axis1":
        check.exact("permutation/axis1", sorted(x.T.tolist()), a.T.tolist())
    else:
        check.exact("permutation/independent", np.sort(x, axis=1).tolist(), a.tolist())
        orders = {tuple((row - row.min()).tolist()) for row in x}
        check.exact("permutation/independent/differ", len(orders) > 1, True)
    check.golden(f"permutation/{case}", x)


ERRORS = {
    "randint/float_dtype": lambda r: r.randint(dc.key(), (3,), 0, 5, jnp.float32),
    "choice/larger_than_population": lambda r: r.choice(dc.key(), 3, (4,), replace=False),
    "choice/p_wrong_shape": lambda r: r.choice(dc.key(), 3, (2,), p=jnp.ones(4) / 4),
    "choice/shape_not_sequence": lambda r: r.choice(dc.key(), 3, 2),
    "categorical/too_many_without_replacement": lambda r: r.categorical(dc.key(), jnp.zeros(3), shape=(4,),
                                                                         replace=False),
    "bernoulli/bad_mode": lambda r: r.bernoulli(dc.key(), 0.5, (2,), mode="medium"),
    "bernoulli/integer_p": lambda r: r.bernoulli(dc.key(), jnp.int32(1), (2,)),
    "uniform/integer_dtype": lambda r: r.uniform(dc.key(), (2,), jnp.int32),
    "truncated_normal/integer_dtype": lambda r: r.truncated_normal(dc.key(), -1.0, 1.0, (2,), jnp.int32),
    "permutation/float_scalar": lambda r: r.permutation(dc.key(), 3.0),
    "split/key_array": lambda r: r.split(r.split(dc.key())),
    "fold_in/array_data": lambda r: r.fold_in(dc.key(), jnp.arange(2)),
    "normal/raw_key_of_wrong_shape": lambda r: r.normal(jnp.zeros(3, jnp.uint32), (2,)),
    "key/float_seed": lambda r: r.key(1.5),
    "key/unknown_impl": lambda r: r.key(0, impl="mersenne"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(check, case):
    """A float dtype for randint, a sample larger than the population without replacement, p of another size, a
    bad mode, an integer p, an integer dtype for a float draw, a key array where one key is expected, an array to
    fold in, a raw key of the wrong shape, a float seed, an unknown implementation: the exception type golden, its
    message's first line a golden fact."""
    found = check.error_contract(f"errors/{case}", ERRORS[case], dc.random())
    check.golden_fact(f"errors/{case}/message", dc.error_message(found))
