"""What the real-stack tests share: a fresh clone of this checkout, set up as README's first command does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]


def fresh_clone(root: Path) -> Path:
    """A fresh clone of this checkout's HEAD at root, with the runner tools in its own .venv (README's set-up)."""
    subprocess.run(["git", "clone", "-q", str(CHECKOUT), str(root)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(root / ".venv")], check=True)
    subprocess.run([str(root / ".venv/bin/pip"), "install", "-q", "-r", str(root / "locks/runner.txt")], check=True)
    return root


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """One fresh clone a module, its tests' commands run one after another in it."""
    return fresh_clone(tmp_path_factory.mktemp("real-stack") / "clone")


@pytest.fixture
def own_clone(tmp_path) -> Path:
    """A fresh clone of its own, for a sequence that changes the clone's baseline (accept)."""
    return fresh_clone(tmp_path / "clone")
