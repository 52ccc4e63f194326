"""A Poetry team's stack is its poetry.lock, package for package: the harness's lock of the baseline
(locks/baseline.txt, what every entry installs, universal as poetry.lock is), resolved by the real uv from the
package index, holds each package poetry.lock locks at the lock's version, beside what the harness's own suite needs.

tests/fixtures/poetry-team's lock was written by Poetry 2.5.1 (`poetry lock`); the expected versions are read from
it with tomllib, not by the code under test."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness import env_vars
from harness.stack.pins import current, locks, matrix
from harness.stack.workspace import Workspace

FIXTURE = Path(__file__).parents[1] / "fixtures" / "poetry-team"
TABLE = '\n[tool.upgrade-harness]\nbaseline-from = "poetry.lock"\ncontracts = ["contracts"]\nbuiltin = false\n'


def _locked(lock: Path) -> dict[str, str]:
    """name -> version of every package of the lock."""
    return {canonicalize_name(p["name"]): p["version"] for p in tomllib.loads(lock.read_text())["package"]}


def test_the_baseline_installs_poetry_locks_versions_package_for_package(tmp_path, monkeypatch):
    for name in ("pyproject.toml", "poetry.lock"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    (tmp_path / "pyproject.toml").write_text((tmp_path / "pyproject.toml").read_text() + TABLE)
    (tmp_path / "contracts").mkdir()
    (tmp_path / "train.py").write_text("import optax\nfrom flax import nnx\n")
    monkeypatch.setenv(env_vars.PROJECT, str(tmp_path))
    ws = Workspace.from_environment()
    lock = locks.write_if_missing(ws, current.entries(ws)[matrix.BASELINE])
    installed = locks.parse_lock(lock.read_text())
    wanted = _locked(tmp_path / "poetry.lock")  # the harness's lock is universal too: every platform's package
    assert wanted["pytest"] == "8.4.2"  # the dev group's, not the newest pytest
    assert {name: installed.get(name) for name in wanted} == wanted
    suite = {canonicalize_name(Requirement(r).name) for r in locks.harness_requirements()}
    assert suite <= set(installed)  # and what the harness's own suite needs, beside the team's set
