"""The contract strategies are built once per layout and reused, and draw the same examples as before."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.contract import strategies

DERANDOMIZED = settings(max_examples=40, derandomize=True, database=None, deadline=None,
                        suppress_health_check=list(HealthCheck))


def test_equal_layouts_share_one_strategy():
    layout = {"a": [(3, 5), (5, 3)], "b": {"c": (2, 3, 4), "s": ()}}
    copy = {"a": [(3, 5), (5, 3)], "b": {"c": (2, 3, 4), "s": ()}}
    assert strategies.pytree(layout, max_magnitude=10.0, batch=2) is strategies.pytree(copy, max_magnitude=10.0, batch=2)
    assert strategies.array((2, 3), "float16") is strategies.array([2, 3], "float16")


@pytest.mark.parametrize("other", [
    [(3,), (2,)],  # a list, not a tuple, of the same shapes
    ((2,), (3,)),  # the same shapes in another order
    {"x": (3,), "y": (2,)},  # a dict
])
def test_layouts_that_build_other_trees_get_their_own_strategy(other):
    layout = ((3,), (2,))
    assert strategies.pytree(layout) is not strategies.pytree(other)


@pytest.mark.parametrize("kwargs", [{"dtype": "float64"}, {"max_magnitude": 1.0}, {"batch": 3}])
def test_each_setting_gets_its_own_strategy(kwargs):
    layout = {"w": (2,)}
    assert strategies.pytree(layout) is not strategies.pytree(layout, **kwargs)


def _drawn(make) -> list[str]:
    """What a derandomized property draws, example by example, from the strategy make() returns."""
    seen = []

    @DERANDOMIZED
    @given(template=strategies.template_names(), data=st.data())
    def prop(template, data):
        seen.append(repr(data.draw(make(strategies.TEMPLATES[template]))))

    prop()
    return seen


def test_a_reused_strategy_draws_the_examples_a_new_one_draws():
    reused = _drawn(lambda layout: strategies.pytree(layout, max_magnitude=10.0, batch=2))
    rebuilt = _drawn(lambda layout: strategies._pytree(layout, "float32", 10.0, 2))
    assert len(reused) == 40 and reused == rebuilt


def test_a_leaf_shared_by_examples_cannot_be_written():
    """Two properties drawing from one layout get the same all-zero array: no example may change it."""
    first, second = (_examples(strategies.array((2,), "float32")) for _ in range(2))
    shared = [leaf for leaf in first if any(leaf is other for other in second)]
    assert shared, "no two examples got the same array: nothing to protect"
    with pytest.raises(ValueError, match="read-only"):
        shared[0][0] = 1.0


def _examples(strategy) -> list[np.ndarray]:
    found = []

    @DERANDOMIZED
    @given(strategy)
    def collect(value):
        found.append(value)

    collect()
    return found


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_an_element_is_a_zero_of_either_sign_or_a_normal_value_within_its_bounds(dtype):
    """What every array's elements are: zeros of both signs (about half of them), values of both signs, never a
    magnitude below the dtype's `tiny` (products of such values underflow where XLA flushes subnormals), never
    above the bound."""
    limit, tiny = strategies._LIMITS[dtype], strategies._TINY[dtype]
    drawn = _examples(strategies.floats(dtype))
    assert all(v == 0.0 or tiny <= abs(v) <= limit for v in drawn), [v for v in drawn if 0 < abs(v) < tiny or abs(v) > limit]
    zeros = [v for v in drawn if v == 0.0]
    assert {np.copysign(1.0, z) for z in zeros} == {-1.0, 1.0}
    assert any(v > 0 for v in drawn) and any(v < 0 for v in drawn)
