"""The small quadratic problem the step-size and Schedule-Free optimizers are run on: loss =
sum(0.5 * CURV * y**2 - CURV * TARGET * y) over a two-leaf tree, whose minimum is TARGET, from PARAMS0."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

F32 = np.float32
CURV = {"b": np.array([0.5, 1.0, 3.0], F32), "w": np.array([[2.0, 0.8], [1.5, 2.5]], F32)}
TARGET = {"b": np.array([1.0, -0.5, 0.25], F32), "w": np.array([[-1.0, 0.5], [2.0, 0.0]], F32)}
PARAMS0 = {"b": np.array([0.2, 0.4, -0.6], F32), "w": np.array([[0.5, -0.3], [0.1, 0.9]], F32)}
TRAJECTORY_WHY = ("a trajectory: each step starts from params that carry the stack's rounding of the steps before, "
                  "so a recompiled kernel moves every later value by ulps of the params, not of the value")


def loss(y):
    return sum(jnp.sum(0.5 * CURV[k] * y[k] ** 2 - CURV[k] * TARGET[k] * y[k]) for k in y)


def vec(tree) -> np.ndarray:
    """The tree's leaves as one vector, "b" then "w" (as the references order them)."""
    return np.concatenate([np.asarray(tree["b"]).ravel(), np.asarray(tree["w"]).ravel()])
