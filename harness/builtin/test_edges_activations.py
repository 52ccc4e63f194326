"""Every activation's value and gradient at the edges of a float dtype (harness/builtin/edges.py): zeros of both
signs, saturating magnitudes, the dtype's largest finite value, NaN and both infinities; the row-wise ones
(softmax, log_softmax, logsumexp, logmeanexp, standardize, glu) on rows that tie, saturate, hold the dtype's
extremes (4 rows of 4, and the first 3 of them: two lengths that differ), or a NaN or an infinity beside a finite
row. The activations family (test_activations.py) judges the ordinary grid and the
kinks against float64; what a release changes at the dtype's ends (an overflow to inf, a NaN gradient where
it was 0) shows here.

The activations are those the coverage ledger lists (area "activation", less those its no_gradient lines
name: one_hot), not a list of this file's: each elementwise one takes every case of activation_checks' table
(its non-default keyword arguments too), the row-wise ones their call below; one the ledger gains fails here
until it has either. Golden at each value's own scale, and each element's finiteness (finite, NaN, inf, -inf)
as an exact fact; one jitted program an edge and dtype (jax.vjp with a cotangent of ones: the gradient of the
sum, as a step takes it). Raising is a result too: the error type is golden."""

import jax.numpy as jnp
import pytest

from harness.builtin import activation_checks as ac, defaults, edges

pytestmark = pytest.mark.family("edges")

ROW_WISE = {
    "jax.nn.softmax": lambda nn, x: nn.softmax(x),
    "jax.nn.log_softmax": lambda nn, x: nn.log_softmax(x),
    "jax.nn.logsumexp": lambda nn, x: nn.logsumexp(x, axis=-1),
    "jax.nn.logmeanexp": lambda nn, x: nn.logmeanexp(x, axis=-1),
    "jax.nn.standardize": lambda nn, x: nn.standardize(x, axis=-1),  # a tied row: variance 0, epsilon's regime
    "jax.nn.glu": lambda nn, x: nn.glu(x, axis=-1),
}
ELEMENTWISE_ALONE = {"jax.nn.log1mexp": lambda nn, x: nn.log1mexp(x)}  # judged in test_activations_logs.py


def _calls(name: str) -> list[tuple[str, object, object]]:
    """(case, call(nn, x), the inputs by dtype) for the activation."""
    short = name.rsplit(".", 1)[-1]
    rows = [row for row in ac.ROWS if row.name == short]
    if rows:
        return [(row.case, (lambda r: lambda nn, x: r.call(nn, x))(row), edges.elementwise) for row in rows]
    if name in ELEMENTWISE_ALONE:
        return [(short, ELEMENTWISE_ALONE[name], edges.elementwise)]
    if name in ROW_WISE:
        # The rows are as many as their elements (4 of 4): also one row fewer, so the two lengths differ and a
        # release that reduces over the other axis shows.
        return [(f"{short}/rows", ROW_WISE[name], edges.logit_rows),
                (f"{short}/rows_3", ROW_WISE[name], lambda dtype: edges.logit_rows(dtype)[:3]),
                (f"{short}/nonfinite", ROW_WISE[name], edges.nonfinite_rows)]
    return []


@pytest.mark.parametrize("name", defaults.ledger_differentiable("activation"))
def test_activation_gradient_at_edges(check, name):
    """The activation and the gradient of its sum at a dtype's edges, in the dtypes edges.TAKEN_IN names: golden
    at their own scale, their finiteness exact."""
    calls = _calls(name)
    assert calls, (f"{name}: the ledger lists this activation, and neither activation_checks.ROWS nor this "
                   "module's tables call it: add it")
    check.describe_input(f"{name} at zeros, saturation, the dtype's largest finite value, NaN and inf")
    for case, call, inputs in calls:
        for dtype in edges.TAKEN_IN:
            edges.judge(check, f"{case}/{dtype}/edges", (lambda c: lambda q: c(ac.nn(), q))(call),
                        jnp.asarray(inputs(dtype), dtype))
