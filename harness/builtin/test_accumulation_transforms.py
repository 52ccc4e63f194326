"""Accumulating transforms besides MultiSteps: optax.apply_every, and the running accumulators trace and ema
(optax files them with MultiSteps, in transforms/_accumulation).

References are NumPy float64 models of the docstrings, fed the float32 arrays the library received:
apply_every(k) sums the gradients of k calls and emits the sum on every k-th call, zeros otherwise;
trace(decay) keeps t <- g + decay * t and emits t (nesterov: g + decay * t); ema(decay) keeps
e <- (1 - decay) g + decay e and emits e, divided by 1 - decay**count when debias; accumulator_dtype is
the dtype the kept accumulator is stored in (rounded to it after every call).

Each transform compiles once per tree layout: hyperparameters are traced arguments and a run of calls is
one jitted function; the calls just before, at and after every count are in each run.
"""

import jax
import ml_dtypes
import numpy as np
import optax
import pytest

pytestmark = pytest.mark.family("accumulation")

F32 = np.float32
LAYOUT = {"b": (3,), "s": (), "w": (2, 3)}
_JIT = {}


def _runs(name, make):
    """tx = make(*hyper); init then one update per gradient tree, jitted once per name and layout.
    Returns [(updates, state) per call] as NumPy."""
    if name not in _JIT:
        def run(grads_seq, params, hyper):
            tx = make(*hyper)
            state, out = tx.init(params), []
            for g in grads_seq:
                u, state = tx.update(g, state, params)
                out.append((u, state))
            return out
        _JIT[name] = jax.jit(run)
    return lambda seq, params, *hyper: jax.device_get(_JIT[name](seq, params, tuple(hyper)))


def _seq(seed, n, scale=1.0):
    rng = np.random.default_rng(seed)
    return [{k: (scale * rng.standard_normal(s)).astype(F32) for k, s in LAYOUT.items()} for _ in range(n)]


def _zeros():
    return {k: np.zeros(s, F32) for k, s in LAYOUT.items()}


def _f64(x):
    return np.asarray(x, np.float64)


# -- apply_every(k) -------------------------------------------------------------------------------------------
_apply_every = _runs("apply_every", lambda k: optax.apply_every(k))


@pytest.mark.parametrize("k", [1, 3])
def test_apply_every(check, k):
    """2k + 1 calls: the sum of the last k gradients on calls k and 2k, zeros on the others (calls k - 1
    and k + 1 included); the counter is calls mod k; the accumulator restarts after an emission."""
    seq = _seq(20 + k, 2 * k + 1)
    out = _apply_every(seq, _zeros(), k)
    total = {key: np.zeros(np.shape(v)) for key, v in LAYOUT.items()}
    for i, (g, (u, state)) in enumerate(zip(seq, out), 1):
        total = {key: (total[key] if (i - 1) % k else 0.0) + _f64(g[key]) for key in total}
        emits = i % k == 0
        check.exact(f"count after call {i}", int(state.count), i % k)
        for key in sorted(total):
            scale = sum(np.abs(_f64(s[key])) for s in seq[i - 1 - (i - 1) % k:i])
            why = "a sum of gradients of either sign may cancel"
            check.reference(f"accumulator {key}", state.grad_acc[key], total[key], scale=scale, why=why)
            if emits:
                check.reference(f"emitted sum {key}", u[key], total[key], scale=scale, why=why)
            else:
                check.exact(f"zeros between emissions {key}", u[key], np.zeros(np.shape(u[key])))
    check.golden_tree(f"apply_every/k={k}/updates", [u for u, _ in out])
    check.golden_exact(f"apply_every/k={k}/counts", np.array([int(s.count) for _, s in out]))
    zero = _apply_every([_zeros()] * k, _zeros(), k)
    for key, leaf in zero[-1][0].items():
        check.exact(f"zero gradients emit zeros: {key}", leaf, np.zeros(np.shape(leaf)))


