"""The harness as one wheel for the entries to install, built from the package the host is running.

Not from where the tool was installed from: that checkout may since be read-only, shared, moved or
deleted, and building from it would write into it. The installed package and its distribution
metadata (the *.dist-info beside it) are copied to a scratch directory with a pyproject.toml saying
the same metadata, and `uv build --wheel` turns that into the wheel. Wheels are kept under the
project's .nox/ by a hash of the package's files and that metadata: an unchanged harness is built
once; a changed one gets a new wheel whose version carries the hash as a local label (0.1.0+<hash>),
so an entry that has the old one installed replaces it (an installer skips a version it already has).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.environments.installed import Metadata, installed_distribution, metadata

KEEP = 3  # wheels kept in the cache: the newest few, so a run still using the last one finds it


def pyproject(meta: Metadata) -> str:
    """The scratch project's pyproject.toml (TOML strings and arrays written as JSON, which TOML reads)."""
    q = json.dumps
    lines = ['[build-system]', 'requires = ["hatchling>=1.26"]', 'build-backend = "hatchling.build"', '',
             '[project]', f'name = {q(meta.name)}', f'version = {q(meta.version)}', f'description = {q(meta.summary)}',
             f'dependencies = {q(list(meta.dependencies))}']
    if meta.requires_python:
        lines.append(f'requires-python = {q(meta.requires_python)}')
    lines += ['', '[project.optional-dependencies]']
    lines += [f'{q(extra)} = {q(list(reqs))}' for extra, reqs in meta.optional]
    sections = {"console_scripts": "[project.scripts]", "gui_scripts": "[project.gui-scripts]"}
    for group in dict.fromkeys(g for g, _, _ in meta.entry_points):
        lines += ['', sections.get(group, f'[project.entry-points.{q(group)}]')]
        lines += [f'{q(name)} = {q(value)}' for g, name, value in meta.entry_points if g == group]
    lines += ['', '[tool.hatch.build.targets.wheel]', 'packages = ["harness"]']
    return "\n".join(lines) + "\n"


def package_files(package: Path) -> list[Path]:
    """The package's files, relative to it, without the bytecode Python wrote beside them."""
    return sorted(p.relative_to(package) for p in package.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def content_hash(package: Path, files: list[Path], project_text: str) -> str:
    digest = hashlib.sha256(project_text.encode())
    for rel in files:
        digest.update(f"\0{rel.as_posix()}\0".encode())
        digest.update((package / rel).read_bytes())
    return digest.hexdigest()[:16]


def wheel(package: Path, cache: Path, uv: str | None, offline: bool = False) -> Path:
    """The cached wheel of `package` (built now if this package was never built); HarnessError if it cannot be.
    `offline` (`upgrade --offline`, RunOptions.offline): built from uv's cache only."""
    meta = metadata(installed_distribution(package))
    files = package_files(package)
    key = content_hash(package, files, pyproject(meta))
    kept = cache / key
    if found := _wheel_in(kept):
        os.utime(kept)  # recently used: kept by the pruning
        return found
    if uv is None:
        raise HarnessError("cannot build the harness wheel for the entries: uv is not installed; "
                           "install it beside the harness (`python3 -m pip install uv`).")
    local = f"{meta.version}{'.' if '+' in meta.version else '+'}{key}"  # the build's hash as a PEP 440 local label
    try:
        _build_into(kept, package, files, pyproject(replace(meta, version=local)), uv, offline)
    except OSError as exc:
        raise HarnessError(f"cannot keep the harness wheel for the entries in {cache}: {exc}") from None
    _prune(cache)
    return _wheel_in(kept)


def _build_into(kept: Path, package: Path, files: list[Path], project_text: str, uv: str,
                offline: bool = False) -> None:
    """Build from a source staged outside the project (uv looks upwards from a source for the project it
    belongs to, and would read the team's own pyproject.toml), then move the finished wheel into place
    through a scratch directory beside `kept`."""
    kept.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="harness-wheel-source-") as staged, \
            tempfile.TemporaryDirectory(prefix=".building-", dir=kept.parent) as work:
        source, out = Path(staged) / "source", Path(work) / "wheel"
        for rel in files:
            (source / "harness" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(package / rel, source / "harness" / rel)
        (source / "pyproject.toml").write_text(project_text)
        _build(uv, source, out, offline)
        if kept.is_dir() and not _wheel_in(kept):
            shutil.rmtree(kept)  # left half-made by an interrupted run
        try:
            out.rename(kept)
        except OSError:  # another entry built the same wheel meanwhile: keep that one
            if not _wheel_in(kept):
                raise


def _build(uv: str, source: Path, out: Path, offline: bool = False) -> None:
    """`uv build --wheel`, from uv's cache first (offline) like the entries' installs, then online (never when
    the run is `offline`)."""
    cmd = [uv, "build", "--wheel", "--out-dir", str(out), "--python", sys.executable, str(source)]
    cached = subprocess.run([*cmd, "--offline"], cwd=source, capture_output=True, text=True)
    if cached.returncode == 0:
        return
    done = cached if offline else subprocess.run(cmd, cwd=source, capture_output=True, text=True)
    if done.returncode != 0:
        said = "\n".join(line for line in done.stderr.splitlines() if line.strip())[-1500:]
        raise HarnessError(
            f"building the harness wheel for the entries failed (`{shlex.join(cmd)}`):\n{said}\n"
            "uv builds it with hatchling, taken from uv's cache or, when online, from the package index: "
            "offline (--offline, UV_OFFLINE) it must already be cached; run once with network access.")


def _wheel_in(directory: Path) -> Path | None:
    return next(iter(sorted(directory.glob("*.whl"))), None) if directory.is_dir() else None


def _prune(cache: Path) -> None:
    """Keep the KEEP most recently used wheels: each changed harness leaves one behind."""
    built = sorted((d for d in cache.iterdir() if d.is_dir() and not d.name.startswith(".")),
                   key=lambda d: d.stat().st_mtime, reverse=True)
    for old in built[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)
