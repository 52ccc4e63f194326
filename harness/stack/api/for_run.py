"""The API diff of one run: the candidate's installed optax, flax.nnx and jax against the baseline's,
read from the two entries' environments on this machine, written as the run's `api-diff.json` beside its
reports (so `judge DIR` shows it too), and reused from `.nox/api-diff/` while nothing it depends on
changed (the packages' versions, the contracts and the project's code, the harness and griffe).
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib import metadata
from pathlib import Path

from harness import __version__
from harness.errors import HarnessError
from harness.model import api_diff
from harness.model.enums import BuiltinMode
from harness.stack import paths, project
from harness.stack.api import usage
from harness.stack.api.compare_stack import compare_entries
from harness.stack.environments import envs
from harness.stack.pins import matrix
from harness.stack.workspace import Workspace

CACHE = "api-diff"  # in the entries' .nox/: computed diffs by content key


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


def sources(ws: Workspace) -> tuple[list[usage.FileUse], list[usage.FileUse], Path]:
    """The contracts' files (built-in ones when they run, the project's own) and the project's code."""
    found = project.load(ws)
    contracts: list[usage.FileUse] = []
    if found.builtin != BuiltinMode.OFF:
        for folder in ("builtin", "contract"):
            contracts += usage.scan(paths.PACKAGE.parent, usage.python_files(paths.PACKAGE / folder))
    for folder in found.own_contracts:
        contracts += usage.scan(folder.parent, usage.python_files(folder))
    code: list[usage.FileUse] = []
    if not ws.is_checkout:
        skip = (*found.own_contracts, found.golden, found.locks, ws.envdir, ws.published, found.root / "tests")
        for folder in found.pythonpath:
            code += usage.scan(folder, usage.python_files(folder, skip))
    return contracts, code, found.root


def _key(versions: tuple[dict, dict], contracts: list[usage.FileUse], code: list[usage.FileUse]) -> str:
    files = sorted(str(f.path) + hashlib.sha256(f.path.read_bytes()).hexdigest() for f in [*contracts, *code]
                   if f.path.is_file())
    return hashlib.sha256(json.dumps([versions, files, __version__, metadata.version("griffe")]).encode()).hexdigest()


def compute(ws: Workspace, directory: Path, entries: list[matrix.Entry]) -> Path | None:
    """Write `directory`/api-diff.json for the candidate (entries[1]) against the baseline (entries[0]);
    None, with a note, when an environment or a report is not on this machine."""
    try:  # the versions each report ran (validated by the verdict, which reads them anyway)
        ran = [json.loads((directory / f"{e.name}.json").read_text())["environment"]["versions"] for e in entries[:2]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    sites = [site_packages(ws.envdir / envs.dir_name(ws.envdir, e.name)) for e in entries[:2]]
    if None in sites:
        print(f"note: no API diff: the {' and '.join(e.name for e, s in zip(entries, sites) if s is None)} "
              f"environment is not in {ws.envdir}/ (run the entries here to compare their API)", file=sys.stderr)
        return None
    versions = tuple({k: r.get(k) for k in usage.LIBRARIES} for r in ran)
    if (installed(sites[0]), installed(sites[1])) != versions:
        print("note: no API diff: the environments here no longer hold the versions the reports ran "
              f"({', '.join(str(s) for s in sites)}); run the upgrade again to compare them", file=sys.stderr)
        return None
    contracts, code, root = sources(ws)
    cached = ws.envdir / CACHE / f"{_key(versions, contracts, code)}.json"
    target = directory / api_diff.API_DIFF_FILE
    try:
        found = api_diff.read(cached) if cached.is_file() else None
    except HarnessError:
        found = None
    if found is None:
        found = compare_entries(entries[1].name, (sites[0], sites[1]), versions, contracts, code, root)
        cached.parent.mkdir(parents=True, exist_ok=True)
        api_diff.write(cached, found)
    api_diff.write(target, found)
    return target


def beside(ws: Workspace, directory: Path, entries: list[matrix.Entry]) -> Path | None:
    """`judge DIR`: the run's api-diff.json when it has one, else computed when the environments are here."""
    found = directory / api_diff.API_DIFF_FILE
    return found if found.is_file() else compute(ws, directory, entries)
