"""The integer widths of the losses' edges (harness/builtin/loss_edges.py): which edges give a loss integers is
found by tracing them, each width reaches the loss, and the ledger names the widths' check for exactly those
losses (the selection takes a team's check of them from it)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from harness.builtin import defaults, loss_edges as le
from harness.coverage import ledger

WIDTH_TEST = "edges/test_loss_labels_at_each_integer_width"


def test_an_edge_that_builds_integers_is_found_and_one_that_does_not_is_not():
    given = le.Edge("ints", lambda L, x: L.softmax_cross_entropy_with_integer_labels(x, le._ints([0, 1, 2, 3])),
                    lambda dtype: np.zeros((4, 4)))
    floats = le.Edge("floats", lambda L, x: L.l2_loss(x), lambda dtype: np.zeros(3))
    assert le.passes_integers(given) and not le.passes_integers(floats)
    # Read without the stack's library: a loss this stack lacks (optax 0.2.5 has no binary_dice_loss) neither
    # stops the module's collection nor changes which losses take the widths.
    lacking = le.Edge("lacking", lambda L, x: L.a_loss_no_release_has(x, le._ints([0, 1, 2, 3])),
                      lambda dtype: np.zeros((4, 4)))
    assert le.passes_integers(lacking)


def test_each_width_reaches_the_integers_an_edge_builds_and_wraps_as_numpy_casts():
    assert le._ints([1, -1]).dtype == jnp.int32  # the edges' own width outside the block
    for width in le.INTEGER_WIDTHS:
        with le.integers_as(width):
            built = le._ints([4, -1])
        assert built.dtype == jnp.dtype(width)
        assert int(built[1]) == (-1 if width.startswith("int") else np.iinfo(width).max)  # out of range either way
    assert le._ints([1]).dtype == jnp.int32


def test_the_ledger_names_the_widths_check_for_exactly_the_losses_given_integers():
    losses = defaults.ledger_differentiable("loss")
    given = set(le.integer_label_edges(losses))
    named = {name for name, entry in ledger.read().in_scope.items() if WIDTH_TEST in entry.gradient}
    assert given == named, (f"given integers, not named: {sorted(given - named)}; "
                            f"named, given none: {sorted(named - given)}")
    assert "optax.softmax_cross_entropy_with_integer_labels" in given and "optax.l2_loss" not in given


class _LeadingLengths:
    """A stand-in for optax.losses that records the leading length of every array a call hands a loss."""

    def __init__(self):
        self.seen: list[int] = []
        self.made = False  # a loss made by the library (make_fenchel_young_loss), which the call vmaps itself

    def __getattr__(self, name):
        def loss(*args, **kwargs):
            self.seen += [a.shape[0] for a in (*args, *kwargs.values()) if getattr(a, "ndim", 0) >= 1]
            return jnp.zeros(())

        if name.startswith("make_"):
            self.made = True
            return lambda *a, **k: loss
        return loss


@pytest.mark.parametrize("name", defaults.ledger_differentiable("loss"))
def test_every_array_a_first_edge_builds_is_cut_with_its_batch(name):
    """The empty batch and the batch one row shorter (test_loss_gradient_at_edges) cut the input and every array
    its call builds alike: a loss given arrays of different batch lengths would raise for this file's making, not
    the library's (the stand-in records what each call hands its loss)."""
    first = le.EDGES[name][0]
    x = first.x("float32")
    cuts = [0] + ([x.shape[0] - 1] if le.batch_is_as_long_as_another_axis(x) else [])
    for rows in cuts:
        library = _LeadingLengths()
        with le.batch_of(rows):
            jax.eval_shape(lambda q: first.call(library, q), jax.ShapeDtypeStruct(x[:rows].shape, jnp.float32))
        if library.made:  # vmapped over the batch by the call: jax.vmap refuses arrays of different lengths
            continue
        assert library.seen and set(library.seen) == {rows}, (name, rows, library.seen)
