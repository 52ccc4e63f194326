"""End-to-end training-step contracts: a Flax NNX model trained the way a real job trains it.

A 3 -> 5 -> 2 MLP with dropout (named RNG streams ``params`` and ``dropout``), a mean softmax
cross-entropy, NumPy data from a fixed seed, and
``MultiSteps(chain(clip_by_global_norm, adamw(warmup_cosine_decay, mask=no decay on biases)), k=2)``
driven through ``nnx.Optimizer`` by one jitted step. Flax API differences go through nnx_compat.py.
Checkpoints use orbax-checkpoint (installed with flax in every matrix entry).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

# A missing Flax NNX skips this module (reported as "check missing"), never interrupts the suite.
nnx = pytest.importorskip("flax.nnx")
from harness.builtin import nnx_compat as compat  # noqa: E402

from harness.contract import trees  # noqa: E402

pytestmark = pytest.mark.family("training")

K = 2  # microbatches per optimizer step
STEPS = 6  # optimizer steps
MICRO = 4  # examples per microbatch
PARAMS_SEED, DROPOUT_SEED = 0, 1
DROPOUT_RATE = 0.25


def _data():
    """Deterministic synthetic classification data: features of unequal scale, a noisy linear rule."""
    rng = np.random.default_rng(20240611)
    scale = np.array([1.0, 0.5, 2.0])
    x = (rng.standard_normal((K * STEPS * MICRO + 16, 3)) * scale).astype(np.float32)
    noise = 0.3 * rng.standard_normal(len(x))
    y = (x @ np.array([0.8, -1.5, 0.4]) + noise > 0).astype(np.int32)
    n = K * STEPS * MICRO
    return x[:n], y[:n], x[n:], y[n:]


X_TRAIN, Y_TRAIN, X_EVAL, Y_EVAL = _data()


def _microbatch(i):
    return X_TRAIN[i * MICRO:(i + 1) * MICRO], Y_TRAIN[i * MICRO:(i + 1) * MICRO]


def _full_batch(step):
    """The K microbatches of one optimizer step, as one batch."""
    return X_TRAIN[step * K * MICRO:(step + 1) * K * MICRO], Y_TRAIN[step * K * MICRO:(step + 1) * K * MICRO]


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(3, 5, rngs=rngs)
        self.dropout = nnx.Dropout(DROPOUT_RATE, rngs=rngs)
        self.out = nnx.Linear(5, 2, rngs=rngs)

    def __call__(self, x):
        return self.out(self.dropout(jax.nn.relu(self.hidden(x))))


def _decay_mask(params):
    """Weight decay on kernels, none on biases (by name, as training code usually writes it)."""
    return jax.tree_util.tree_map_with_path(lambda path, _: "bias" not in jax.tree_util.keystr(path), params)


PEAK_LR = 0.1
ADAM_STEP_WHY = ("each adamw step moves a coordinate by up to the learning rate (adam's normalised step), and "
                 "gradients that cancel, summed in another order (microbatches vs full batch), change that step: "
                 "ulps at |param| + peak learning rate")


def _make_tx(accumulate: bool):
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.01, peak_value=PEAK_LR, warmup_steps=2, decay_steps=STEPS, end_value=0.01)
    inner = optax.chain(optax.clip_by_global_norm(0.5),
                        optax.adamw(schedule, weight_decay=0.1, mask=_decay_mask))
    return optax.MultiSteps(inner, every_k_schedule=K) if accumulate else inner


@functools.cache
def _tx(accumulate: bool):
    """One optimizer object per configuration: nnx.jit keys its cache on the static parts (tx
    included). Built on first use, so an Optax API change fails the checks, not the collection."""
    return _make_tx(accumulate)


def _build(params_seed=PARAMS_SEED, dropout_seed=DROPOUT_SEED, *, accumulate=True, training=True):
    model = MLP(nnx.Rngs(params=params_seed, dropout=dropout_seed))
    compat.set_training(model, training)
    return model, compat.make_optimizer(model, _tx(accumulate), wrt=nnx.Param)


def _loss(logits, labels):
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


@nnx.jit
def _train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(lambda m: _loss(m(x), y))(model)
    compat.apply_grads(optimizer, model, grads)
    return loss


@nnx.jit
def _eval_loss(model, x, y):
    return _loss(model(x), y)


def _train(model, optimizer, microbatches):
    return np.asarray(jax.device_get([_train_step(model, optimizer, *_microbatch(i)) for i in microbatches]))


def _named(tree) -> dict:
    """Leaves by path ('hidden/kernel', 'opt_state/acc_grads/out/bias', ...), as NumPy arrays."""
    out = {}
    for name, leaf in trees.leaves(compat.pure(tree)).items():
        if not hasattr(leaf, "dtype"):
            leaf = np.asarray(leaf)
        elif jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        out[name] = np.asarray(leaf)
    return out


def _layout(tree) -> list:
    """[path, Variable type, dtype, shape] per leaf: what a checkpoint's structure depends on."""
    rows = []
    for name, var in trees.leaves(tree, is_leaf=lambda x: isinstance(x, nnx.Variable)).items():
        leaf = compat.read(var) if isinstance(var, nnx.Variable) else var
        rows.append([name, type(var).__name__, str(leaf.dtype), list(np.shape(leaf))])
    return rows


