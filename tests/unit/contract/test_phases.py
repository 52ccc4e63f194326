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


class _Item:
    def __init__(self, path):
        self.path = path


def _checked(table: phases.Phases, path: str, programs: int) -> None:
    """One check of the module at `path` through the plugin's protocol wrapper, making `programs` JAX programs."""
    run = table.pytest_runtest_protocol(_Item(path), None)
    next(run)
    for _ in range(programs):
        table.jax_event(phases._COMPILE_EVENTS[2], 0.001)
    with pytest.raises(StopIteration):
        run.send(None)


def test_each_module_sums_its_checks_and_the_programs_they_made():
    table = phases.Phases(lambda: None, printed=False)
    _checked(table, "/x/test_a.py", 2)
    _checked(table, "/x/test_a.py", 1)
    _checked(table, "/y/test_b.py", 0)
    assert {name: (c.checks, c.programs) for name, c in table.modules.items()} == {
        "test_a.py": (2, 3), "test_b.py": (1, 0)}
    lines = table.module_table()
    assert lines[1].startswith("per contract module")
    assert all(line.endswith(("checks: 2, JAX programs: 3", "checks: 1, JAX programs: 0")) for line in lines[2:])
    assert len(lines) == 4


def test_no_check_no_module_table():
    assert phases.Phases(lambda: None, printed=False).module_table() == []
