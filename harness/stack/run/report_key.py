"""What determines an entry's report, as a content key: when no part changed, the report would come out
the same, so the last one is reused (harness.stack.run.report_cache).

Each part is a short digest of one input, kept by name so that a recomputation can say which input
changed. The key deliberately leaves out the entry's name and the run: the same stack with the same
suite is the same run, whatever the plan calls it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import platform
import subprocess
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness import env_vars
from harness.stack import paths, project
from harness.stack.environments.interpreters import find_python
from harness.stack.pins.locks import lock_path
from harness.stack.pins.matrix import Entry
from harness.stack.workspace import Workspace

# The harness's own subpackages that never run in an entry: changing them changes no report.
HOST_ONLY = ("stack", "verdict")
# Variables that change what XLA compiles or how NumPy and the BLAS compute, by prefix or name.
NUMERIC_PREFIXES = ("XLA_", "JAX_", "TPU_", "CUDA_", "NVIDIA_", "ROCR_", "HIP_", "OMP_", "MKL_", "OPENBLAS_",
                    "NPY_")
# Set by the entry itself to the same values every run (harness.stack.environments.entry.suite_environment): not inputs.
SET_BY_ENTRY = ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES")
RANDOM_PROFILES = ("dev", "nightly")  # harness.contract.hypothesis_profiles: not derandomized
# Directories never read: bytecode, environments, reports and their cache (and any hidden directory).
SKIPPED_DIRS = {"__pycache__", "venv", "node_modules", "reports", "site-packages"}
PART_NAMES = {
    "lock": "the resolved lock (every package and version)",
    "python": "the Python interpreter's exact version",
    "harness": "the harness's contract side (plugin, built-in contracts, numerics)",
    "contracts": "your contracts and the code they import",
    "suite": "which contracts run (pytest arguments, built-in mode)",
    "golden": "the golden files",
    "hypothesis": "the Hypothesis profile (and seed, for a random profile)",
    "environment": "the environment variables that change numerics",
    "machine": "the machine's CPU (model, features, cores)",
    "replay": "the falsifying examples replayed",
}


@dataclasses.dataclass(frozen=True)
class ReportKey:
    """Every input of one entry's report, one digest per part (PART_NAMES)."""

    parts: dict[str, str]

    @property
    def digest(self) -> str:
        return _digest(json.dumps(self.parts, sort_keys=True))[:24]

    def changed(self, other: ReportKey) -> list[str]:
        """The parts whose inputs differ from `other`'s, in PART_NAMES order."""
        return [name for name in PART_NAMES if self.parts.get(name) != other.parts.get(name)]


def _digest(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _files(root: Path, skip: tuple[Path, ...]) -> list[Path]:
    """The files under `root`, walked without entering skipped, hidden or tool directories (an entry's
    environment under .nox/ holds a gigabyte)."""
    if root.is_file():
        return [root]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")
                         and Path(folder, d) not in skip)
        found += [Path(folder, f) for f in sorted(files)]
    return found


def files_digest(roots: list[Path], suffixes: tuple[str, ...] | None = None, skip: tuple[Path, ...] = ()) -> str:
    """One digest of every file under `roots` (names and contents), bytecode and tool directories left out."""
    digest = hashlib.sha256()
    for root in roots:
        for file in _files(root, skip):
            if suffixes and file.suffix not in suffixes or file.suffix == ".pyc":
                continue
            inside = file.relative_to(root).as_posix() if file != root else ""
            digest.update(f"\0{root.name}/{inside}\0".encode() + file.read_bytes())
    return digest.hexdigest()


def lock_digest(lock: Path, python: str) -> str:
    """What the lock installs here with Python `python`: its requirements without comments (which name the
    entry and when it was resolved), less those whose markers exclude this machine. A universal lock
    (the committed baseline's, with markers for every platform) and one resolved for this machine that
    install the same packages are the same input."""
    environment = {**default_environment(), "python_version": python, "python_full_version": f"{python}.0"}
    kept = []
    for line in lock.read_text().splitlines():
        text = line.split("#", 1)[0].strip()
        if not text or text.startswith("-"):  # blank, a comment, or an option such as --index-url
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            kept.append(text)  # not ours to judge: kept as written
            continue
        if requirement.marker is None or requirement.marker.evaluate(environment):
            kept.append(f"{canonicalize_name(requirement.name)}{requirement.specifier}")
    return _digest("\n".join(sorted(kept)))


@functools.lru_cache(maxsize=None)
def python_digest(executable: str) -> str:
    out = subprocess.run([executable, "-c", "import sys, platform; print(sys.version, platform.machine())"],
                         capture_output=True, text=True, check=False)
    return _digest(out.stdout + out.stderr)


def harness_digest() -> str:
    """The harness package minus its host-only subpackages: what the entry imports and runs."""
    return files_digest([paths.PACKAGE], skip=tuple(paths.PACKAGE / name for name in HOST_ONLY))


def numeric_environment(environ: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(environ.items())
            if k.startswith(NUMERIC_PREFIXES) and k not in SET_BY_ENTRY or k == "PYTHONHASHSEED"}


def cpu_fields(cpuinfo: str) -> dict[str, str]:
    """The first processor's model and features, from /proc/cpuinfo's text (x86 and Arm names)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("model name", "flags", "Features", "CPU implementer", "CPU part"):
            fields.setdefault(name.strip(), value.strip())
    return fields


@functools.lru_cache(maxsize=1)
def machine_digest() -> str:
    """The CPU model and its features (XLA's CPU code depends on both) and the cores it may split work over."""
    try:
        fields = cpu_fields(Path("/proc/cpuinfo").read_text())
    except OSError:
        fields = {}
    return _digest(json.dumps([platform.machine(), platform.processor(), os.cpu_count(), fields]))


def key_of(ws: Workspace, entry: Entry, found: project.Project, environ: dict[str, str], seed: int,
           replay: Path | None = None) -> ReportKey:
    """The entry's report key in the workspace's project `found`, under this run's environment (`environ` is
    what its session is given)."""
    from harness.stack.environments.entry import suite_arguments  # the exact arguments its pytest gets

    profile = environ.get(env_vars.PROFILE, "ci")
    code_roots = [*found.own_contracts, *found.pythonpath] if found.own_contracts else []
    parts = {
        "lock": lock_digest(lock_path(ws, entry), entry.python),
        "python": python_digest(find_python(entry.python)),
        "harness": harness_digest(),
        "contracts": files_digest(code_roots, suffixes=(".py", ".ini", ".toml", ".cfg")) if code_roots else "",
        "suite": _digest(json.dumps([suite_arguments(found), found.builtin.value, ws.is_checkout])),
        "golden": files_digest([d for d in (found.golden, paths.BUILTIN_GOLDEN) if d.is_dir()]),
        "hypothesis": _digest(f"{profile} {seed if profile in RANDOM_PROFILES else ''}"),
        "environment": _digest(json.dumps(numeric_environment(environ))),
        "machine": machine_digest(),
        "replay": _digest(replay.read_bytes()) if replay is not None else "",
    }
    return ReportKey(parts)