def _counters(optimizer) -> dict:
    """nnx.Optimizer.step, the Adam count, and MultiSteps' mini_step/gradient_step when present."""
    state = compat.pure(optimizer.opt_state)
    adam = [s for s in jax.tree.leaves(state, is_leaf=lambda s: hasattr(s, "nu")) if hasattr(s, "nu")][0]
    counters = {"optimizer.step": int(compat.read(optimizer.step)), "adam count": int(adam.count)}
    if hasattr(state, "mini_step"):
        counters.update(mini_step=int(state.mini_step), gradient_step=int(state.gradient_step))
    return counters


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint32) if a.dtype == np.float32 else a


def _identical(check, label, observed, expected):
    """Equal values (magnitudes in the report) and equal bits (-0.0 vs 0.0, NaN payloads)."""
    check.exact(label, observed, expected)
    check.exact(f"{label} (bits)", _bits(observed), _bits(expected))


def test_api_forms(check):
    """The Flax API forms the training step goes through: a change is its own outcome, not a crash."""
    for name, form in compat.api_facts().items():
        check.golden_fact(f"api/{name}", form)
    model, optimizer = _build()
    check.exact("the optimizer instance uses the class's update form", compat.update_style(optimizer),
                compat.api_facts()["optimizer_update_signature"])
    check.golden_fact("layout/model_state", _layout(nnx.state(model)))
    check.golden_fact("layout/optimizer_state", _layout(nnx.state(optimizer)))
    mask = {k: bool(v) for k, v in _named(_decay_mask(compat.pure(nnx.state(model, nnx.Param)))).items()}
    check.exact("decay mask: kernels only", mask, {"hidden/bias": False, "hidden/kernel": True,
                                                   "out/bias": False, "out/kernel": True})


@pytest.mark.parametrize("accumulate", [True, False], ids=["multisteps", "full_batch"])
def test_training_trajectory(check, accumulate):
    """Train mode, dropout on: loss per optimizer step, eval loss, parameter norms and counters are golden.

    multisteps: K microbatches of MICRO examples per optimizer step; full_batch: one batch of K * MICRO.
    """
    variant = "multisteps" if accumulate else "full_batch"
    model, optimizer = _build(accumulate=accumulate, training=True)
    if accumulate:
        losses = _train(model, optimizer, range(K * STEPS)).reshape(STEPS, K)
    else:
        losses = np.asarray(jax.device_get([_train_step(model, optimizer, *_full_batch(s)) for s in range(STEPS)]))
    for step in range(STEPS):
        check.golden(f"{variant}/loss/step{step}", losses[step])
    check.series("loss per optimizer step", np.arange(STEPS), np.asarray(losses).reshape(STEPS, -1).mean(axis=1))
    check.exact("training losses finite", bool(np.isfinite(losses).all()), True)
    rng_count = int(compat.read(model.dropout.rngs.count))
    calls = K * STEPS if accumulate else STEPS
    check.exact("dropout stream advanced once per update call", rng_count, calls)

    compat.set_training(model, False)
    eval_loss = np.asarray(_eval_loss(model, X_EVAL, Y_EVAL))
    check.golden(f"{variant}/eval/loss", eval_loss)
    check.exact("eval loss finite", bool(np.isfinite(eval_loss)), True)
    check.exact("eval mode is deterministic", np.asarray(_eval_loss(model, X_EVAL, Y_EVAL)), eval_loss)
    check.exact("eval mode draws no dropout keys", int(compat.read(model.dropout.rngs.count)), rng_count)

    params = _named(nnx.state(model, nnx.Param))
    for path, value in params.items():
        norm = np.linalg.norm(value).astype(np.float32)
        # Each coordinate is its initial value plus STEPS updates of either sign, each at most the
        # learning rate (adam's normalised step): one step rounded otherwise moves the result by ulps
        # of that sum of magnitudes, not of a norm the updates may have shrunk.
        check.golden(f"{variant}/params/{path}/norm", norm, scale=float(norm) + np.sqrt(value.size) * STEPS * PEAK_LR,
                     why=ADAM_STEP_WHY)
    check.exact("params finite", all(bool(np.isfinite(v).all()) for v in params.values()), True)

    counters = _counters(optimizer)
    # nnx.Optimizer.step counts update calls (microbatches); MultiSteps and Adam count optimizer steps.
    expected = {"optimizer.step": calls, "adam count": STEPS}
    if accumulate:
        expected.update({"mini_step": 0, "gradient_step": STEPS})
    check.exact("counters", counters, expected)
    check.golden_exact(f"{variant}/counters", np.array(list(counters.values()), np.int64))


