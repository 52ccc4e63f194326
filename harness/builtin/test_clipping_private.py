"""optax.differentially_private_aggregate (DP-SGD's aggregation) and the dpsgd optimizer built on it:
each example's gradient clipped to l2_norm_clip in global norm, the batch summed, Gaussian noise of
standard deviation l2_norm_clip * noise_multiplier added, divided by the batch size.

With noise_multiplier = 0 the result has a float64 reference: the mean over the batch of
min(1, C / |g_i|) g_i. With noise on, the values depend on jax.random's bits (the key, split once per
leaf plus one for the next state): they are golden facts of the baseline's jax, not of any formula.
What does not depend on those bits is checked beside them: the noise has each leaf's shape less the batch
axis and its dtype, it scales linearly with noise_multiplier and with l2_norm_clip for the same key, it
is added before the division by the batch size, and the state's key moves on each update. The
aggregation compiles once: l2_norm_clip, noise_multiplier and the key are traced arguments.
"""

import jax
import numpy as np
import optax
import pytest

pytestmark = pytest.mark.family("clipping")

F32 = np.float32
BATCH = 4
# Example 0 is zero, 1 and 2 have global norm exactly 5 across the leaves (a 3-4-5 split, exact in
# float32), 3 has norm 10; the leaves are a (4, 3) vector per example, a non-square (4, 2, 3) matrix and a
# zero scalar per example: three leaves, so the key is split in 4 (an odd count of leaves tells n + 1 from n | 1).
GRADS = {"b": np.array([[0, 0, 0], [3, 0, 0], [0, 0, 0], [0, 6, 0]], F32), "s": np.zeros(BATCH, F32),
         "w": np.array([[[0, 0, 0], [0, 0, 0]], [[0, 4, 0], [0, 0, 0]], [[0, 0, 0], [3, 0, 4]], [[0, 0, 8], [0, 0, 0]]],
                       F32)}
NORM_5 = (np.array([0, 1, 1]), np.array([1, 0, 2]))  # w's elements from examples 1 and 2 (b's: element 0)
UNCLIPPED_NORM_5 = np.array([0.75, 1.0, 0.75, 1.0], F32)  # 3 / 4, 4 / 4, 3 / 4, 4 / 4
ZEROS = {k: np.zeros_like(v) for k, v in GRADS.items()}
KEY = 7


def _below(x):
    return float(np.nextafter(F32(x), F32(0.0)))


def _above(x):
    return float(np.nextafter(F32(x), F32(np.inf)))


@jax.jit
def _aggregate(grads, l2_norm_clip, noise_multiplier, key_data):
    """Two updates from the initial state: both results and the key after each."""
    key = jax.random.wrap_key_data(key_data)
    tx = optax.contrib.differentially_private_aggregate(l2_norm_clip, noise_multiplier, key)
    state = tx.init(grads)
    first, state = tx.update(grads, state)
    second, state2 = tx.update(grads, state)
    return first, second, jax.random.key_data(state.rng_key), jax.random.key_data(state2.rng_key)


def _key_data(seed):
    return jax.random.key_data(jax.random.key(seed))


def _run(grads, clip, multiplier, seed=KEY):
    return jax.device_get(_aggregate(grads, F32(clip), F32(multiplier), _key_data(seed)))


def _clipped_mean(grads, clip):
    g = {k: np.asarray(v, np.float64) for k, v in grads.items()}
    norms = np.sqrt(sum(np.sum(v.reshape(BATCH, -1) ** 2, axis=1) for v in g.values()))
    with np.errstate(divide="ignore", invalid="ignore"):
        factors = np.where(norms > 0, np.minimum(clip / norms, 1.0), 1.0)
    return {k: np.tensordot(factors, v, axes=1) / BATCH for k, v in g.items()}


