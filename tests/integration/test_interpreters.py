"""Finding Python: a working interpreter on PATH first, then pyenv's versions, else a clear error.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/environments/test_interpreters.py."""

from harness.stack.environments import interpreters
from unit.stack.environments.test_interpreters import (  # noqa: F401 (fixtures and helpers shared with it)
    _fresh_cache, _real_python_reporting, _script,
)


def test_broken_shim_on_path_is_skipped_for_pyenv_version(tmp_path, monkeypatch):
    _script(tmp_path / "bin" / "python3.12", "echo 'pyenv: python3.12: command not found' >&2; exit 127")
    good = _real_python_reporting(tmp_path / "pyenv" / "versions" / "3.12.1" / "bin" / "python3.12", "3.12")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    assert interpreters.find_python("3.12") == str(good)


def test_working_python_on_path_wins(tmp_path, monkeypatch):
    on_path = _real_python_reporting(tmp_path / "bin" / "python3.12", "3.12")
    _real_python_reporting(tmp_path / "pyenv" / "versions" / "3.12.9" / "bin" / "python3.12", "3.12")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    assert interpreters.find_python("3.12") == str(on_path)
