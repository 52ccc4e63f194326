"""The training a team checkpoints, and the Orbax calls it makes: shared by test_checkpoints.py.

A Flax NNX 3 -> 8 -> 2 MLP in float32 or bfloat16 parameters (computing in that dtype), trained through
``nnx.Optimizer`` with ``MultiSteps(chain(clip_by_global_norm, inject_hyperparams(adamw)(schedule)), K)``,
stopped after SAVE_AT microbatches (the middle of an accumulation cycle: the accumulator holds gradients),
saved with Orbax's ``StandardCheckpointer`` (model and optimizer state, as the Flax NNX guide saves
``nnx.state``), restored into a freshly built model and optimizer, and continued to TOTAL microbatches.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import shutil
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from harness.builtin import nnx_compat as compat
from harness.contract import encoding, environment, restore_diff, trees

K = 3  # microbatches per optimizer step
SAVE_AT = 2 * K + 1  # saved after this many microbatches: mid-cycle, one gradient in the accumulator
TOTAL = 4 * K  # microbatches trained in all (the continuation: TOTAL - SAVE_AT)
MICRO = 4
DTYPES = ("float32", "bfloat16")
CHECKPOINT, CONTINUATION, WRITER = "checkpoint", "continuation.json", "writer.json"


PEAK_LR = 0.1
ADAM_STEP_WHY = ("each adamw step moves a coordinate by up to the learning rate (adam's normalised step), and a "
                 "gradient rounded otherwise (another stack's kernels) changes that step: ulps at |param| + the "
                 "peak learning rate times the optimizer steps taken")


def scale(key: str, value, steps: int):
    """The cancellation scale of a continuation value: parameters moved by `steps` adamw steps; None else."""
    return np.abs(np.asarray(value, np.float64)) + steps * PEAK_LR if key.startswith("params/") else None


def _data():
    rng = np.random.default_rng(20260211)
    x = (rng.standard_normal((TOTAL * MICRO, 3)) * np.array([1.0, 0.5, 2.0])).astype(np.float32)
    y = (x @ np.array([0.8, -1.5, 0.4]) + 0.3 * rng.standard_normal(len(x)) > 0).astype(np.int32)
    return x, y


X, Y = _data()


class MLP(nnx.Module):
    def __init__(self, dtype, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(3, 8, dtype=dtype, param_dtype=dtype, rngs=rngs)
        self.out = nnx.Linear(8, 2, dtype=dtype, param_dtype=dtype, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


@functools.cache
def _tx():
    """One optimizer object (nnx.jit keys its cache on it); built on first use, so an Optax API change
    fails the checks, not the collection."""
    schedule = optax.warmup_cosine_decay_schedule(init_value=0.01, peak_value=PEAK_LR, warmup_steps=2,
                                                  decay_steps=TOTAL // K, end_value=0.01)
    inner = optax.chain(optax.clip_by_global_norm(0.5),
                        optax.inject_hyperparams(optax.adamw)(learning_rate=schedule, weight_decay=0.1))
    return optax.MultiSteps(inner, every_k_schedule=K)


def build(dtype: str, seed: int = 0):
    """A fresh model and optimizer, as a training script builds them before it restores, their arrays
    placed on the device as a restore places them: the training step then compiles once per dtype, not
    again for restored state (jit keys on whether an array is committed to its device; values unchanged)."""
    model = MLP(jnp.dtype(dtype), nnx.Rngs(params=seed))
    optimizer = compat.make_optimizer(model, _tx(), wrt=nnx.Param)
    device = jax.devices()[0]
    for made in (model, optimizer):
        nnx.update(made, jax.device_put(nnx.state(made), device))
    return model, optimizer


@nnx.jit
def _step(model, optimizer, x, y):
    def loss_fn(m):
        return optax.softmax_cross_entropy_with_integer_labels(m(x), y).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    compat.apply_grads(optimizer, model, grads)
    return loss


def train(model, optimizer, microbatches) -> np.ndarray:
    dtype = model.hidden.param_dtype
    return np.asarray(jax.device_get([_step(model, optimizer, jnp.asarray(X[i * MICRO:(i + 1) * MICRO], dtype),
                                            Y[i * MICRO:(i + 1) * MICRO]) for i in microbatches]))


def state(model, optimizer) -> dict:
    return {"model": nnx.state(model), "optimizer": nnx.state(optimizer)}


def named(tree) -> dict[str, np.ndarray]:
    """Leaves by path ('model/hidden/kernel/value', ...), as NumPy arrays."""
    return {name: np.asarray(leaf) for name, leaf in trees.leaves(compat.pure(tree)).items()}


def target_specs(tree) -> dict[str, restore_diff.LeafSpec]:
    """What this stack expects each leaf to be: the restore target's dtype and shape."""
    return {name: restore_diff.LeafSpec(str(leaf.dtype), tuple(np.shape(leaf)))
            for name, leaf in trees.leaves(compat.pure(tree)).items()}


