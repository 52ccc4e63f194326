"""Every loss's value and gradient at the edges of its formula (harness/builtin/loss_edges.py): saturating
logits, ties, zero norms and distances, the dtype's largest finite value, NaN and inf, labels outside the
class range, and the parameter values where the formula changes regime (sigmoid_focal_loss's gamma 0, 0.5,
1.5, 2). A training step takes the gradient there: a release that makes it NaN where it was finite (or the
reverse), or sends a value to exactly 0, changes training whatever the value's scale.

The losses are those the coverage ledger lists (area "loss", less any it says have no gradient), not a list
of this file's: a loss the ledger gains fails here until its edges are written. Each edge is one jitted
program (jax.vjp of the loss with a cotangent of ones: the gradient of its sum, as a step takes it). Judged at
each value's own scale, never an operand's: golden values, and where each value and gradient element is
finite, NaN, inf or -inf as an exact fact (a change there is a change at any tolerance); raising is a result
too (its error type golden: multiclass_sparsemax_loss's custom JVP refuses bfloat16 inputs). No float64 reference: at
these inputs the result (NaN, a clamp, 0) is the implementation's, which is what a release changes; the
ordinary inputs' references are in the other test_losses_*.py modules."""

import jax.numpy as jnp
import pytest

from harness.builtin import defaults, edges, loss_checks as lc, loss_edges as le

pytestmark = pytest.mark.family("edges")


def _loss(edge):
    """The edge's loss of x (a tuple's first element: ctc_loss_with_forward_probs')."""
    def loss(x):
        value = edge.call(lc.module(), x)
        return value[0] if isinstance(value, tuple) else value

    return loss


@pytest.mark.parametrize("name", defaults.ledger_differentiable("loss"))
def test_loss_gradient_at_edges(check, name):
    """The loss and the gradient of its sum w.r.t. its first float input, at each edge the table holds for it,
    in each dtype the edge is taken in: golden at their own scale, their finiteness exact."""
    rows = le.EDGES.get(name)
    assert rows, f"{name}: the ledger lists this loss, and harness/builtin/loss_edges.py has no edges for it: add them"
    check.describe_input(f"{name} at {', '.join(e.case for e in rows)}")
    for edge in rows:
        for dtype in edge.dtypes:
            # Raising is a result too (multiclass_sparsemax_loss's custom JVP refuses bfloat16): its type is golden.
            edges.judge(check, f"{name}/{edge.case}/{dtype}", _loss(edge), jnp.asarray(edge.x(dtype), dtype))