def test_apply_every_k_below_one(check):
    """k = -2, below its domain (k >= 1), three calls (the k = 1 program: k is traced): nothing is emitted;
    the counter is calls mod k with the divisor's sign, as Python's %: -1, 0, -1; the accumulator restarts
    where the count was 0 and adds on at -1: g1, g1 + g2, g3. Golden too: an optax that refuses such a k,
    or emits, shows as a change."""
    seq = _seq(40, 3)
    out = _apply_every(seq, _zeros(), -2)
    check.exact("counts", [int(state.count) for _, state in out], [1 % -2, 2 % -2, 3 % -2])
    expected = [_f64(seq[0]["w"]), _f64(seq[0]["w"]) + _f64(seq[1]["w"]), _f64(seq[2]["w"])]
    for i, ((u, state), acc) in enumerate(zip(out, expected), 1):
        check.exact(f"call {i} emits zeros", u["w"], np.zeros(LAYOUT["w"]))
        if i == 2:
            check.reference(f"call {i} accumulator", state.grad_acc["w"], acc, scale=np.abs(_f64(seq[0]["w"])) +
                            np.abs(_f64(seq[1]["w"])), why="a sum of gradients of either sign may cancel")
        else:  # a restart: 0 * accumulator + g is g itself
            check.identical(f"call {i} accumulator", state.grad_acc["w"], seq[i - 1]["w"])
    check.golden_tree("apply_every/k=-2/accumulators", [state.grad_acc for _, state in out])


def test_apply_every_even_k(check):
    """k = 2 over three calls (the k = 1 program: k is traced), an even k beside the odd ones above (where
    count & k happens to equal count % k): the sum g1 + g2 emitted on call 2, zeros on 1 and 3; counter 1, 0, 1."""
    seq = _seq(41, 3)
    out = _apply_every(seq, _zeros(), 2)
    check.exact("counts", [int(state.count) for _, state in out], [1, 0, 1])
    total = _f64(seq[0]["w"]) + _f64(seq[1]["w"])
    check.reference("call 2 emits g1 + g2", out[1][0]["w"], total, scale=np.abs(_f64(seq[0]["w"])) +
                    np.abs(_f64(seq[1]["w"])), why="a sum of gradients of either sign may cancel")
    for i in (0, 2):
        check.exact(f"call {i + 1} emits zeros", out[i][0]["w"], np.zeros(LAYOUT["w"]))


def _times(decay, kept, dtype):
    """decay * the kept accumulator as JAX computes it: a Python float is weakly typed, so beside a
    bfloat16 accumulator it is rounded to bfloat16. The product is bfloat16 too, but under jit XLA may keep
    it in float32 (it does on CPU; eager rounds it): the model leaves it unrounded and the tolerance
    (harness/contract/tolerances.py) allows bfloat16 ulps for that one rounding."""
    if dtype is None:
        return decay * kept
    return _f64(np.asarray(decay, ml_dtypes.bfloat16)) * kept


# -- trace(decay, nesterov, accumulator_dtype) ----------------------------------------------------------------
_TRACE = {(nesterov, dtype): _runs(f"trace/{nesterov}/{dtype}",
                                   lambda d, n=nesterov, a=dtype: optax.trace(d, nesterov=n, accumulator_dtype=a))
          for nesterov in (False, True) for dtype in (None, "bfloat16")}


@pytest.mark.parametrize("dtype", [None, "bfloat16"], ids=["acc=None", "acc=bfloat16"])
@pytest.mark.parametrize("nesterov", [False, True], ids=["plain", "nesterov"])
def test_trace(check, nesterov, dtype):
    """Four calls of trace(0.7): the kept trace and the emitted update against float64, one call at a time
    from the trace the library stored (in accumulator_dtype when one is given: decay * trace is then a
    bfloat16 product, see _times); the dtypes are golden."""
    decay, seq = 0.7, _seq(30, 4)
    out = _TRACE[(nesterov, dtype)](seq, _zeros(), decay)
    d = float(F32(decay))
    t = {k: np.zeros(s) for k, s in LAYOUT.items()}
    for i, (g, (u, state)) in enumerate(zip(seq, out), 1):
        new = {k: _f64(g[k]) + _times(d, t[k], dtype) for k in t}
        emitted = {k: _f64(g[k]) + d * new[k] for k in t} if nesterov else new
        for k in sorted(t):
            scale = np.abs(_f64(g[k])) + d * np.abs(t[k])
            why = "g + decay * trace: terms of either sign may cancel"
            # The update is computed in float32 before the trace is stored in accumulator_dtype.
            check.reference(f"call {i} update {k}", u[k], emitted[k], scale=scale * (1 + d) if nesterov else scale,
                            why=why)
            if not dtype:
                check.reference(f"call {i} trace {k}", state.trace[k], new[k], scale=scale, why=why)
        t = {k: _f64(state.trace[k]) for k in t}  # one call at a time, from what the library stored
    check.golden_fact(f"trace/{nesterov}/{dtype}/dtypes",
                      {"trace": sorted({str(x.dtype) for x in jax.tree.leaves(out[-1][1])}),
                       "updates": sorted({str(x.dtype) for x in jax.tree.leaves(out[-1][0])})})
    check.golden_tree(f"trace/{nesterov}/{dtype}/updates", [u for u, _ in out])
    zero = _TRACE[(nesterov, dtype)]([_zeros()] * 2, _zeros(), decay)
    for key, leaf in zero[-1][0].items():
        check.exact(f"zero gradients give zeros: {key}", leaf, np.zeros(np.shape(leaf)))