def _values(tree) -> dict[str, restore_diff.LeafSpec]:
    """Checkpoint metadata by leaf path; NNX saves a Variable as {"value": array}: named as its Variable."""
    return {name.removesuffix("/value"): restore_diff.LeafSpec(str(np.dtype(leaf.dtype)), tuple(leaf.shape))
            for name, leaf in trees.leaves(tree, is_leaf=lambda x: hasattr(x, "shape") and hasattr(x, "dtype")).items()}


def written_specs(path: Path) -> dict[str, restore_diff.LeafSpec]:
    """What the checkpoint holds, from its metadata alone (no restore): dtype and shape per leaf."""
    import orbax.checkpoint as ocp

    with ocp.StandardCheckpointer() as checkpointer:
        found = checkpointer.metadata(Path(path).absolute())
    tree = getattr(getattr(found, "item_metadata", found), "tree", found)  # StepMetadata, or the tree itself
    return _values(tree)


def save(path: Path, tree) -> None:
    import orbax.checkpoint as ocp

    with ocp.StandardCheckpointer() as checkpointer:
        checkpointer.save(Path(path).absolute(), tree)
        checkpointer.wait_until_finished()


def restore(path: Path, model, optimizer) -> None:
    """Restore into the given fresh objects with their own state as target: what a team's script does
    (Orbax casts a leaf of another dtype to the target's without a word)."""
    import orbax.checkpoint as ocp

    target = jax.tree.map(ocp.utils.to_shape_dtype_struct, state(model, optimizer))
    with ocp.StandardCheckpointer() as checkpointer:
        restored = checkpointer.restore(Path(path).absolute(), target)
    nnx.update(model, restored["model"])
    nnx.update(optimizer, restored["optimizer"])


def continuation(losses: np.ndarray, model, optimizer) -> dict[str, np.ndarray]:
    """What a resumed run is judged by: the loss of every continued microbatch, the final parameters and
    the optimizer's counters."""
    values = {f"loss/microbatch{SAVE_AT + i}": np.asarray(loss) for i, loss in enumerate(losses)}
    values.update({f"params/{k}": v for k, v in named(nnx.state(model, nnx.Param)).items()})
    opt = compat.pure(optimizer.opt_state)
    values["counters"] = np.array([int(opt.mini_step), int(opt.gradient_step)], np.int64)
    return values


def writer_text(folder: Path) -> str:
    """Who wrote a checkpoint folder ("baseline (jax 0.11.2, optax 0.2.6, ...)"), from its writer.json."""
    try:
        doc = json.loads((folder / WRITER).read_text())
    except (OSError, ValueError):
        return f"the writer of {folder}"
    return f"{doc['entry']} ({', '.join(f'{k} {v}' for k, v in doc['versions'].items())})"


def _versions() -> dict[str, str | None]:
    versions = environment.versions()
    return {k: versions.get(k) for k in ("jax", "jaxlib", "optax", "flax", "orbax_checkpoint")}


def this_stack(entry: str) -> str:
    return f"{entry} ({', '.join(f'{k} {v}' for k, v in _versions().items())})"


@dataclasses.dataclass(frozen=True)
class Written:
    """One training run saved and resumed (write): the state as saved, as restored into fresh objects, and
    the run continued from it. The checks share it: the family trains once per dtype."""

    folder: Path
    saved: dict[str, np.ndarray]
    restored: dict[str, np.ndarray]
    continued: dict[str, np.ndarray]


def write(folder: Path, dtype: str, entry: str) -> Written:
    """Train, save mid-cycle into folder/checkpoint, restore into fresh objects, continue; write what was
    continued (continuation.json, exact values) and who wrote it."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    model, optimizer = build(dtype)
    train(model, optimizer, range(SAVE_AT))
    saved = named(state(model, optimizer))
    save(folder / CHECKPOINT, state(model, optimizer))
    model, optimizer = build(dtype, seed=100)
    restore(folder / CHECKPOINT, model, optimizer)
    restored = named(state(model, optimizer))
    values = continuation(train(model, optimizer, range(SAVE_AT, TOTAL)), model, optimizer)
    doc = {"entry": entry, "dtype": dtype, "versions": _versions()}
    (folder / WRITER).write_text(json.dumps(doc, indent=1) + "\n")
    (folder / CONTINUATION).write_text(json.dumps({k: encoding.encode_array(v) for k, v in values.items()}) + "\n")
    return Written(folder, saved, restored, values)


def read_continuation(folder: Path) -> dict[str, np.ndarray]:
    doc = json.loads((folder / CONTINUATION).read_text())
    return {k: encoding.decode_array(v) for k, v in doc.items()}
