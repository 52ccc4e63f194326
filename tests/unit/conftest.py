"""The unit layer: one module's behaviour each, in-process, no subprocess, no environment variable read
from outside (committed fixture reports, never a fresh contract run). `nox -s tests-fast` runs this layer."""

import subprocess
from pathlib import Path

import pytest

from harness import env_vars
from support.layers import mark_layer


def pytest_collection_modifyitems(items) -> None:  # noqa: ANN001 - pytest's hook
    mark_layer(items, Path(__file__).parent, "unit")


def _no_process(args, *rest, **kwargs):  # noqa: ANN001, ANN002, ANN003 - Popen's signature
    raise AssertionError(f"a unit test starts no process ({args!r}): this test belongs in tests/integration "
                         "(or tests/e2e for uv and nox), or its process boundary wants a fake")


@pytest.fixture(autouse=True)
def unit_layer_stays_in_process(monkeypatch):
    """Keep the layer what tests-fast promises: no process started, and the same answers in `nox -s tests`
    (which sets HARNESS_BASELINE_REPORT for the other layers) as alone."""
    monkeypatch.setattr(subprocess, "Popen", _no_process)
    monkeypatch.delenv(env_vars.BASELINE_REPORT, raising=False)
