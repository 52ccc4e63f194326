"""How a loss may be called: each loss with optional parameters called with one more positional argument at a
time, what the call does (silent, a DeprecationWarning that the argument will become keyword-only, or the
exception type) a golden fact. A parameter that turns keyword-only makes a caller's positional call raise
where it warned; one that stops warning, or starts, changes what the caller is told."""

import warnings

import jax.numpy as jnp
import pytest

from harness.builtin import loss_checks as lc

pytestmark = pytest.mark.family("losses")

V, M = jnp.asarray([0.5, -1.0, 2.0]), jnp.asarray([[0.5, -1.0, 2.0], [1.0, 0.0, -1.0]])
ONE_HOT = jnp.asarray([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
CTC = (jnp.zeros((1, 3, 3)), jnp.zeros((1, 3)), jnp.asarray([[1]]), jnp.zeros((1, 1)))
# loss -> (its required arguments, then each optional one in order, at a non-default value)
CALLS = {
    "squared_error": ((V,), (V[::-1],)),
    "l2_loss": ((V,), (V[::-1],)),
    "log_cosh": ((V,), (V[::-1],)),
    "huber_loss": ((V,), (V[::-1], 0.5)),
    "cosine_similarity": ((M, M[::-1]), (0.1, 0, None)),
    "cosine_distance": ((M, M[::-1]), (0.1, 0, None)),
    "softmax_cross_entropy": ((M, ONE_HOT), (-1, None)),
    "softmax_cross_entropy_with_integer_labels": ((M, jnp.asarray([1, 0])), (-1, None)),
    "poly_loss_cross_entropy": ((M, ONE_HOT), (1.0, -1, None)),
    "kl_divergence": ((M, ONE_HOT), (-1, None)),
    "sigmoid_focal_loss": ((V, V > 0), (0.25, 1.0)),
    "ctc_loss": (CTC, (0, -50.0)),
    "ctc_loss_with_forward_probs": (CTC, (0, -50.0)),
}


def _outcome(fn, args) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(*args)
        except Exception as exc:  # the type is the contract
            return type(exc).__name__
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning) and "position" in str(w.message)]
    return "DeprecationWarning: keyword-only soon" if deprecations else "silent"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_positional_arguments(check, name):
    """The loss called with its required arguments, then with each optional one added positionally."""
    required, optional = CALLS[name]
    fn = lc.loss(name)
    outcomes = [_outcome(fn, (*required, *optional[:k])) for k in range(len(optional) + 1)]
    check.golden_fact(f"calls/{name}/positional", outcomes)
    check.exact("the required arguments alone are silent", outcomes[0], "silent")
