"""--harness-phases: a contract run says where its time went (start-up, collection, JAX compiling,
Hypothesis, the contract bodies, report writing).

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_phases.py."""

import pytest

from harness.contract import phases


def test_nested_compile_events_are_counted_once():
    # A trace (0-10) with a nested trace inside it (2-3), another (12-14) cut at the end of the phase (13).
    assert phases._union([(12.0, 14.0), (0.0, 10.0), (2.0, 3.0)], 0.0, 13.0) == pytest.approx(11.0)
    assert phases._union([(0.0, 1.0)], 5.0, 6.0) == 0.0
