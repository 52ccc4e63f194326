"""The API diff of one run: the candidate's optax, flax.nnx and jax against the baseline's, at the versions
the two reports ran, whatever is left in .nox/: read from the wheels of those versions (harness.stack.api.sources),
or, as a fast path, from an entry's environment when it holds exactly those versions (the same files, so
the same diff), under the matrix's Python (harness.stack.api.reader); written as the run's `api-diff.json`
beside its reports (so `judge DIR` shows it too), and reused from `.nox/api-diff/` while nothing it
depends on changed (the packages' versions, the reading Python, the contracts and the project's code, the
harness and griffe). A run whose reports were all reused gets the same diff as the run that made them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from harness import __version__
from harness.errors import HarnessError
from harness.model import api_diff
from harness.model.enums import BuiltinMode
from harness.stack import paths, project
from harness.stack.api import reader, sources
from harness.stack.selection import usage
from harness.stack.environments import envs
from harness.stack.pins import matrix
from harness.stack.run.run_directory import RunDirectory
from harness.stack.workspace import Workspace

CACHE = "api-diff"  # in the entries' .nox/: computed diffs by content key
READER = "api-reader"  # in the project's .nox/: the environments the sources are read in, one per Python


def site_packages(env: Path) -> Path | None:
    """Where an entry's environment installs packages (POSIX or Windows layout)."""
    found = sorted(env.glob("lib/python*/site-packages")) + [env / "Lib" / "site-packages"]
    return next((p for p in found if p.is_dir()), None)


def installed(site: Path, names: tuple[str, ...] = usage.LIBRARIES) -> dict[str, str | None]:
    """The versions of `names` installed in `site`, from their dist-info folders."""
    found: dict[str, str | None] = dict.fromkeys(names)
    for info in site.glob("*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        if name.lower() in found:
            found[name.lower()] = version
    return found


Files = list[tuple[Path, list[Path]]]  # (root the files are modules under, the files)


def inputs(ws: Workspace) -> tuple[Files, Files, Path]:
    """The contracts' files (built-in ones when they run, the project's own) and the project's code."""
    found = project.load(ws)
    contracts: Files = []
    if found.builtin != BuiltinMode.OFF:
        contracts += [(paths.PACKAGE.parent, usage.python_files(paths.PACKAGE / f)) for f in ("builtin", "contract")]
    contracts += [(folder.parent, usage.python_files(folder)) for folder in found.own_contracts]
    code: Files = []
    if not ws.is_checkout:
        skip = (*found.own_contracts, found.golden, found.locks, ws.envdir, ws.published, found.root / "tests")
        code += [(folder, usage.python_files(folder, skip)) for folder in found.pythonpath]
    return contracts, code, found.root


def _key(versions: tuple[dict, dict], python: str, groups: Files) -> str:
    files = sorted(str(p) + hashlib.sha256(p.read_bytes()).hexdigest() for _, found in groups for p in found
                   if p.is_file())
    return hashlib.sha256(json.dumps([versions, python, files, __version__, reader.requirement()]).encode()).hexdigest()


def reader_python(entries: list[matrix.Entry]) -> str:
    """The Python the sources are read with: the newer of the two entries' (their syntax parses there)."""
    return max((e.python for e in entries[:2]), key=lambda v: tuple(int(p) for p in v.split(".")))


def _listed(groups: Files) -> list:
    return [[str(root), [str(p) for p in found]] for root, found in groups]


def _site(ws: Workspace, entry: matrix.Entry, want: dict[str, str | None]) -> Path:
    """Where `entry`'s libraries at the versions its report ran are read: its environment when it holds
    exactly those, else those versions' wheels (HarnessError when they cannot be fetched)."""
    site = site_packages(ws.envdir / envs.dir_name(ws.envdir, entry.name))
    if site is not None and installed(site) == want:
        return site
    return sources.fetch(ws.root, entry, want, offline=ws.options.offline)


def compute(ws: Workspace, where: RunDirectory | Path, entries: list[matrix.Entry]) -> Path | None:
    """Write the run's api-diff.json for the candidate (entries[1]) against the baseline (entries[0]);
    None, with a note, when a report is missing or the libraries it ran cannot be had."""
    run = RunDirectory.at(where)
    try:  # the versions each report ran (read once in the run: the verdict judges the same reports)
        ran = [run.reports(e.name).environment.versions for e in entries[:2]]
    except HarnessError:
        return None
    versions = tuple({k: r.get(k) for k in usage.LIBRARIES} for r in ran)
    if not all(any(v.values()) for v in versions):  # an entry that ran no stack (it could not install or start):
        return None  # no API to read; the verdict says why it cannot judge it
    contracts, code, root = inputs(ws)
    python = reader_python(entries)
    try:
        cached = ws.envdir / CACHE / f"{_key(versions, python, contracts + code)}.json"
    except HarnessError as exc:  # no griffe here
        print(f"note: no API diff: {exc}", file=sys.stderr)
        return None
    try:
        found = api_diff.read(cached) if cached.is_file() else None
    except HarnessError:
        found = None
    if found is None:
        try:
            sites = [_site(ws, entry, want) for entry, want in zip(entries[:2], versions)]
            request = {"entry": entries[1].name, "sites": [str(s) for s in sites], "versions": list(versions),
                       "contracts": _listed(contracts), "code": _listed(code), "root": str(root)}
            found = reader.run(ws.root / ".nox" / READER, python, request, offline=ws.options.offline)
        except HarnessError as exc:
            print(f"note: no API diff: {exc}", file=sys.stderr)
            return None
        cached.parent.mkdir(parents=True, exist_ok=True)
        api_diff.write(cached, found)
    api_diff.write(run.api_diff, found)
    return run.api_diff


def beside(ws: Workspace, where: RunDirectory | Path, entries: list[matrix.Entry]) -> Path | None:
    """`judge DIR`: the run's api-diff.json when it has one, else computed as the run computes it."""
    run = RunDirectory.at(where)
    return run.api_diff if run.api_diff.is_file() else compute(ws, run, entries)