def test_dp_aggregate_clipping_without_noise(check):
    """noise_multiplier 0: the mean of the clipped per-example gradients, with the clip norm just under,
    at and over the examples' norm 5: at and over, examples 1 and 2 pass through (their elements exactly),
    under, they shrink (strictly); at 5, example 3 is halved and the whole result is exact in float32."""
    unclipped = _clipped_mean(GRADS, 5.0)
    for side, clip in (("under", _below(5.0)), ("at", 5.0), ("over", _above(5.0))):
        first, second = _run(GRADS, clip, 0.0)[:2]
        expected = _clipped_mean(GRADS, clip)
        for key in sorted(GRADS):
            check.reference(f"{side}: {key} = mean of min(1, C / |g_i|) g_i", first[key], expected[key])
            check.identical(f"{side}: {key} the same on the second update (no noise)", second[key], first[key])
        if side == "at":
            for key in sorted(GRADS):
                check.exact(f"at: {key} (exact in float32)", first[key], unclipped[key].astype(F32))
        kept = np.array([first["b"][0], *first["w"][NORM_5]])  # the elements examples 1 and 2 alone make
        check.exact(f"{side}: examples of norm 5 {'shrink' if side == 'under' else 'pass through'}",
                    kept < UNCLIPPED_NORM_5 if side == "under" else kept, [True] * 4 if side == "under"
                    else UNCLIPPED_NORM_5)
        check.golden_tree(f"dp_aggregate/no_noise/{side}", first)
    zero = _run(ZEROS, 1.0, 0.0)[0]
    for key in sorted(zero):
        check.exact(f"zero gradients stay zero: {key}", zero[key], np.zeros(GRADS[key].shape[1:]))


def test_dp_aggregate_noise(check):
    """noise_multiplier 1.5, l2_norm_clip 2, key 7: both updates and the keys are golden (jax.random's bits).
    Structure, whatever the bits: each leaf's noise has its shape less the batch axis and its dtype; on
    zero gradients, doubling noise_multiplier doubles the result bit for bit, and l2_norm_clip 3 with
    noise_multiplier 1 gives the same result (the std is their product); the result on real gradients is
    the noiseless mean plus the zero-gradient result (noise added before dividing by the batch); the next
    update draws new noise; another key draws other noise."""
    first, second, key1, key2 = _run(GRADS, 2.0, 1.5)
    check.golden_tree("dp_aggregate/noise/first", first)
    check.golden_tree("dp_aggregate/noise/second", second)
    check.golden_exact("dp_aggregate/noise/keys", np.stack([key1, key2]))
    noise = _run(ZEROS, 2.0, 1.5)[0]
    doubled, swapped = _run(ZEROS, 2.0, 3.0)[0], _run(ZEROS, 3.0, 1.0)[0]
    other = _run(ZEROS, 2.0, 1.5, seed=KEY + 1)[0]
    mean = _clipped_mean(GRADS, 2.0)
    for key in sorted(GRADS):
        check.exact(f"{key}: noise shape and dtype", [list(noise[key].shape), str(noise[key].dtype)],
                    [list(GRADS[key].shape[1:]), "float32"])
        check.identical(f"{key}: noise_multiplier x2 doubles the noise", doubled[key], 2 * noise[key])
        check.identical(f"{key}: std = l2_norm_clip * noise_multiplier", swapped[key], noise[key])
        scale = np.abs(mean[key]) + np.abs(noise[key].astype(np.float64))
        check.reference(f"{key}: clipped mean + noise", first[key], mean[key] + noise[key].astype(np.float64),
                        scale=scale, why="the clipped sum and the noise add before the division: either may cancel")
        check.exact(f"{key}: noise is not zero", bool(np.all(noise[key] != 0)), True)
        check.exact(f"{key}: the second update draws new noise", bool(np.all(second[key] != first[key])), True)
        check.exact(f"{key}: another key draws other noise", bool(np.all(other[key] != noise[key])), True)
    check.exact("the key moves on each update", [bool(np.any(key1 != _key_data(KEY))), bool(np.any(key2 != key1))],
                [True, True])