# -- ema(decay, debias, accumulator_dtype) ----------------------------------------------------------------------
_EMA = {(debias, dtype): _runs(f"ema/{debias}/{dtype}",
                               lambda d, b=debias, a=dtype: optax.ema(d, debias=b, accumulator_dtype=a))
        for debias in (True, False) for dtype in (None, "bfloat16")}


@pytest.mark.parametrize("dtype", [None, "bfloat16"], ids=["acc=None", "acc=bfloat16"])
@pytest.mark.parametrize("debias", [True, False], ids=["debias", "biased"])
def test_ema(check, debias, dtype):
    """Four calls of ema(0.8): the kept average, the count and the emitted update (divided by 1 - 0.8**t
    when debiased) against float64, the average rounded to accumulator_dtype when one is given."""
    decay, seq = 0.8, _seq(40, 4)
    out = _EMA[(debias, dtype)](seq, _zeros(), decay)
    d = float(F32(decay))
    e = {k: np.zeros(s) for k, s in LAYOUT.items()}
    for i, (g, (u, state)) in enumerate(zip(seq, out), 1):
        new = {k: (1 - d) * _f64(g[k]) + _times(d, e[k], dtype) for k in e}
        check.exact(f"count after call {i}", int(state.count), i)
        for k in sorted(e):
            scale = (1 - d) * np.abs(_f64(g[k])) + d * np.abs(e[k])
            why = "(1 - decay) g + decay e: terms of either sign may cancel"
            factor = 1.0 / (1 - d ** i) if debias else 1.0
            check.reference(f"call {i} update {k}", u[k], new[k] * factor, scale=scale * factor, why=why)
            if not dtype:
                check.reference(f"call {i} average {k}", state.ema[k], new[k], scale=scale, why=why)
        e = {k: _f64(state.ema[k]) for k in e}  # one call at a time, from what the library stored
    check.golden_fact(f"ema/{debias}/{dtype}/dtypes", sorted({str(x.dtype) for x in jax.tree.leaves(out[-1][1].ema)}))
    check.golden_tree(f"ema/{debias}/{dtype}/updates", [u for u, _ in out])
    zero = _EMA[(debias, dtype)]([_zeros()] * 2, _zeros(), decay)
    for key, leaf in zero[-1][0].items():
        check.exact(f"zero gradients give zeros: {key}", leaf, np.zeros(np.shape(leaf)))


# -- called with their defaults ---------------------------------------------------------------------------------
_DEFAULTS = {  # name -> (called with the required arguments only, the documented defaults spelled out,
    #                  the required arguments, the spelled-out run's arguments)
    "ema": (_runs("ema/defaults", lambda d: optax.ema(d)), _EMA[(True, None)], (0.8,), (0.8,)),
    "trace": (_runs("trace/defaults", lambda d: optax.trace(d)), _TRACE[(False, None)], (0.7,), (0.7,)),
    "apply_every": (_runs("apply_every/defaults", lambda: optax.apply_every()), _apply_every, (), (1,)),
}


@pytest.mark.parametrize("name", sorted(_DEFAULTS))
def test_called_with_defaults(check, name):
    """ema(decay), trace(decay) and apply_every() give, bit for bit, what their documented defaults give
    spelled out (debias=True, accumulator_dtype=None; nesterov=False; k=1): a default changed in the body
    rather than the signature shows here."""
    bare, spelled, required, spelled_out = _DEFAULTS[name]
    seq = _seq(50, 3)
    got, want = bare(seq, _zeros(), *required), spelled(seq, _zeros(), *spelled_out)
    for i, ((u, _), (v, _)) in enumerate(zip(got, want), 1):
        for k in sorted(LAYOUT):
            check.identical(f"call {i} update {k}: defaults = spelled out", u[k], v[k])
