"""optax.ctc_loss and ctc_loss_with_forward_probs against a float64 forward recursion written from Graves et
al. 2006, which the docstring cites (harness/builtin/reference/losses.py `ctc`): -log p(labels | logits)
summed over every alignment of the unpadded frames, with right-padded labels and padded frames, a repeated
label (which needs a blank between its copies), another blank_id; an alignment that cannot exist (more
labels than frames) gives about -log_epsilon per missing path step (golden, at two log_epsilons); the
forward log-probabilities golden; the two functions' losses identical."""

import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import loss_checks as lc
from harness.builtin.reference import losses as ref

pytestmark = pytest.mark.family("losses")

B, T, K = 3, 6, 4
RNG_LOGITS = np.sin(np.arange(B * T * K, dtype=np.float64) * 1.7).reshape(B, T, K) * 3.0
LOGIT_PADDINGS = np.array([[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]], np.float64)
LABELS = np.array([[1, 2, 2], [3, 1, 0], [2, 3, 1]])
LABEL_PADDINGS = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 1]], np.float64)
WHY = "a log-sum over alignments of sums of per-frame log-probabilities, each the size of the logits"


def _inputs(blank):
    x = jnp.asarray(RNG_LOGITS, jnp.float32)
    labels = np.where(LABELS == blank, (LABELS + 1) % K, LABELS)  # no label is the blank
    return x, jnp.asarray(LOGIT_PADDINGS, jnp.float32), jnp.asarray(labels), jnp.asarray(LABEL_PADDINGS, jnp.float32)


@pytest.mark.parametrize("blank_id", [0, 2], ids=["blank0", "blank2"])
def test_ctc_loss(check, blank_id):
    """Three sequences (a repeated label, padded frames, padded labels), blank 0 (the default) and 2: the
    loss against the float64 forward recursion and golden; ctc_loss_with_forward_probs gives the same loss,
    its forward log-probabilities golden."""
    x, lp, y, yp = _inputs(blank_id)
    L = lc.module()
    loss = L.ctc_loss(x, lp, y, yp) if blank_id == 0 else L.ctc_loss(x, lp, y, yp, blank_id=blank_id)
    expected = ref.ctc(lc.f64(x), LOGIT_PADDINGS, np.asarray(y), LABEL_PADDINGS, blank_id)
    scale = T * (np.max(np.abs(RNG_LOGITS)) + np.log(K))
    lc.judge(check, f"ctc/{blank_id}", loss, expected, scale=scale, why=WHY)
    with_probs, alpha_blank, alpha_label = L.ctc_loss_with_forward_probs(x, lp, y, yp, blank_id=blank_id)
    check.identical("ctc_loss_with_forward_probs's loss is ctc_loss's", np.asarray(with_probs), np.asarray(loss))
    check.golden(f"ctc/{blank_id}/forward_probs/loss", with_probs)
    check.golden(f"ctc/{blank_id}/forward_probs/blank", alpha_blank)
    check.golden(f"ctc/{blank_id}/forward_probs/label", alpha_label)


@pytest.mark.parametrize("log_epsilon", [-1e5, -50.0], ids=["default", "-50"])
def test_ctc_impossible_alignment(check, log_epsilon):
    """Two frames cannot emit labels 1, 1 (three steps: 1, blank, 1): log(0) is approximated by log_epsilon,
    so the loss is finite and grows with -log_epsilon (golden, both functions); a possible row beside it
    keeps its float64 value."""
    x = jnp.asarray(RNG_LOGITS[:2, :2], jnp.float32)
    lp = jnp.zeros((2, 2), jnp.float32)
    y = jnp.asarray([[1, 1], [1, 2]])
    yp = jnp.zeros((2, 2), jnp.float32)
    L = lc.module()
    kw = {} if log_epsilon == -1e5 else {"log_epsilon": log_epsilon}
    loss = L.ctc_loss(x, lp, y, yp, **kw)
    check.golden(f"ctc_impossible/{log_epsilon}", loss)
    expected = ref.ctc(lc.f64(x)[1:], np.zeros((1, 2)), np.asarray(y)[1:], np.zeros((1, 2)))
    lc.judge(check, f"ctc_impossible/{log_epsilon}/possible_row", loss[1:], expected,
             scale=2 * (np.max(np.abs(RNG_LOGITS)) + np.log(K)), why=WHY)
    check.bound("the impossible row's loss is at least -log_epsilon / 2", np.float32(-log_epsilon / 2),
                np.asarray(loss)[0])
    check.golden(f"ctc_impossible/{log_epsilon}/forward_probs", L.ctc_loss_with_forward_probs(x, lp, y, yp, **kw)[0])
