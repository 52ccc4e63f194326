"""The harness the entries install: built into a wheel from the installed package (never from where it
was installed from), once per content, and `-e CHECKOUT` when the harness runs from a checkout.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/e2e/test_harness_wheel.py."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from harness import env_vars
from harness.errors import HarnessError
from harness.run_options import RunOptions
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


def test_an_offline_upgrade_builds_the_wheel_from_uvs_cache_only(tmp_path, monkeypatch):
    """`upgrade --offline` never uses the network: the wheel its entries install is built offline or not at
    all (the host's UV_OFFLINE once said so to the build's fallback; now the run's options say it)."""
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    monkeypatch.setattr(paths, "SOURCE", tmp_path / "installed")  # an installed tool: built
    built = []
    monkeypatch.setattr(harness_wheel, "wheel", lambda *a, **k: built.append(k.get("offline")) or tmp_path)
    ws = Workspace.of(tmp_path)
    harness_source.wheel_for_entries(dataclasses.replace(ws, options=RunOptions(offline=True)))
    harness_source.install_args(dataclasses.replace(ws, options=RunOptions(offline=True)))
    assert built == [True, True]
    told = []

    def uv(cmd, **kwargs):
        told.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "hatchling is not cached")

    monkeypatch.setattr(harness_wheel.subprocess, "run", uv)
    with pytest.raises(HarnessError, match="building the harness wheel"):
        harness_wheel._build("uv", tmp_path, tmp_path / "out", offline=True)
    assert told and all("--offline" in cmd for cmd in told), told
