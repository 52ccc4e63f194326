"""What a team's code calls, read statically (harness.stack.selection.usage): every library name its Python
files use, with the first place each is used, and whether it imports Flax. Read once per state of the
files: an upgrade loads the project many times (plan, each entry, report keys, the verdict)."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from harness.stack.selection import usage

LIBRARIES = (*usage.LIBRARIES, "orbax")  # orbax: checkpoints


@dataclasses.dataclass(frozen=True)
class Use:
    name: str  # "optax.MultiSteps"
    where: str  # "trainer/optim.py:23", relative to the project's root


@dataclasses.dataclass(frozen=True)
class TeamCode:
    uses: tuple[Use, ...]  # each name once, at its first place (by file, then line)
    imports_flax: bool

    def first(self, prefixes: tuple[str, ...]) -> Use | None:
        """The first use of a name equal to, or under, one of `prefixes` ("optax.MultiSteps", "flax.nnx")."""
        return next((u for u in self.uses if any(u.name == p or u.name.startswith(p + ".") for p in prefixes)), None)


def files(root: Path, code: tuple[Path, ...], contracts: tuple[Path, ...], skip: tuple[Path, ...]) -> list[tuple[Path, Path]]:
    """(module root, file) for the code under `code` (less `skip`, the contracts and tests/) and the contracts."""
    skip = (*skip, *contracts, root / "tests")
    found = [(folder, f) for folder in code for f in usage.python_files(folder, skip)]
    return found + [(folder.parent, f) for folder in contracts for f in usage.python_files(folder)]


def read(root: Path, found: list[tuple[Path, Path]]) -> TeamCode:
    """The team's code in `found` ((module root, file) pairs), scanned unless unchanged since the last read."""
    state = []
    for folder, path in found:
        try:
            stat = path.stat()
        except OSError:
            continue
        state.append((str(root), str(folder), str(path), stat.st_mtime_ns, stat.st_size))
    return _read(tuple(state))


@functools.lru_cache(maxsize=8)
def _read(state: tuple[tuple[str, str, str, int, int], ...]) -> TeamCode:
    places: dict[str, tuple[str, int]] = {}
    imports_flax = False
    for root, folder, path, _, _ in state:
        for scanned in usage.scan(Path(folder), [Path(path)], LIBRARIES):
            imports_flax |= any(m == "flax" or m.startswith("flax.") for m in scanned.imported)
            shown = Path(path).relative_to(root).as_posix() if Path(path).is_relative_to(root) else path
            for names in scanned.uses.values():
                for name, line in names.items():
                    if name not in places or (shown, line) < places[name]:
                        places[name] = (shown, line)
    ordered = sorted(places.items(), key=lambda kv: (kv[1], kv[0]))
    return TeamCode(tuple(Use(name, f"{f}:{line}") for name, (f, line) in ordered), imports_flax)
