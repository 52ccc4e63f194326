"""The end-to-end layer: real uv and nox processes, real stacks, the team's tool installed from a copy of this
checkout. Only `nox -s tests` runs it (minutes)."""

from pathlib import Path

from support.layers import mark_layer


def pytest_collection_modifyitems(items) -> None:  # noqa: ANN001 - pytest's hook
    mark_layer(items, Path(__file__).parent, "e2e")
