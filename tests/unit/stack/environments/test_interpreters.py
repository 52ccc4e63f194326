"""Finding Python: a working interpreter on PATH first, then pyenv's versions, else a clear error."""

import os
import stat
import sys

import pytest

from harness.stack.environments import interpreters
from harness.errors import HarnessError


def _script(path, body):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _real_python_reporting(path, version):
    return _script(path, f'[ "$1" = "-c" ] && echo {version} && exit 0\nexec {sys.executable} "$@"')


@pytest.fixture(autouse=True)
def _fresh_cache():
    interpreters.find_python.cache_clear()
    yield
    interpreters.find_python.cache_clear()


def test_newest_pyenv_patch_release_is_tried_first(tmp_path):
    for v in ("3.12.2", "3.12.10", "3.12.9"):
        _real_python_reporting(tmp_path / "versions" / v / "bin" / "python3.12", "3.12")
    found = interpreters.candidates("3.12", path="", pyenv_root=str(tmp_path))
    assert [p.split(os.sep)[-3] for p in found] == ["3.12.10", "3.12.9", "3.12.2"]


def test_no_python_names_version_and_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "nope"))
    with pytest.raises(HarnessError) as info:
        interpreters.find_python("3.12")
    message = str(info.value)
    assert "No working Python 3.12" in message and "pyenv install 3.12" in message
    assert "uv python install 3.12" in message


def test_no_python_names_the_ones_found_and_the_tables_python_key(tmp_path, monkeypatch):
    """An accelerator host with only Python 3.11 and no network cannot install 3.12: the message names the
    Python it has and the table's `python` key a team whose pins run on it sets instead."""
    bin_dir = tmp_path / "bin"
    _script(bin_dir / "python3.11", "")
    _script(bin_dir / "python3.10", "exit 1")  # a shim that does not run: not offered
    _script(tmp_path / "pyenv" / "versions" / "3.13.0" / "bin" / "python3.13", "")
    _script(tmp_path / "pyenv" / "versions" / "3.9.18" / "bin" / "python3.9", "")  # older than the harness runs on
    # Running each is the process boundary: a python3.N "runs" unless it is the broken shim.
    monkeypatch.setattr(interpreters, "_reports_version",
                        lambda executable, version: executable.endswith(f"python{version}") and "3.10" not in executable)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    newest = str(tmp_path / "pyenv" / "versions" / "3.13.0" / "bin" / "python3.13")
    assert interpreters.other_versions("3.12") == {"3.13": newest, "3.11": str(bin_dir / "python3.11")}
    with pytest.raises(HarnessError) as info:
        interpreters.find_python("3.12")
    message = str(info.value)
    assert "No working Python 3.12" in message
    assert f"Found here: Python 3.13 ({newest}), Python 3.11 ({bin_dir / 'python3.11'}); " in message
    assert 'one of them (jax < 0.11 runs on Python 3.11) can name it in its [tool.upgrade-harness] table instead: ' \
           'python = "3.13".' in message