def test_microbatches_equal_full_batch(check):
    """Dropout off: K microbatches through MultiSteps == one step on their concatenation, step for step."""
    model_k, opt_k = _build(accumulate=True, training=False)
    model_1, opt_1 = _build(accumulate=False, training=False)
    for step in range(STEPS):
        micro = _train(model_k, opt_k, range(step * K, (step + 1) * K))
        full = np.asarray(_train_step(model_1, opt_1, *_full_batch(step)))
        check.agree(f"step {step}: loss (full batch vs mean of microbatches)", full, micro.mean(dtype=np.float32))
        accumulated, direct = _named(nnx.state(model_k, nnx.Param)), _named(nnx.state(model_1, nnx.Param))
        for path in direct:
            check.agree(f"step {step}: {path}", accumulated[path], direct[path],
                        scale=np.abs(direct[path]) + PEAK_LR, why=ADAM_STEP_WHY)
    check.exact("optimizer steps: MultiSteps gradient_step == full-batch update calls",
                _counters(opt_k)["gradient_step"], int(compat.read(opt_1.step)))


def test_checkpoint_mid_accumulation(check, tmp_path):
    """Save model + optimizer state after an odd number of microbatches, restore into fresh objects,
    continue: the trajectory is bitwise the uninterrupted one."""
    import orbax.checkpoint as ocp  # here, so an orbax problem fails this check only

    total, cut = K * STEPS, 2 * K + 1
    model, optimizer = _build()
    reference_losses = _train(model, optimizer, range(total))
    reference = {**_named(nnx.state(model)), **_named(nnx.state(optimizer))}

    model, optimizer = _build()
    first = _train(model, optimizer, range(cut))
    check.exact("saved mid-cycle (mini_step)", _counters(optimizer)["mini_step"], cut % K)
    acc = jax.tree.leaves(compat.pure(optimizer.opt_state).acc_grads)
    check.exact("accumulator is not empty", any(bool(np.any(np.asarray(a) != 0)) for a in acc), True)
    saved = {"model": nnx.state(model), "optimizer": nnx.state(optimizer)}
    saved_named = {k: _named(v) for k, v in saved.items()}

    checkpointer = ocp.StandardCheckpointer()
    try:
        checkpointer.save(tmp_path / "ckpt", saved)
        checkpointer.wait_until_finished()
        del model, optimizer, saved
        model, optimizer = _build(params_seed=100, dropout_seed=101)  # fresh, and different
        target = {"model": nnx.state(model), "optimizer": nnx.state(optimizer)}
        restored = checkpointer.restore(tmp_path / "ckpt", jax.tree.map(ocp.utils.to_shape_dtype_struct, target))
    finally:
        checkpointer.close()
    nnx.update(model, restored["model"])
    nnx.update(optimizer, restored["optimizer"])
    for part, obj in (("model", model), ("optimizer", optimizer)):
        now = _named(nnx.state(obj))
        check.exact(f"restored {part} layout", sorted(now), sorted(saved_named[part]))
        for path, value in saved_named[part].items():
            _identical(check, f"restored {part}: {path}", now[path], value)

    rest = _train(model, optimizer, range(cut, total))
    _identical(check, "losses (saved, restored, continued)", np.concatenate([first, rest]), reference_losses)
    final = {**_named(nnx.state(model)), **_named(nnx.state(optimizer))}
    for path, value in reference.items():
        _identical(check, f"final state: {path}", final[path], value)
