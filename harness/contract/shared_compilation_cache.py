"""One JAX compilation cache for every project and environment of a machine, where the user names one
(HARNESS_SHARED_COMPILATION_CACHE): a new environment of a stack seen before (a candidate that keeps jax, a
second project, a CI job that restores the folder) loads its programs instead of compiling them; cold, the
compiling is about two thirds of an entry's suite.

JAX keeps writing the environment's own cache (JAX_COMPILATION_CACHE_DIR, one per environment: JAX writes
an entry in place, so a folder that processes of several environments wrote at once could be read half
written). The shared folder only exchanges whole files, by name: before the contracts run, what it holds for
this jax, jaxlib and CPU is linked into the environment's cache (JAX reads each file once, never rewrites
it); after the run, the files the environment's cache gained are published into it, each written under a
temporary name and renamed, so a reader sees a whole file or none. A file's name is JAX's key (the program,
the jax/jaxlib versions, the device and XLA's flags), so a program loaded is the program compiled; the
folders are split by jax, jaxlib and this CPU's model and flags (an executable compiled for one CPU's
instructions is never loaded on another that shares a home folder).

Stdlib only: it runs in the entry's environment before JAX is imported.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import sys
import uuid
from importlib import metadata
from pathlib import Path

VARIABLE = "HARNESS_SHARED_COMPILATION_CACHE"  # the user's: a folder the machine's runs share
_JAX_CACHE = "JAX_COMPILATION_CACHE_DIR"  # the environment's own, which the entry sets
_CACHE_SUFFIX = "-cache"  # JAX's executable files (its -atime files are its own bookkeeping)
_PARTIAL = ".partial-"  # a file being published: never linked


def folders(environ=os.environ) -> tuple[Path, Path] | None:
    """(the shared folder for this stack and CPU, the environment's cache), or None where either is not set."""
    shared, own = environ.get(VARIABLE), environ.get(_JAX_CACHE)
    if not shared or not own:
        return None
    folder = Path(shared).expanduser()
    if not folder.is_absolute():  # an entry runs in the project's root, not where the user typed the command
        raise ValueError(f"{VARIABLE}={shared} is not an absolute path: name the shared folder from / (or ~)")
    return folder / _stack_and_cpu(), Path(own)


def _stack_and_cpu() -> str:
    """'jax0.11.2-jaxlib0.11.2-<hash of the CPU's model and flags>': what an executable's validity depends on
    beyond its key."""
    versions = "-".join(f"{name}{_version(name)}" for name in ("jax", "jaxlib"))
    return f"{versions}-{hashlib.sha256(_cpu().encode()).hexdigest()[:12]}"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "none"


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = [line for line in f.read().split("\n\n")[0].splitlines()
                     if line.split(":")[0].strip() in ("model name", "flags", "Features", "CPU implementer", "CPU part")]
    except OSError:
        lines = []
    return "\n".join([platform.machine(), *lines])


def _executables(folder: Path) -> set[str]:
    try:
        return {name for name in os.listdir(folder) if name.endswith(_CACHE_SUFFIX) and _PARTIAL not in name}
    except FileNotFoundError:
        return set()


def seed(shared: Path, own: Path) -> int:
    """Link (or copy, across file systems) the shared folder's executables the environment's cache lacks;
    how many."""
    missing = _executables(shared) - _executables(own)
    if not missing:
        return 0
    own.mkdir(parents=True, exist_ok=True)
    for name in missing:
        try:
            os.link(shared / name, own / name)
        except FileExistsError:  # another process of this environment (a pytest-xdist worker) linked it first
            continue
        except OSError:
            shutil.copyfile(shared / name, own / name)
    return len(missing)


def publish(own: Path, shared: Path) -> int:
    """Put the environment's executables the shared folder lacks into it, each whole or not at all; how many."""
    new = _executables(own) - _executables(shared)
    if not new:
        return 0
    shared.mkdir(parents=True, exist_ok=True)
    for name in new:
        partial = shared / f"{_PARTIAL}{uuid.uuid4().hex}-{name}"
        try:
            os.link(own / name, partial)
        except OSError:
            shutil.copyfile(own / name, partial)
        os.replace(partial, shared / name)  # atomic: another run publishing the same key leaves a whole file too
    return len(new)


def before_run(environ=os.environ) -> int:
    """seed, where the user named a shared folder; how many executables were linked. A folder that cannot be
    read costs only time: said on stderr, the run goes on with the environment's own cache."""
    found = folders(environ)
    try:
        return seed(*found) if found else 0
    except OSError as exc:
        print(f"{VARIABLE}: not read ({exc}); the contracts compile what this environment's cache lacks",
              file=sys.stderr)
        return 0


def after_run(environ=os.environ) -> int:
    """publish, where the user named a shared folder; how many executables were put there (none when it
    cannot be written: said on stderr, the run's results are not touched)."""
    found = folders(environ)
    try:
        return publish(found[1], found[0]) if found else 0
    except OSError as exc:
        print(f"{VARIABLE}: not written ({exc})", file=sys.stderr)
        return 0
