"""add_noise: Gaussian noise of standard deviation sqrt(eta / t**gamma) added to the gradients at call t.

optax.add_decayed_weights and optax.add_noise live in one Optax module; weight decay is pinned in
test_masks.py and test_masks_routing.py, the noise here. The noise is drawn with jax.random from the
state's key (split at every call), so the contract draws the same normals with optax.tree.random_like from
the key split the documented way and relates (update - gradient) / normal to the documented standard
deviation, against NumPy float64 call by call: a relation between the transform and the tree sampler of
the same library, plus the updates themselves as golden values (a changed key schedule or sampler shows
there). The key's three spellings (key, the deprecated seed, neither: key 0) must give the same noise.
"""

import warnings

import jax
import numpy as np
import optax
import pytest

pytestmark = pytest.mark.family("masks")

ETA, GAMMA, CALLS = 0.3, 0.8, 4  # non-default values (neither has a default); t = 1..4 crosses t**gamma's growth
GRADS = {"bias": np.array([0.5, -1.5, 2.0], np.float32),
         "kernel": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5}  # non-square
_JIT = {}


def _run(tx_key, grads):
    """The updates of CALLS calls of add_noise(ETA, GAMMA, key), jitted once per gradient layout."""
    if "run" not in _JIT:
        def run(key, grads):
            tx = optax.add_noise(ETA, GAMMA, key=key)
            state, out = tx.init(grads), []
            for _ in range(CALLS):
                u, state = tx.update(grads, state)
                out.append(u)
            return out, state.count
        _JIT["run"] = jax.jit(run)
    return jax.device_get(_JIT["run"](tx_key, grads))


def _normals(key, tree):
    """The normals add_noise's docstring implies: at each call the key is split into (next key, sample key)."""
    out = []
    for _ in range(CALLS):
        key, sample = jax.random.split(key)
        out.append(jax.device_get(optax.tree.random_like(sample, target_tree=tree, sampler=jax.random.normal)))
    return out


@pytest.mark.parametrize("zero", [True, False], ids=["zero_grads", "grads"])
def test_add_noise_std_per_call(check, zero):
    """add_noise adds sqrt(eta / t**gamma) times a standard normal at call t, and counts its calls."""
    grads = {k: np.zeros_like(v) for k, v in GRADS.items()} if zero else GRADS
    key = jax.random.key(7)
    updates, count = _run(key, grads)
    check.exact("count after calls", int(count), CALLS)
    for t, (u, normal) in enumerate(zip(updates, _normals(key, grads)), start=1):
        std = np.sqrt(ETA / np.float64(t) ** GAMMA)
        for leaf in GRADS:
            check.golden(f"add_noise/{'zero' if zero else 'grads'}/call{t}/{leaf}", u[leaf])
            expected = np.asarray(grads[leaf], np.float64) + std * np.asarray(normal[leaf], np.float64)
            check.reference(f"call{t}/{leaf}: grads + sqrt(eta / t**gamma) * normal", u[leaf], expected,
                            scale=np.abs(np.asarray(grads[leaf], np.float64)) + std * np.abs(normal[leaf]),
                            why="gradient + noise: terms of either sign may cancel")


def test_add_noise_key_spellings(check):
    """The key given as a key, as an integer, or not at all (key 0) gives the same noise; the deprecated
    seed, where the stack still takes it, too, and seed with key is refused (its error type is golden)."""
    def noise(**kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seed= and a missing key warn by design
            tx = optax.add_noise(ETA, GAMMA, **kwargs)
            u, _ = tx.update(GRADS, tx.init(GRADS))
        return jax.device_get(u)

    with_key = noise(key=jax.random.key(0))
    for leaf in GRADS:
        check.identical(f"no key vs key 0/{leaf}", noise()[leaf], with_key[leaf])
    seeded = noise(key=jax.random.key(1))
    check.exact("another key gives other noise", bool(np.any(seeded["kernel"] != with_key["kernel"])), True)
    check.exact("integer key 1 = key 1", bool(np.array_equal(noise(key=1)["kernel"], seeded["kernel"])), True)
    by_seed = check.error_contract("add_noise/seed", lambda: noise(seed=0))
    if not isinstance(by_seed, Exception):
        for leaf in GRADS:
            check.identical(f"seed=0 vs key 0/{leaf}", by_seed[leaf], with_key[leaf])
    check.error_contract("add_noise/seed_and_key", lambda: optax.add_noise(ETA, GAMMA, key=jax.random.key(0), seed=0))
