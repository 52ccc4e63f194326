"""Data-parallel contracts: a step that is right on one device must stay right once gradients, batches and
optimizer state are sharded over several.

This module runs in a pytest process of its own with 4 devices (harness.devices: 4 simulated CPU devices
by default, an accelerator's real ones on request), never in the entry's single-device run, so those
results stay as they are. Meshes (4,), (2, 2) and (4, 1) name their axes "data" (the batch) and "model"
(the parameters' output columns); (4,) is data only, with the kernel's rows split over it as a
fully-sharded data-parallel layout would.

Tolerances are the policy's (harness.contract.tolerances): float32 values against a NumPy float64
formula (reference, 64 ulps: a few dozen roundings), a sharded run against the same jitted program on one
device (equivalence, 64 ulps: equal in exact arithmetic, only the order of the cross-device sums
differs), and the baseline's recording (golden, 8 ulps). Shardings and error types compare exactly.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from harness import devices, platforms

pytestmark = pytest.mark.family(devices.FAMILY)

FOUND = jax.devices()
if len(FOUND) < devices.COUNT and jax.default_backend() != platforms.CPU:  # one chip: no layout to make
    pytest.skip(f"{platforms.NOT_HERE}: {devices.too_few(len(FOUND), jax.default_backend())}", allow_module_level=True)
if len(FOUND) < devices.COUNT:  # on the CPU, the simulated devices were not asked for: a collection error
    raise RuntimeError(devices.too_few(len(FOUND), jax.default_backend()))

BATCH, FEATURES, OUTPUTS, K = 8, 4, 6, 3
LR, MOMENTUM, MAX_NORM = 0.05, 0.9, 0.5
# name -> (mesh shape, axis names, kernel spec, bias spec); the batch is always split over "data".
MESHES = {
    "4": ((4,), ("data",), P("data", None), P()),
    "2x2": ((2, 2), ("data", "model"), P(None, "model"), P("model")),
    "4x1": ((4, 1), ("data", "model"), P(None, "model"), P("model")),
}
CANCELLATION = "a parameter minus its update: rounding is relative to the operands, not to a difference near 0"


def _mesh(name):
    shape, axes, _, _ = MESHES[name]
    return jax.sharding.Mesh(np.array(FOUND[:devices.COUNT]).reshape(shape), axes)


def _specs(name):
    _, _, kernel, bias = MESHES[name]
    return {"bias": bias, "kernel": kernel}


def _place(tree, mesh, specs):
    return jax.tree.map(lambda x, s: jax.device_put(x, NamedSharding(mesh, s)), tree, specs)


_RNG = np.random.default_rng(20)
PARAMS64 = {"bias": _RNG.normal(size=OUTPUTS), "kernel": _RNG.normal(size=(FEATURES, OUTPUTS))}
GRADS64 = {"bias": _RNG.normal(size=OUTPUTS) * 3, "kernel": _RNG.normal(size=(FEATURES, OUTPUTS)) * 3}
XS64 = _RNG.normal(size=(K, BATCH, FEATURES))
YS64 = _RNG.normal(size=(K, BATCH, OUTPUTS))


def _f32(tree):
    return jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), tree)


def _f64(tree):  # the float32 inputs, exactly, in float64: the references start from what JAX computes with
    return jax.tree.map(lambda x: np.asarray(x, np.float32).astype(np.float64), tree)


PARAMS, GRADS, XS, YS = _f32(PARAMS64), _f32(GRADS64), _f32(XS64), _f32(YS64)
P64, G64, X64, Y64 = _f64(PARAMS64), _f64(GRADS64), _f64(XS64), _f64(YS64)


def _loss(params, x, y):
    return jnp.mean((x @ params["kernel"] + params["bias"] - y) ** 2)


def _grad64(params, x, y):
    """d/dparams of mean((x W + b - y)^2) over the batch and the outputs, in float64."""
    residual = x @ params["kernel"] + params["bias"] - y
    scale = 2.0 / residual.size
    return {"bias": scale * residual.sum(0), "kernel": scale * x.T @ residual}


def _flat(tree):
    """Every leaf's values in one array, in their own dtype (JAX's flattening order)."""
    return np.concatenate([np.ravel(np.asarray(leaf)) for leaf in jax.tree.leaves(tree)])


def _single(tree):  # the single-device path: every array committed to the first device
    return jax.device_put(tree, FOUND[0])


# -- global-norm clipping --------------------------------------------------------------------------
@jax.jit
def _clip(grads):
    return optax.global_norm(grads), optax.clip_by_global_norm(MAX_NORM).update(grads, optax.EmptyState())[0]


def _sharding_facts(tree, mesh_shape=None) -> dict:
    """Per leaf: the devices holding it, its shard's shape and its partition spec (axes of size 1, which
    split nothing, left out; None where a dimension is not split)."""
    facts = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        sharding = leaf.sharding
        spec = None
        if isinstance(sharding, NamedSharding):
            sizes = dict(sharding.mesh.shape)
            dims = list(sharding.spec) + [None] * (leaf.ndim - len(sharding.spec))
            spec = [_split_by(d, sizes) for d in dims]
        facts[jax.tree_util.keystr(path)] = {"devices": len(sharding.device_set),
                                             "shard_shape": list(sharding.shard_shape(leaf.shape)), "spec": spec}
    return facts


def _split_by(dim, sizes):
    axes = [a for a in (dim if isinstance(dim, tuple) else (dim,)) if a is not None and sizes[a] > 1]
    return None if not axes else axes[0] if len(axes) == 1 else axes


@pytest.mark.parametrize("mesh_name", list(MESHES))
def test_global_norm_clipping(check, mesh_name):
    """clip_by_global_norm of sharded gradients scales every leaf by the norm of all of them (global, not
    per shard), as on one device, and keeps the gradients' shardings."""
    check.describe_input(f"gradients sharded over mesh {mesh_name}, global norm above {MAX_NORM}")
    grads = _place(GRADS, _mesh(mesh_name), _specs(mesh_name))
    norm, clipped = _clip(grads)
    single_norm, single_clipped = _clip(_single(GRADS))
    norm64 = np.sqrt(np.sum(_flat(G64) ** 2))
    check.reference("global norm", norm, norm64)
    check.reference("clipped gradients", _flat(clipped),
                    _flat(jax.tree.map(lambda g: g * MAX_NORM / norm64, G64)))
    check.agree("sharded vs single-device norm", norm, single_norm)
    check.agree("sharded vs single-device clipped gradients", _flat(clipped), _flat(single_clipped))
    check.exact("clipped gradients keep the gradients' shardings", _sharding_facts(clipped), _sharding_facts(grads))
    check.golden(f"{mesh_name}/global_norm", norm)


