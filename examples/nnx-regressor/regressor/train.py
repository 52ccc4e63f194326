"""How this project trains: a 4 -> 16 -> 1 MLP regressor, mean squared error, and the optimizer chain
it relies on: a warmup-cosine learning-rate schedule, global-norm clipping and AdamW, with gradients
accumulated over MICROBATCHES mini-steps by optax.MultiSteps, driven through nnx.Optimizer.

    python -m regressor.train      # prints the loss per mini-step
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

LEARNING_RATE = 3e-3  # the schedule's peak
WARMUP_STEPS = 2  # optimizer steps from 0 up to the peak
DECAY_STEPS = 10  # optimizer steps until the schedule reaches END_LEARNING_RATE
END_LEARNING_RATE = 1e-4
CLIP_NORM = 1.0  # global gradient norm
WEIGHT_DECAY = 1e-4
MICROBATCHES = 2  # mini-steps per optimizer step (gradient accumulation)
BATCH = 8  # examples per mini-step


def schedule() -> optax.Schedule:
    return optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=LEARNING_RATE, warmup_steps=WARMUP_STEPS,
                                              decay_steps=DECAY_STEPS, end_value=END_LEARNING_RATE)


def optimizer_chain() -> optax.GradientTransformation:
    inner = optax.chain(optax.clip_by_global_norm(CLIP_NORM), optax.adamw(schedule(), weight_decay=WEIGHT_DECAY))
    return optax.MultiSteps(inner, every_k_schedule=MICROBATCHES)


class Regressor(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(4, 16, rngs=rngs)
        self.out = nnx.Linear(16, 1, rngs=rngs)

    def __call__(self, x):
        return self.out(jnp.tanh(self.hidden(x)))[:, 0]


def loss_fn(model: Regressor, x, y):
    return jnp.mean((model(x) - y) ** 2)


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic regression data from a fixed seed: a smooth target with an interaction term."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = (np.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2] - 0.3 * x[:, 3]).astype(np.float32)
    return x, y


@nnx.jit
def train_step(model: Regressor, optimizer: nnx.Optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss


def train(steps: int, seed: int = 0) -> np.ndarray:
    """The loss of every mini-step over `steps` optimizer steps, from a fresh model."""
    model = Regressor(nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optimizer_chain(), wrt=nnx.Param)
    x, y = data(steps * MICROBATCHES * BATCH, seed)
    losses = [train_step(model, optimizer, x[i:i + BATCH], y[i:i + BATCH]) for i in range(0, len(x), BATCH)]
    return np.asarray(jax.device_get(losses))


if __name__ == "__main__":
    print(train(steps=6))
