"""The harness the entries install: built into a wheel from the installed package (never from where it
was installed from), once per content, and `-e CHECKOUT` when the harness runs from a checkout.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/e2e/test_harness_wheel.py."""

from __future__ import annotations

import pytest

from harness import env_vars
from harness.stack import paths
from harness.stack.environments import harness_source, harness_wheel
from harness.stack.workspace import Workspace


def test_from_a_checkout_the_entries_install_it_editable_without_a_build(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    monkeypatch.setattr(paths, "SOURCE", tmp_path)
    monkeypatch.setattr(harness_wheel, "wheel", lambda *a: pytest.fail("built a wheel for a checkout"))
    monkeypatch.setenv(env_vars.WHEEL, str(tmp_path / "pyproject.toml"))  # a stale one is not used either
    ws = Workspace.of(tmp_path)
    assert harness_source.install_args(ws) == ["-e", str(tmp_path)]
    assert harness_source.wheel_for_entries(ws) is None