# -- MultiSteps accumulation of sharded gradients ---------------------------------------------------
def _accumulating():
    return optax.MultiSteps(optax.chain(optax.clip_by_global_norm(MAX_NORM), optax.sgd(LR, momentum=MOMENTUM)),
                            every_k_schedule=K)


@jax.jit
def _train(params, xs, ys):
    """K mini-steps of MultiSteps(clip -> sgd with momentum): the optimizer steps once, at the K-th."""
    tx = _accumulating()
    state, after = tx.init(params), []
    for i in range(K):
        grads = jax.grad(_loss)(params, xs[i], ys[i])
        updates, state = tx.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        after.append(params)
    return after, state


@pytest.mark.parametrize("mesh_name", list(MESHES))
def test_multisteps_sharded(check, mesh_name):
    """MultiSteps accumulating gradients of a batch split over the data axis, under jit, gives the
    single-device result. The two paths are one jitted program given differently placed inputs: equal in
    exact arithmetic, so they are related as equivalence (only the order of cross-device sums differs).
    The float64 reference: one sgd step (momentum starts at 0) on the clipped mean of the K gradients."""
    mesh = _mesh(mesh_name)
    check.describe_input(f"{K} microbatches of {BATCH} split over 'data' of mesh {mesh_name}, params sharded")
    batch = NamedSharding(mesh, P(None, "data"))
    after, state = _train(_place(PARAMS, mesh, _specs(mesh_name)), jax.device_put(XS, batch),
                          jax.device_put(YS, batch))
    single, _ = _train(_single(PARAMS), _single(XS), _single(YS))
    check.agree("sharded vs single-device params after each mini-step", _flat(after), _flat(single))
    for i in range(K - 1):
        check.identical(f"params unchanged after mini-step {i + 1}", _flat(after[i]), _flat(PARAMS))
    check.exact("optimizer steps taken", int(state.gradient_step), 1)
    mean = jax.tree.map(lambda *g: sum(g) / K, *[_grad64(P64, X64[i], Y64[i]) for i in range(K)])
    norm = np.sqrt(np.sum(_flat(mean) ** 2))
    step = jax.tree.map(lambda g: LR * g * min(1.0, MAX_NORM / norm), mean)
    expected = jax.tree.map(lambda p, s: p - s, P64, step)
    scale = jax.tree.map(lambda p, s: np.abs(p) + np.abs(s), P64, step)
    for leaf in ("bias", "kernel"):
        check.reference(f"params[{leaf!r}] after the optimizer step", after[-1][leaf], expected[leaf],
                        scale=scale[leaf], why=CANCELLATION)
    check.golden_tree(f"{mesh_name}/multisteps_params", after[-1])


