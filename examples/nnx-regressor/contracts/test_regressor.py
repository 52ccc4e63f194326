"""What this project's training relies on: the loss trajectory of its own training loop, and its
learning-rate schedule against the formula it is meant to follow."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from regressor import train

pytestmark = pytest.mark.family("regressor")

STEPS = 6  # optimizer steps (MICROBATCHES mini-steps each)


def test_loss_trajectory(check):
    """Six optimizer steps of the project's training loop from a fixed seed: the loss of every mini-step is golden."""
    losses = train.train(steps=STEPS)
    check.exact("one loss per mini-step", losses.shape, (STEPS * train.MICROBATCHES,))
    for ministep, loss in enumerate(losses):
        check.golden(f"loss/ministep{ministep}", loss)
    check.series("loss per mini-step", np.arange(len(losses)), losses)


def _intended_learning_rate(step: int) -> float:
    """The schedule this project means, in float64: linear warmup from 0, then cosine to the end value."""
    if step < train.WARMUP_STEPS:
        return train.LEARNING_RATE * step / train.WARMUP_STEPS
    t = min(step - train.WARMUP_STEPS, train.DECAY_STEPS - train.WARMUP_STEPS)
    cosine = 0.5 * (1 + np.cos(np.pi * t / (train.DECAY_STEPS - train.WARMUP_STEPS)))
    return train.END_LEARNING_RATE + (train.LEARNING_RATE - train.END_LEARNING_RATE) * cosine


@given(step=st.integers(0, 3 * train.DECAY_STEPS))
def test_schedule_follows_its_formula(check, step):
    """At every optimizer step, the schedule gives the learning rate of its float64 formula."""
    check.reference("learning rate", train.schedule()(step), _intended_learning_rate(step))
