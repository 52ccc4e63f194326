"""The test layers (unit, integration, e2e): each layer's conftest marks the tests under its folder, so
`pytest -m unit` or a folder selects a layer and a new file is marked by where it is put, never by hand."""

from __future__ import annotations

from pathlib import Path

import pytest


def mark_layer(items: list[pytest.Item], folder: Path, layer: str) -> None:
    """Add the layer's marker to every collected test under `folder` (a conftest sees all items)."""
    for item in items:
        if item.path.is_relative_to(folder):
            item.add_marker(getattr(pytest.mark, layer))