# -- mean vs sum across the data axis ---------------------------------------------------------------
_REDUCED = {}  # (mesh name, check_vma) -> the jitted shard_map, compiled once each


def _reduced(mesh_name, vma):
    """Per data shard, the gradient of the shard's mean loss, then pmean and psum across "data"."""
    if (mesh_name, vma) not in _REDUCED:
        def local(params, x, y):
            grads = jax.grad(_loss)(params, x, y)
            return jax.lax.pmean(grads, "data"), jax.lax.psum(grads, "data")

        mapped = jax.shard_map(local, mesh=_mesh(mesh_name), in_specs=(P(), P("data"), P("data")),
                               out_specs=(P(), P()), check_vma=vma)
        _REDUCED[mesh_name, vma] = jax.jit(mapped)
    return _REDUCED[mesh_name, vma]


# check_vma=True (shard_map's default) tracks which values vary across "data": the gradient of params
# replicated over it is then already summed over its shards (the transpose of a replicated input), so
# pmean of it is the data axis's size times the batch's mean gradient. check_vma=False gives each
# shard's own gradient, as a hand-written pmap step expects.
ALREADY_SUMMED = {True: "default (check_vma=True)", False: "check_vma=False"}


@pytest.mark.parametrize("vma", list(ALREADY_SUMMED), ids=["check_vma", "no_check_vma"])
@pytest.mark.parametrize("mesh_name", list(MESHES))
def test_mean_vs_sum_across_data(check, mesh_name, vma):
    """shard_map over the data axis, each against its float64 formula: with check_vma=False, pmean of the
    per-shard gradients is the full batch's mean gradient and psum the data axis's size n times it (equal
    shards); by default the gradient of replicated params is already summed over the shards, so pmean
    gives n times the mean and psum n**2 times: a step written for one is off by n under the other."""
    data = MESHES[mesh_name][0][0]
    check.describe_input(f"a batch of {BATCH} split {data} ways over 'data' of mesh {mesh_name}, "
                         f"shard_map {ALREADY_SUMMED[vma]}")
    mean, total = _reduced(mesh_name, vma)(PARAMS, XS[0], YS[0])
    expected = _grad64(P64, X64[0], Y64[0])
    summed = data if vma else 1
    for leaf in ("bias", "kernel"):
        check.reference(f"pmean grads[{leaf!r}]", mean[leaf], summed * expected[leaf])
        check.reference(f"psum grads[{leaf!r}]", total[leaf], summed * data * expected[leaf])
    check.golden_tree(f"{mesh_name}/{'check_vma' if vma else 'no_check_vma'}/pmean", mean)


