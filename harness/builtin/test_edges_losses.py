"""Every loss's value and gradient at the edges of its formula (harness/builtin/loss_edges.py): saturating
logits, ties, zero norms and distances, the dtype's largest finite value, NaN and inf, labels outside the
class range, and the parameter values where the formula changes regime (sigmoid_focal_loss's gamma 0, 0.5,
1.5, 2); an empty batch, and a batch one row shorter where the rows are as many as another axis holds (the
shapes the other checks use are square there); integer labels in every width. A training step takes the gradient there: a release that makes it NaN where it was finite (or the
reverse), or sends a value to exactly 0, changes training whatever the value's scale.

The losses are those the coverage ledger lists (area "loss", less any it says have no gradient), not a list
of this file's: a loss the ledger gains fails here until its edges are written. Each edge is one jitted
program (jax.vjp of the loss with a cotangent of ones: the gradient of its sum, as a step takes it). Judged at
each value's own scale, never an operand's: golden values, and where each value and gradient element is
finite, NaN, inf or -inf as an exact fact (a change there is a change at any tolerance); raising is a result
too (its error type golden: multiclass_sparsemax_loss's custom JVP refuses bfloat16 inputs). No float64 reference: at
these inputs the result (NaN, a clamp, 0) is the implementation's, which is what a release changes; the
ordinary inputs' references are in the other test_losses_*.py modules."""

import jax
import jax.numpy as jnp
import numpy as np
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
    in each dtype the edge is taken in; the first edge also on an empty batch and, where its batch is as long as
    another axis, on one row fewer: golden at their own scale, their finiteness exact."""
    rows = le.EDGES.get(name)
    assert rows, f"{name}: the ledger lists this loss, and harness/builtin/loss_edges.py has no edges for it: add them"
    check.describe_input(f"{name} at {', '.join(e.case for e in rows)}")
    for edge in rows:
        for dtype in edge.dtypes:
            # Raising is a result too (multiclass_sparsemax_loss's custom JVP refuses bfloat16): its type is golden.
            edges.judge(check, f"{name}/{edge.case}/{dtype}", _loss(edge), jnp.asarray(edge.x(dtype), dtype))
    # An empty batch: the table's first edge with its input and every array its call builds cut to 0 rows (a mean
    # over nothing is NaN, a sum 0, a reshape may refuse): what the baseline gives is pinned. (le.batch_of)
    first = rows[0]
    dtype = first.dtypes[0]
    x = first.x(dtype)
    with le.batch_of(0):
        edges.judge(check, f"{name}/empty_batch/{first.case}/{dtype}", _loss(first), jnp.asarray(x[:0], dtype))
    # Where the batch is as long as another axis of the input (4 rows of 4 classes), one row fewer, so the lengths
    # differ: a release that reduces over the wrong one of two equal axes shows only there.
    if le.batch_is_as_long_as_another_axis(x):
        rows_fewer = x.shape[0] - 1
        with le.batch_of(rows_fewer):
            edges.judge(check, f"{name}/batch_{rows_fewer}/{first.case}/{dtype}", _loss(first),
                        jnp.asarray(x[:rows_fewer], dtype))


# The losses some edge of which gives them integers (labels, class ids) -> those edges, found by tracing each
# edge's call (loss_edges.passes_integers), not listed here.
INTEGER_LABEL_EDGES = le.integer_label_edges(defaults.ledger_differentiable("loss"))


def _at_widths(loss, widths):
    """One jitted program: the loss's value and gradient with its integers in each width (nothing else differs)."""
    def at_each(x):
        found = {}
        for width in widths:
            with le.integers_as(width):
                value, pull = jax.vjp(loss, x)
                found[width] = (value, pull(jnp.ones_like(value))[0])
        return found

    return jax.jit(at_each)


def _same(one, other) -> bool:
    """Bit for bit the same value and gradient (NaN where the other has NaN)."""
    return all(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True) for a, b in zip(one, other))


@pytest.mark.parametrize("name", tuple(INTEGER_LABEL_EDGES))
def test_loss_labels_at_each_integer_width(check, name):
    """Each edge that gives the loss integers, with them in every integer width JAX holds without x64 (8, 16 and
    32 bits, signed and unsigned: loss_edges.INTEGER_WIDTHS): the value and gradient golden at their own scale and
    their finiteness exact, as the edges are, and whether each width gives bit for bit what int32 gives as a
    golden fact (a release that mishandles a narrow width changes it). Out-of-range labels wrap as NumPy casts
    them (-1 is 255 in uint8): out of the class range in every width. One jitted program an edge; when a width
    is refused, each width in its own, its error type golden."""
    given = INTEGER_LABEL_EDGES[name]
    check.describe_input(f"{name} at {', '.join(e.case for e in given)}, labels in {', '.join(le.INTEGER_WIDTHS)}")
    for edge in given:
        for dtype in edge.dtypes:
            x = jnp.asarray(edge.x(dtype), dtype)
            try:
                together = _at_widths(_loss(edge), le.INTEGER_WIDTHS)(x)
            except Exception:  # a width refused: each alone below, so each one's outcome is its own
                together = None
            outcomes = {}
            for width in le.INTEGER_WIDTHS:
                key = f"{name}/{edge.case}/{dtype}/labels_{width}"
                if together is not None:
                    edges.judge_computed(check, key, together[width])
                    outcomes[width] = together[width]
                else:
                    with le.integers_as(width):
                        outcomes[width] = check.error_contract(f"{key}/raises", edges.value_and_grad(_loss(edge)), x)
                    edges.judge_outcome(check, key, outcomes[width])
            for width, done in outcomes.items():
                if width != "int32":
                    check.golden_fact(f"{name}/{edge.case}/{dtype}/labels_{width}/as_int32",
                                      not any(isinstance(o, BaseException) for o in (done, outcomes["int32"]))
                                      and _same(done, outcomes["int32"]))
