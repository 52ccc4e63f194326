"""An entry's environment is synced with its lock and the harness in one `uv pip sync`: an environment
that already matches both is left untouched (no rebuild of the harness each run).

Here: the tests that start real uv and nox processes; the others are in
tests/unit/stack/entry_side/test_entry_install.py."""

import subprocess
import sys
from pathlib import Path

import pytest

from harness.stack.entry_side import entry


PACKAGE = '''[build-system]
requires = ["hatchling>=1.26"]
build-backend = "hatchling.build"

[project]
name = "tiny-harness"
version = "0.1.0"
'''


def _sync(uv_bin: str, venv: Path, lock: Path, source: Path) -> str:
    requirement = entry.harness_requirement(["-e", str(source)], str(venv))
    done = subprocess.run([uv_bin, "pip", "sync", str(lock), str(requirement), "--python", str(venv / "bin" / "python"),
                           "--offline"], capture_output=True, text=True)
    if done.returncode != 0 and "offline" in done.stderr.lower():
        pytest.skip(f"uv's cache lacks the build backend: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_matching_environment_is_left_as_it_is_and_a_changed_harness_is_rebuilt(uv_bin, tmp_path):
    source = tmp_path / "tiny"
    (source / "tiny_harness").mkdir(parents=True)
    (source / "tiny_harness" / "__init__.py").write_text("")
    (source / "pyproject.toml").write_text(PACKAGE)
    lock = tmp_path / "lock.txt"
    lock.write_text("# an entry's lock with nothing in it but the harness\n")
    venv = tmp_path / "venv"
    subprocess.run([uv_bin, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)

    assert "+ tiny-harness" in _sync(uv_bin, venv, lock, source)
    again = _sync(uv_bin, venv, lock, source)
    assert "Built" not in again and "+ tiny-harness" not in again, again
    (source / "pyproject.toml").write_text(PACKAGE.replace("0.1.0", "0.2.0"))
    assert "+ tiny-harness==0.2.0" in _sync(uv_bin, venv, lock, source)