# -- optimizer state keeps its params' shardings ----------------------------------------------------
def _stateful():
    return optax.MultiSteps(optax.adamw(LR, weight_decay=0.1), every_k_schedule=K)


_INIT, _UPDATE = jax.jit(_stateful().init), jax.jit(_stateful().update)
# How the state is made: eagerly, by a jitted init, and after one jitted update of an eager state.
STATE_PATHS = ("eager_init", "jit_init", "jit_update")
KEEPS = ("eager_init", "jit_update")  # where every parameter-shaped leaf keeps its param's sharding (baseline)


def _state(path, params):
    if path == "eager_init":
        return _stateful().init(params)
    if path == "jit_init":
        return _INIT(params)
    return _UPDATE(params, _stateful().init(params), params)[1]


@pytest.mark.parametrize("path", STATE_PATHS)
@pytest.mark.parametrize("mesh_name", list(MESHES))
def test_state_shardings(check, mesh_name, path):
    """MultiSteps(adamw) state of sharded params: per leaf, the devices holding it, its shard shape and
    partition spec are golden facts (a state that silently becomes replicated, or lands on one device, is
    a memory regression). Eagerly and after a jitted update, every parameter-shaped leaf has its param's
    sharding; a jitted init with no output shardings places it as the baseline recorded."""
    check.describe_input(f"params sharded over mesh {mesh_name}; state from {path.replace('_', ' ')}")
    params = _place(PARAMS, _mesh(mesh_name), _specs(mesh_name))
    facts = _sharding_facts(_state(path, params))
    check.golden_fact(f"{mesh_name}/{path}/state_shardings", facts)
    if path in KEEPS:
        own = _sharding_facts(params)
        like = {k: own[k[k.rindex("["):]] for k in facts if k.startswith((".acc_grads", ".inner_opt_state[0].mu",
                                                                          ".inner_opt_state[0].nu"))}
        check.exact("parameter-shaped state leaves have their param's sharding", {k: facts[k] for k in like}, like)


# -- a batch the data axis cannot split -------------------------------------------------------------
def _placements(mesh_name, x):
    """The three ways a batch reaches a data-parallel step: device_put, jit's in_shardings, shard_map."""
    mesh = _mesh(mesh_name)
    spec = P("data", None)
    mapped = jax.shard_map(lambda v: jax.lax.psum(v.sum(), "data"), mesh=mesh, in_specs=spec, out_specs=P())
    return {
        "device_put": lambda: jax.device_put(x, NamedSharding(mesh, spec)),
        "jit": lambda: jax.jit(jnp.sum, in_shardings=NamedSharding(mesh, spec))(x),
        "shard_map": lambda: jax.jit(mapped)(x),
    }


BAD_BATCHES = {"not_divisible": (BATCH - 3, FEATURES), "no_batch_axis": (FEATURES,)}


@pytest.mark.parametrize("case", list(BAD_BATCHES))
@pytest.mark.parametrize("mesh_name", list(MESHES))
def test_bad_batch(check, mesh_name, case):
    """A batch the data axis does not divide, and one example without its batch axis, given where a batch
    split over "data" is expected: the exception type of each placement is the contract (an error that
    turns into padding, replication or a silent reshape would change the step)."""
    shape = BAD_BATCHES[case]
    check.describe_input(f"an array of shape {shape} split over 'data' ({MESHES[mesh_name][0][0]} ways) of "
                         f"mesh {mesh_name}")
    for how, call in _placements(mesh_name, jnp.ones(shape, jnp.float32)).items():
        result = check.error_contract(f"{mesh_name}/{case}/{how}", call)
        check.exact(f"{how} raises", isinstance(result, Exception), True)
