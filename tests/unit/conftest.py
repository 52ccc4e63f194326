"""The unit layer: one module's behaviour each, in-process, no subprocess, no environment variable read
from outside (committed fixture reports, never a fresh contract run). `nox -s tests-fast` runs this layer."""

from pathlib import Path

from support.layers import mark_layer


def pytest_collection_modifyitems(items) -> None:  # noqa: ANN001 - pytest's hook
    mark_layer(items, Path(__file__).parent, "unit")
