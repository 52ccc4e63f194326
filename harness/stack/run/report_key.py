"""What determines an entry's report, as a content key: when no part changed, the report would come out
the same, so the last one is reused (harness.stack.run.report_cache).

Each part is a short digest of one input, kept by name so that a recomputation can say which input
changed. The key deliberately leaves out the entry's name and the run: the same stack with the same
suite is the same run, whatever the plan calls it.

The digests of its inputs (files under a folder, a lock, the machine) come first: each a plain function of what
is on disk or in the environment, each saying what it reads and what it leaves out, and why.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import tomllib
from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from pathlib import Path

from harness import builtin_families, env_vars, golden_layout
from harness.model.entry_job import JobOptions
from harness.model.enums import BuiltinMode, ReportPart
from harness.model.host import cpu_fields
from harness.stack import paths, project
from harness.stack.environments.interpreters import find_python
from harness.stack.pins.locks import lock_path
from harness.stack.pins.matrix import Entry
from harness.stack.workspace import Workspace


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


# What only the host runs: the host side, the verdict, the command line and the pins (which say what to
# compare; each entry's own lock says what it installs). Changing them changes no report.
HOST_ONLY = ("stack", "verdict", "cli.py", "__main__.py", "matrix.toml")
# Variables that change what XLA compiles or how NumPy and the BLAS compute, by prefix...
NUMERIC_PREFIXES = ("XLA_", "JAX_", "TPU_", "CUDA_", "NVIDIA_", "ROCR_", "HIP_", "OMP_", "MKL_", "OPENBLAS_",
                    "NPY_", "KMP_", "GOTO_", "LD_")
# ...and by name: what pytest and Python take from the environment (options, plugins, import paths, warnings).
RUN_VARIABLES = ("PYTHONHASHSEED", "PYTHONPATH", "PYTHONWARNINGS", "PYTHONSAFEPATH", "PYTEST_ADDOPTS",
                 "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")
# Set by the entry itself to the same values every run (harness.stack.entry_side.entry.suite_environment): not inputs.
SET_BY_ENTRY = ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES")
DERANDOMIZED = ("ci",)  # harness.contract.hypothesis_profiles: any other profile draws with the run's seed
PART_NAMES = {
    "lock": "the resolved lock (every package and version)",
    "python": "the Python interpreter's exact version",
    "harness": "the harness's contract side (plugin, built-in contracts, numerics)",
    "contracts": "your contracts and the code they import",
    "suite": "which contracts run (pytest arguments, built-in mode and tests, the multi-device family's platform)",
    "golden": "the golden files",
    "hypothesis": "the Hypothesis profile (and seed, for a random profile)",
    "environment": "the environment variables that change numerics or the run (XLA_*, JAX_*, PYTEST_ADDOPTS...)",
    "machine": "the machine's CPU (model, features, cores) and accelerators",
    "replay": "the falsifying examples replayed",
    "rollback": "the checkpoints restored (another entry's, in a rollback run)",
}


@dataclasses.dataclass(frozen=True)
class ReportKey:
    """Every input of one entry's report, one digest per part (PART_NAMES)."""

    parts: dict[str, str]

    @property
    def digest(self) -> str:
        return digest(json.dumps(self.parts, sort_keys=True))[:24]

    def changed(self, other: ReportKey) -> list[str]:
        """The parts whose inputs differ from `other`'s, in PART_NAMES order."""
        return [name for name in PART_NAMES if self.parts.get(name) != other.parts.get(name)]


def harness_digest() -> str:
    """The harness package minus what only the host runs: what the entry imports and runs."""
    return unchanged_files_digest([paths.PACKAGE], skip=tuple(paths.PACKAGE / name for name in HOST_ONLY))


def run_environment(environ: dict[str, str]) -> dict[str, str]:
    """The variables of `environ` that change what a run computes or which checks it runs."""
    return {k: v for k, v in sorted(environ.items())
            if (k.startswith(NUMERIC_PREFIXES) or k in RUN_VARIABLES) and k not in SET_BY_ENTRY}


def profile_of(environ: dict[str, str]) -> str:
    """The Hypothesis profile the run will use, as the plugin chooses it (harness.contract.options.profile)."""
    return environ.get(env_vars.PROFILE, "ci") or ("ci" if environ.get("CI") else "dev")


def key_of_job(ws: Workspace, entry: Entry, found: project.Project, environ: dict[str, str],
               told: JobOptions, part: ReportPart = ReportPart.ALL) -> ReportKey:  # type: ignore[valid-type]
    """The report key of a session told `told` (its job's options): of those, the seed, the examples replayed
    and the checkpoints restored determine its report; its run, progress file, phases directory and report
    name do not (the selection is matched apart: harness.stack.run.report_cache)."""
    return key_of(ws, entry, found, environ, told.seed or 0, told.replay, told.rollback_from, part)


