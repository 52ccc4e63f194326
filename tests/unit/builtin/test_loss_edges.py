"""The integer widths of the losses' edges (harness/builtin/loss_edges.py): which edges give a loss integers is
found by tracing them, each width reaches the loss, and the ledger names the widths' check for exactly those
losses (the selection takes a team's check of them from it)."""

import jax.numpy as jnp
import numpy as np

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
    given = set(le.integer_label_losses(losses))
    named = {name for name, entry in ledger.read().in_scope.items() if WIDTH_TEST in entry.gradient}
    assert given == named, (f"given integers, not named: {sorted(given - named)}; "
                            f"named, given none: {sorted(named - given)}")
    assert "optax.softmax_cross_entropy_with_integer_labels" in given and "optax.l2_loss" not in given