def test_dp_aggregate_key_and_seed(check):
    """The key as an int, as a typed key and as the deprecated seed= (each 7, all non-default) start from the
    same state, and the state's key is the one given (under the deprecated top-level name too); no key at
    all starts from key 0 (with a warning); both key and seed is an error."""
    states = {"key=int": optax.contrib.differentially_private_aggregate(1.0, 1.0, KEY).init(GRADS),
              "key=typed": optax.contrib.differentially_private_aggregate(1.0, 1.0, jax.random.key(KEY)).init(GRADS),
              "seed=int": optax.contrib.differentially_private_aggregate(1.0, 1.0, seed=KEY).init(GRADS),
              "top-level name": optax.differentially_private_aggregate(1.0, 1.0, KEY).init(GRADS)}
    for name, state in states.items():
        check.exact(f"{name}: the state's key is key({KEY})", jax.random.key_data(state.rng_key), _key_data(KEY))
    default = optax.contrib.differentially_private_aggregate(1.0, 1.0).init(GRADS)
    check.exact("no key: key(0)", jax.random.key_data(default.rng_key), _key_data(0))
    check.error_contract("dp_aggregate/key_and_seed", optax.differentially_private_aggregate, 1.0, 1.0, KEY, seed=KEY)


def test_dp_aggregate_unbatched_leaves(check):
    """Per-example gradients need a batch axis on every leaf: a scalar first leaf, a scalar later leaf and
    leaves with different batch sizes raise (the types are golden; nothing is compiled)."""
    tx = optax.contrib.differentially_private_aggregate(1.0, 0.0, KEY)
    cases = {"scalar_first": {"a": F32(1.0), "b": GRADS["b"]}, "scalar_later": {"a": GRADS["b"], "z": F32(1.0)},
             "batch_sizes_differ": {"a": GRADS["b"], "b": GRADS["w"][:3]}}
    for name, grads in cases.items():
        check.error_contract(f"dp_aggregate/unbatched/{name}", jax.eval_shape, lambda g: tx.update(g, tx.init(g)),
                             grads)


@jax.jit
def _dpsgd(grads, learning_rate):
    """dpsgd with its defaults (no momentum), with momentum 0.5 (nesterov left at its default) and with
    Nesterov momentum: two updates each, no noise."""
    out = {}
    variants = {"plain": {}, "momentum": {"momentum": 0.5}, "nesterov": {"momentum": 0.5, "nesterov": True}}
    for name, options in variants.items():
        tx = optax.contrib.dpsgd(learning_rate, l2_norm_clip=2.0, noise_multiplier=0.0, seed=KEY, **options)
        state = tx.init({k: v[0] for k, v in grads.items()})  # the params: one example's shapes
        first, state = tx.update(grads, state)
        out[name] = (first, tx.update(grads, state)[0])
    return out


def test_dpsgd(check):
    """dpsgd(learning_rate 0.1, clip 2, no noise): -lr times the clipped mean m; with momentum 0.5 the
    second update is -lr (m + 0.5 m); with Nesterov -lr (m + 0.5 m) first and -lr (m + 0.5 (m + 0.5 m))
    second."""
    out = jax.device_get(_dpsgd(GRADS, F32(0.1)))
    m = _clipped_mean(GRADS, 2.0)
    lr = float(F32(0.1))
    factors = {"plain": (1.0, 1.0), "momentum": (1.0, 1.5), "nesterov": (1.5, 1.75)}
    for name, (f1, f2) in factors.items():
        for step, factor in ((0, f1), (1, f2)):
            for key in sorted(GRADS):
                check.reference(f"{name} update {step + 1}: {key}", out[name][step][key], -lr * factor * m[key])
        check.golden_tree(f"dpsgd/{name}", {"first": out[name][0], "second": out[name][1]})
