"""The integration layer: several modules together, in-process pytester runs of made-up contract suites,
made-up stacks (support.simulated_stack), git and the CI steps' shell, the fresh baseline report of `nox -s tests`."""

from pathlib import Path

from support.layers import mark_layer

try:  # imported once here: a report of an in-process pytester run records the JAX backend, and pytester
    import jax  # noqa: F401  forgets the modules a run imported (C extensions must not be imported twice)
except ImportError:  # here, not in tests/conftest.py: the unit layer never needs JAX (1.2 s a process)
    pass


def pytest_collection_modifyitems(items) -> None:  # noqa: ANN001 - pytest's hook
    mark_layer(items, Path(__file__).parent, "integration")
