"""The integration layer: several modules together, in-process pytester runs of made-up contract suites,
made-up stacks (support.simulated_stack), git and the CI steps' shell, the fresh baseline report of `nox -s tests`."""

from pathlib import Path

from support.layers import mark_layer


def pytest_collection_modifyitems(items) -> None:  # noqa: ANN001 - pytest's hook
    mark_layer(items, Path(__file__).parent, "integration")