def key_of(ws: Workspace, entry: Entry, found: project.Project, environ: dict[str, str], seed: int,
           replay: Path | None = None, rollback: tuple[Path, ...] = (), part: ReportPart = ReportPart.ALL) -> ReportKey:
    """The key of the entry's report (or of one part of it: harness.stack.entry_side.parts) in the workspace's
    project `found`, under this run's environment (`environ` is what its session is given), restoring the
    checkpoints folders `rollback`. The built-in part's leaves the project's code and contracts out: its
    process never imports them (and pytest reads no pyproject.toml of the project: its settings are the
    harness's); it keeps which built-in tests run, which the code's calls decide."""
    from harness.stack.entry_side import parts as report_parts

    part = report_parts.runs(found, part, bool(rollback))  # which contracts its process runs
    profile = profile_of(environ)
    parts = {
        "lock": lock_digest(lock_path(ws, entry), entry.python),
        "python": python_digest(find_python(entry.python)),
        "harness": harness_digest(),
        "contracts": "" if part == ReportPart.BUILTIN else _contracts(ws, found),
        "suite": _suite(ws, found, environ, part),
        "golden": _golden(found, part, ws.options.platform),
        "hypothesis": digest(f"{profile} {'' if profile in DERANDOMIZED else seed}"),
        "environment": digest(json.dumps(run_environment(environ))),
        "machine": machine_digest(),
        "replay": digest(replay.read_bytes()) if replay is not None else "",
        "rollback": files_digest(list(rollback)) if rollback else "",
    }
    return ReportKey(parts)


def _contracts(ws: Workspace, found: project.Project) -> str:
    """Every file of your contracts (data they load too); of the code they import, its code and configuration
    (pyproject.toml less its [tool.upgrade-harness] table: your code may read its own settings), the reports and
    golden directories left out; the conftest.py files pytest loads above them."""
    contracts = list(found.own_contracts)
    if not contracts:
        return ""
    return digest(files_digest(contracts)
                  + files_digest(list(found.pythonpath), project.CODE, (ws.published, found.golden))
                  + files_digest(ancestor_conftests(contracts)))


def _suite(ws: Workspace, found: project.Project, environ: dict[str, str], part: ReportPart) -> str:
    """Which contracts the part runs: pytest's arguments, whether the built-in contracts are off, the multi-device
    family's process (its platform, device count and what XLA is told) and the built-in tests kept of the
    families a team's selection takes in part (told pytest in its job)."""
    from harness.stack.entry_side import multi_device
    from harness.stack.entry_side.entry import suite_arguments  # the exact arguments its pytest gets

    said: list = [str(part), suite_arguments(found, part=part), found.builtin == BuiltinMode.OFF, ws.is_checkout]
    if ws.options.platform:  # --platform: another chip compiles the same suite (an older key stays valid on cpu)
        said.append(ws.options.platform)
    if part != ReportPart.OWN:
        said += [multi_device.environment_of(multi_device.planned(found, environ)),
                 list(found.selection.tests or ()) if found.selection is not None else []]
    return digest(json.dumps(said))


def _golden(found: project.Project, part: ReportPart, platform: str | None = None) -> str:
    """The golden files the part reads: the built-in families' (the tool's, and those the project recorded
    itself), the project's own families' (every other file of its golden directory), or both; on `platform`,
    its own folder of them (found.golden is already that folder), never another platform's."""
    tool_dir = paths.builtin_golden(platform)
    others = (tool_dir / golden_layout.PLATFORMS, found.golden / golden_layout.PLATFORMS)
    tool = unchanged_files_digest([tool_dir], skip=others) if tool_dir.is_dir() else ""
    if part == ReportPart.ALL:
        return digest(files_digest([found.golden] if found.golden.is_dir() else [], skip=others) + tool)
    entries = [e for e in sorted(found.golden.iterdir()) if e not in others] if found.golden.is_dir() else []
    builtin = [e for e in entries if _read_by_builtin_part(e, _own_names(found))]
    if part == ReportPart.BUILTIN:
        return digest(files_digest(builtin) + tool)
    return files_digest([e for e in entries if e not in builtin])


def _own_names(found: project.Project) -> frozenset[str]:
    """The project's own families as its contract modules name them (test_<family>.py): a golden file of such a
    name is theirs even where a built-in family has that name (harness.golden_layout.team_copy)."""
    return frozenset(p.stem.removeprefix("test_") for d in found.own_contracts if d.is_dir()
                     for p in d.rglob("test_*.py"))


def _read_by_builtin_part(entry: Path, own_names: frozenset[str]) -> bool:
    """A team's copies of built-in families (their folder, or an earlier copy: a built-in name, no own mark, no own
    family of that name), and the checkpoints the built-in families restore."""
    if entry.name == golden_layout.BUILTIN_COPIES:
        return True
    name = entry.name.removesuffix(".json")
    if name not in builtin_families.BY_NAME or name in own_names:
        return False
    return entry.is_dir() or not golden_layout.marked_own(entry)
