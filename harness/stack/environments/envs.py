"""The entries' environments under their envdir (.nox/): when each was last used, what they hold on disk,
and pruning the ones no current plan uses, least recently used first, until they fit a size limit.

Last use is a stamp file the sessions write (mark_used), not the environment's mtimes, which every
install changes. Only an environment with a stamp is the harness's: one without (a team's own nox
session's, say `lint` or `docs`, or one made before stamps existed) is never removed. Sizes are bytes on disk with each file counted once, as `du -s` counts them; the files an
environment shares with uv's cache (uv links them in) stay in the cache when it is removed, so what a
prune frees on disk is counted apart.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import shutil
import time
import unicodedata
from collections import Counter
from pathlib import Path

STAMP = ".harness-last-use"  # in an environment: the session that used it last, written at that use
MEASURED = ".harness-measured.json"  # in the envdir: what the last prune found within the limit, and when
REMEASURE_AFTER = 24 * 3600  # seconds: even with nothing installed since, sizes are walked again once a day
DEFAULT_LIMIT = 10 * 2**30
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,
          "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str) -> float:
    """"10GiB", "500MB", "0" (prune every unused environment) or "off" (never prune: infinity) in bytes;
    ValueError naming the accepted forms otherwise."""
    match = _SIZE.match(str(text))
    if str(text).strip().lower() == "off":
        return math.inf
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"cannot read {text!r} as a size; give e.g. 10GiB, 500MiB, 2GB, 0 (keep no environment "
                         "that no plan uses) or off (never remove one)")
    return float(match.group(1)) * _UNITS[match.group(2).lower()]


def human(size: float) -> str:
    if size == math.inf:
        return "no limit"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{int(size)} B"


def mark_used(location: str | Path, session: str) -> None:
    """Record that `session` uses the environment at `location` now (nothing when it has none)."""
    if Path(location).is_dir():
        (Path(location) / STAMP).write_text(session + "\n")


def dir_name(envdir: Path, session: str) -> str:
    """The directory name nox gives a session's environment in `envdir` (nox.sessions' own rule)."""
    name = unicodedata.normalize("NFKD", session).encode("ascii", "ignore").decode("ascii")
    name = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "-", name).strip().lower()).strip("-")
    name = name or hashlib.sha1(session.encode()).hexdigest()[:8]
    if len(os.path.join(envdir, name)) > 100 - len("bin/pythonX.Y") and len(str(envdir)) < 100 - 9:
        name = hashlib.sha1(name.encode("ascii")).hexdigest()[:8]
    return name


@dataclasses.dataclass(frozen=True)
class Env:
    """One environment: its directory, the session that used it last (None before stamps) and when."""

    path: Path
    session: str | None
    last_used: float

    @functools.cached_property
    def files(self) -> dict[tuple[int, int], tuple[int, int, int]]:
        """(device, inode) -> (bytes on disk, links, links in this environment); walked when first asked."""
        return _files(self.path)


def _files(root: Path, found: dict | None = None) -> dict[tuple[int, int], tuple[int, int, int]]:
    found = {} if found is None else found
    try:
        entries = list(os.scandir(root))
    except OSError:  # gone or unreadable meanwhile
        return found
    for item in entries:
        try:
            if item.is_dir(follow_symlinks=False):
                _files(Path(item.path), found)
                continue
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        found[key] = (st.st_blocks * 512, st.st_nlink, found[key][2] + 1 if key in found else 1)
    return found


def scan(envdir: Path) -> list[Env]:
    """The environments in `envdir`: its directories (not links) that hold a pyvenv.cfg."""
    envs = []
    for path in sorted(envdir.iterdir()) if envdir.is_dir() else []:
        if path.is_symlink() or not (path / "pyvenv.cfg").is_file():
            continue
        stamp = path / STAMP
        used = stamp if stamp.is_file() else path / "pyvenv.cfg"
        session = (stamp.read_text(errors="replace").strip() or None) if stamp.is_file() else None
        envs.append(Env(path, session, used.stat().st_mtime))
    return envs


def on_disk(envs: list[Env]) -> int:
    """Bytes on disk of all of them, a file they share counted once."""
    sizes = {key: f[0] for env in envs for key, f in env.files.items()}
    return sum(sizes.values())


def freed(removed: list[Env]) -> int:
    """Bytes on disk released by removing them: files with no link left anywhere else."""
    links = Counter()
    for env in removed:
        for key, (_, _, here) in env.files.items():
            links[key] += here
    sizes = {key: f for env in removed for key, f in env.files.items()}
    return sum(size for key, (size, nlink, _) in sizes.items() if links[key] >= nlink)


@dataclasses.dataclass(frozen=True)
class Pruned:
    """What one prune found and did."""

    envdir: Path
    limit: float
    before: int  # bytes on disk of all the environments (0: not measured, none of them could be removed)
    after: int
    removed: tuple[Env, ...]
    freed: int  # bytes released on disk (less than before - after: uv's cache keeps the files it shares)
    failed: tuple[str, ...] = ()  # why an environment could not be removed


def in_use(env: Env, envdir: Path, keep: set[str]) -> bool:
    """Kept: a session of `keep` uses it, or no harness session ever stamped it (it is not the harness's)."""
    return env.session is None or env.session in keep or env.path.name in {dir_name(envdir, name) for name in keep}


def _installed(envs: list[Env]) -> dict[str, float]:
    """Each environment -> when packages were last installed into or removed from it (its site-packages'
    mtime; its pyvenv.cfg's without one): what changes its size."""
    found = {}
    for env in envs:
        sites = sorted(env.path.glob("lib/python*/site-packages")) or [env.path / "pyvenv.cfg"]
        found[env.path.name] = max(site.stat().st_mtime for site in sites)
    return found


def _unchanged_within(envdir: Path, envs: list[Env], limit: float) -> bool:
    """The last prune found these environments, as installed now, within a limit no larger, less than a day
    ago: walking their files again (seconds for a few GiB) would find them within it again."""
    try:
        last = json.loads((envdir / MEASURED).read_text())
        return (last["installed"] == _installed(envs) and last["limit"] <= limit
                and 0 <= time.time() - last["at"] < REMEASURE_AFTER)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _remember_within(envdir: Path, envs: list[Env], limit: float) -> None:
    try:
        (envdir / MEASURED).write_text(json.dumps({"installed": _installed(envs), "limit": limit, "at": time.time()}))
    except OSError:
        pass  # measured again next time


def prune(envdir: Path, keep: set[str], limit: float) -> Pruned:
    """Remove the environments no session in `keep` uses, least recently used first, while all of them
    together are over `limit` bytes. Only directories directly in `envdir` that hold a pyvenv.cfg."""
    envs = scan(envdir)
    unused = sorted((e for e in envs if not in_use(e, envdir, keep)), key=lambda e: e.last_used)
    if not unused:  # nothing to remove: not worth walking every file of every environment
        return Pruned(envdir, limit, 0, 0, (), 0)
    if _unchanged_within(envdir, envs, limit):  # nothing installed since they were measured within the limit
        return Pruned(envdir, limit, 0, 0, (), 0)
    before = on_disk(envs)
    if before <= limit:
        _remember_within(envdir, envs, limit)
    chosen, left = [], list(envs)
    for env in unused:
        if on_disk(left) <= limit:
            break
        chosen.append(env)
        left.remove(env)
    removed, failed = [], []
    for env in chosen:
        try:
            shutil.rmtree(env.path)
            removed.append(env)
        except OSError as exc:
            failed.append(f"{env.path.name}: {exc.strerror or exc}")
    after = on_disk([e for e in envs if e not in removed])
    return Pruned(envdir, limit, before, after, tuple(removed), freed(removed), tuple(failed))


def describe(pruned: Pruned) -> list[str]:
    """What the run tells: nothing when the environments fit the limit."""
    if pruned.before <= pruned.limit:
        return []
    lines = [f"{pruned.envdir}/ holds {human(pruned.before)} of environments, over its limit of "
             f"{human(pruned.limit)} (--envs-size-limit, or envs-size-limit in [tool.upgrade-harness])"]
    for env in pruned.removed:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(env.last_used))
        lines.append(f"  removed {env.path.name} (last used {when}{f' by {env.session}' if env.session else ''})")
    lines += [f"  not removed {why}" for why in pruned.failed]
    if pruned.removed:
        lines.append(f"  {len(pruned.removed)} removed: {human(pruned.before - pruned.after)} less in "
                     f"{pruned.envdir.name}/, {human(pruned.freed)} freed on disk (files shared with uv's cache "
                     f"stay in it); {human(pruned.after)} left")
    if pruned.after > pruned.limit:
        lines.append(f"  still {human(pruned.after)}: the rest is used by the current plan (or could not be removed)")
    return lines
