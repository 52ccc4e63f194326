"""Digests of the inputs an entry's report depends on: files under a folder, a lock, the machine.

Each is a plain function of what is on disk or in the environment (harness.stack.run.report_key puts
them together); each says below what it reads and what it leaves out, and why.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import tomllib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement

from harness.model.host import cpu_fields

# Folders never entered, at any depth: bytecode, installed packages, node's.
SKIPPED_DIRS = {"__pycache__", "site-packages", "node_modules"}
TABLE = "upgrade-harness"  # [tool.upgrade-harness]: says what to compare, not what a run computes


def digest(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _entered(folder: Path, name: str, skip: tuple[Path, ...]) -> bool:
    """A folder to walk into: not hidden, not a tool folder, not skipped, and not a virtual environment."""
    path = folder / name
    return (name not in SKIPPED_DIRS and not name.startswith(".") and path not in skip
            and not (path / "pyvenv.cfg").exists())


def files(root: Path, skip: tuple[Path, ...] = ()) -> list[Path]:
    """The files under `root`, following symbolic links to folders (a monorepo's linked package) once each,
    without entering hidden folders, virtual environments (an entry's holds a gigabyte) or `skip`."""
    if root.is_file():
        return [root]
    found, seen = [], set()
    for folder, dirs, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # a link back up the tree
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if _entered(Path(folder), d, skip))
        found += [Path(folder, f) for f in sorted(names) if Path(folder, f) not in skip]
    return found


def _content(file: Path) -> bytes:
    """A file's bytes; a pyproject.toml without its [tool.upgrade-harness] table (the pins to compare and
    the harness's settings change which entries run, and each entry's own inputs say so)."""
    data = file.read_bytes()
    if file.name != "pyproject.toml":
        return data
    try:
        parsed = tomllib.loads(data.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return data
    parsed.get("tool", {}).pop(TABLE, None)
    if parsed.get("tool") == {}:
        del parsed["tool"]
    return json.dumps(parsed, sort_keys=True, default=str).encode()


def files_digest(roots: list[Path], suffixes: tuple[str, ...] | None = None, skip: tuple[Path, ...] = ()) -> str:
    """One digest of the files under `roots` (names and contents; only `suffixes` when given), bytecode left out."""
    hashed = hashlib.sha256()
    for root in roots:
        for file in files(root, skip):
            if suffixes and file.suffix not in suffixes or file.suffix == ".pyc":
                continue
            inside = file.relative_to(root).as_posix() if file != root else ""
            hashed.update(f"\0{root.name}/{inside}\0".encode() + _content(file))
    return hashed.hexdigest()


def unchanged_files_digest(roots: list[Path], skip: tuple[Path, ...] = ()) -> str:
    """files_digest of `roots`, computed again only when a file's name, size or modification time differs from
    the last call's (the harness's own files, digested for every part of every entry's key: ~35 ms each)."""
    listed = [f for root in roots for f in files(root, skip) if f.suffix != ".pyc"]
    signature = []
    for file in listed:
        try:
            stat = file.stat()
        except OSError:
            continue
        signature.append((str(file), stat.st_mtime_ns, stat.st_size))
    return _digest_of(tuple(map(str, roots)), tuple(map(str, skip)), tuple(signature))


@functools.lru_cache(maxsize=8)
def _digest_of(roots: tuple[str, ...], skip: tuple[str, ...], signature: tuple) -> str:
    return files_digest([Path(r) for r in roots], skip=tuple(Path(s) for s in skip))


def ancestor_conftests(folders: list[Path]) -> list[Path]:
    """The conftest.py files pytest loads above each contract folder: every ancestor's, up to the root."""
    found = []
    for folder in folders:
        for parent in folder.resolve().parents:
            if (parent / "conftest.py").is_file() and parent / "conftest.py" not in found:
                found.append(parent / "conftest.py")
    return found


def lock_digest(lock: Path, python: str) -> str:
    """What the lock installs here with Python `python`: its requirements (with extras and URLs) and its
    options, without comments (which name the entry and when it was resolved) and without those whose
    markers exclude this machine. A universal lock (the committed baseline's, with markers for every
    platform) and one resolved for this machine that install the same packages are the same input."""
    environment = {**default_environment(), "python_version": python, "python_full_version": f"{python}.0"}
    kept = []
    for line in lock.read_text().splitlines():
        text = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if not text:
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            kept.append(text)  # an option (-e, --index-url) or a line not ours to judge: kept as written
            continue
        if requirement.marker is None or requirement.marker.evaluate(environment):
            requirement.marker = None
            kept.append(str(requirement))
    return digest("\n".join(sorted(kept)))


@functools.lru_cache(maxsize=None)
def python_digest(executable: str) -> str:
    out = subprocess.run([executable, "-c", "import sys, platform; print(sys.version, platform.machine())"],
                         capture_output=True, text=True, check=False)
    return digest(out.stdout + out.stderr)


def accelerators() -> list[str]:
    """The GPUs and their driver, where the machine has NVIDIA's or AMD's tools (none here: CPU only)."""
    found = []
    for command in (["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                    ["rocm-smi", "--showproductname", "--showdriverversion"]):
        if shutil.which(command[0]):
            try:
                found.append(subprocess.run(command, capture_output=True, text=True, timeout=20).stdout.strip())
            except (OSError, subprocess.SubprocessError):
                found.append(f"{command[0]} did not answer")
    return found


@functools.lru_cache(maxsize=1)
def machine_digest() -> str:
    """The CPU model and its features (XLA's CPU code depends on both), the cores it may split work over,
    and any accelerator with its driver."""
    try:
        fields = cpu_fields(Path("/proc/cpuinfo").read_text())
    except OSError:
        fields = {}
    return digest(json.dumps([platform.machine(), platform.processor(), os.cpu_count(), fields, accelerators()]))
