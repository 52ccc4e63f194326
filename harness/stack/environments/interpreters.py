"""Find a Python interpreter of a given version: PATH first, then pyenv's installed versions.

A pyenv shim on PATH may exist and still fail to run (the version is installed but not
selected), so every candidate is executed once before it is trusted.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess

from harness.errors import HarnessError
from harness.stack import boundary


def _reports_version(executable: str, version: str) -> bool:
    try:
        out = subprocess.run(
            [executable, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=30, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def _pyenv_root() -> str:
    if boundary.given("PYENV_ROOT"):
        return boundary.given("PYENV_ROOT")
    pyenv = shutil.which("pyenv")
    if pyenv:
        try:
            out = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30)
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return os.path.expanduser("~/.pyenv")


def candidates(version: str, path: str | None = None, pyenv_root: str | None = None) -> list[str]:
    """Interpreters that might be Python `version`, in the order they are tried."""
    found = []
    on_path = shutil.which(f"python{version}", path=path)
    if on_path:
        found.append(on_path)
    root = pyenv_root if pyenv_root is not None else _pyenv_root()
    patch_versions = glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}"))
    found.extend(sorted(patch_versions, key=_patch_key, reverse=True))
    return found


def _patch_key(path: str) -> tuple[int, ...]:
    name = os.path.basename(os.path.dirname(os.path.dirname(path)))
    return tuple(int(p) if p.isdigit() else -1 for p in name.split("."))


@functools.lru_cache(maxsize=None)
def find_python(version: str) -> str:
    """Absolute path of a working Python `version`, or a HarnessError saying how to get one."""
    tried = candidates(version)
    for executable in tried:
        if _reports_version(executable, version):
            return os.path.abspath(executable)
    looked = "; tried " + ", ".join(tried) if tried else ""
    others = other_versions(version)
    # A machine without network (an accelerator host with only its own Python) can install no other Python:
    # a team whose pins run on one it has says so in its table instead.
    instead = (f" Found here: {', '.join(f'Python {v} ({p})' for v, p in others.items())}; a team's project whose "
               f"pins run on {'it' if len(others) == 1 else 'one of them'} (jax < 0.11 runs on Python 3.11) can "
               f"name it in its [tool.upgrade-harness] table instead: python = \"{next(iter(others))}\"."
               if others else "")
    raise HarnessError(
        f"No working Python {version} found (looked for python{version} on PATH, then in "
        f"$(pyenv root)/versions/{version}.*{looked}). JAX >= 0.11 needs Python >= 3.12. "
        f"Install one with `pyenv install {version}` or `uv python install {version}`, "
        f"or put a python{version} on PATH, then run the command again.{instead}"
    )


def other_versions(version: str, path: str | None = None, pyenv_root: str | None = None) -> dict[str, str]:
    """Pythons 3.N other than `version` that an entry could use (3.11 or newer, as the harness itself needs) and
    are here (PATH's python3.N first, then pyenv's), newest first: each version -> the first interpreter of it
    that runs and says so."""
    dirs = (path if path is not None else boundary.given("PATH") or "").split(os.pathsep)
    root = pyenv_root if pyenv_root is not None else _pyenv_root()
    names = {os.path.basename(p)[len("python"):] for d in dirs if d
             for p in glob.glob(os.path.join(d, "python3.[0-9]*"))}
    names |= {".".join(os.path.basename(v).split(".")[:2]) for v in glob.glob(os.path.join(root, "versions", "3.*"))}
    found = {}
    for other in sorted((n for n in names if re.fullmatch(r"3\.\d+", n) and n != version
                         and int(n.split(".")[1]) >= 11),
                        key=lambda n: int(n.split(".")[1]), reverse=True):
        working = next((c for c in candidates(other, path, root) if _reports_version(c, other)), None)
        if working:
            found[other] = os.path.abspath(working)
    return found
