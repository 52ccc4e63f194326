"""Turning what a user asks for ("jax==0.9.2", "latest", "optax==latest") into exact pins that install
together, before anything runs: packages the request does not name (the rest of the stack, and of a team's
locked set: chex, scipy, its dev tools) stay at the baseline's pins when those resolve, else the newest versions
that do, and the resolution says why it moved them.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.model.report import now
from harness.stack import project
from harness.stack.workspace import Workspace
from harness.stack.pins import locks
from harness.stack.pins.locks import PIN_LINE, parse_lock
from harness.stack.pins.matrix import LATEST



@dataclasses.dataclass(frozen=True)
class Resolution:
    """Exact pins for one entry, the full lock they came with, and why any pin differs from what was asked."""

    pins: dict[str, str]
    lock: str  # the resolved requirements, as `uv pip compile` wrote them
    notes: list[str]
    resolved_at: str


def held_versions(held: tuple[str, ...]) -> dict[str, str]:
    """The team's packages its set pins exactly, once (`chex==0.1.92` -> chex: 0.1.92): those a bump may move."""
    found: dict[str, list[str]] = {}
    for line in held:
        requirement = Requirement(line)
        specs = list(requirement.specifier)
        exact = specs[0].version if len(specs) == 1 and specs[0].operator in ("==", "===") else None
        found.setdefault(canonicalize_name(requirement.name), []).append(exact)
    return {name: versions[0] for name, versions in found.items() if len(versions) == 1 and versions[0]}


def _freed(line: str) -> str:
    """The requirement at any version, its extras and marker kept (`pywin32; sys_platform == "win32"`)."""
    requirement = Requirement(line)
    requirement.specifier = SpecifierSet()
    return str(requirement)


def _requirements(named: dict[str, str], defaults: dict[str, str], free: set[str],
                  held: tuple[str, ...] = ()) -> str:
    """Requirement lines: named pins (just the name for LATEST); other packages at their default pin,
    or at any version when in `free`; the team's other packages as its set says, or at any version when free."""
    lines = []
    for pkg in dict.fromkeys([*defaults, *named]):
        version = named.get(pkg, None if pkg in free else defaults.get(pkg))
        lines.append(pkg if version in (None, LATEST) else f"{pkg}=={version}")
    lines += [_freed(line) if canonicalize_name(Requirement(line).name) in free else line for line in held]
    return "\n".join(lines + locks.harness_requirements()) + "\n"


def _compile(ws: Workspace, requirements: str, python: str, prerelease: bool, latest: frozenset[str] = frozenset()):
    """One resolution for this Python only (a universal lock may fork a package by Python version). The
    baseline's lock seeds it as uv's preferences, so packages nobody moved (ml-dtypes, scipy, chex...)
    stay at the baseline's versions instead of whatever is newest today: a change is then the bump's."""
    with tempfile.TemporaryDirectory(prefix="harness-resolve-") as scratch:
        output = Path(scratch) / "lock.txt"
        baseline_lock = project.load(ws).locks / "baseline.txt"
        if baseline_lock.exists():  # a package asked at `latest` must not be held back by its preference
            kept = [ln for ln in baseline_lock.read_text().splitlines()
                    if not ((m := PIN_LINE.match(ln.strip())) and m.group(1).lower() in latest)]
            output.write_text("\n".join(kept) + "\n")
        done = locks.uv_compile(requirements, python, output=output, prerelease=prerelease, universal=False,
                                offline=ws.options.offline)
        text = output.read_text() if done.returncode == 0 and output.exists() else ""
    return (parse_lock(text, relock=locks.lock_command(ws)), text) if done.returncode == 0 else (None, locks.uv_reason(done))


def _latest(named: dict[str, str]) -> frozenset[str]:
    return frozenset(pkg for pkg, version in named.items() if version == LATEST)


def _asked(named: dict[str, str]) -> str:
    return " ".join(f"{k}=={v}" for k, v in named.items())


def _needs(pkg: str, reason: str) -> str:
    """What uv says the package needs, e.g. 'jax>=0.11.1' from 'flax>=0.12.12 depends on jax>=0.11.1'."""
    match = re.search(rf"\b{re.escape(pkg)}[^ ]* depends on ([^ ,]+)", reason)
    return f" (it needs {match.group(1)})" if match else ""


def _follow(ws, named, defaults, python, prerelease, reason, held=()) -> tuple[dict[str, str] | None, str, list[str]]:
    """Free the unnamed packages (the team's held ones too), then pin back each one that can stay at its
    default: the fewest moves. One absent from the resolution (a marker for another platform) did not move."""
    kept = {**defaults, **held_versions(held)}
    free = set(kept) - set(named)
    found, text = _compile(ws, _requirements(named, defaults, free, held), python, prerelease, _latest(named))
    if found is None:
        return None, text, []
    for pkg in [p for p in kept if p in free and found.get(p, kept[p]) != kept[p]]:
        again, again_text = _compile(ws, _requirements(named, defaults, free - {pkg}, held), python, prerelease,
                                     _latest(named))
        if again is not None:
            free, found, text = free - {pkg}, again, again_text
    notes = [f"{pkg} {kept[pkg]} → {found[pkg]}: {kept[pkg]} does not resolve with {_asked(named)}"
             f"{_needs(pkg, reason)}" for pkg in kept if pkg in free and found.get(pkg, kept[pkg]) != kept[pkg]]
    return found, text, notes


def resolve(ws: Workspace, named: dict[str, str], defaults: dict[str, str], python: str,
            prerelease: bool = False, held: tuple[str, ...] = ()) -> Resolution:
    """Exact pins for `named` (exact or LATEST) with every other package of `defaults`, and of the team's set
    `held` (Entry.locked_with), kept at its pin when that resolves, else at the newest version that does (said in
    a note naming the package and why); HarnessError with uv's reason when nothing does. The workspace's
    baseline lock seeds the resolution."""
    found, text = _compile(ws, _requirements(named, defaults, set(), held), python, prerelease, _latest(named))
    notes: list[str] = []
    if found is None and (set(defaults) | set(held_versions(held))) - set(named):
        found, text, notes = _follow(ws, named, defaults, python, prerelease, text, held)
    if found is None:
        unreachable = "error sending request" in text or "Failed to fetch" in text
        fix = ("The package index is unreachable: run again when it is, or with --offline if uv's cache already "
               "holds these stacks (a run of the matrix's own candidate needs no index once its environments exist)."
               if unreachable else
               "Check that every version exists on the package index and that the pins fit together.")
        raise HarnessError(f"cannot resolve {_asked(named)} for Python {python}: {text}\n{fix}")
    latest = [f"{pkg} latest = {found[pkg]}" for pkg, v in named.items() if v == LATEST]
    packages = list(dict.fromkeys([*defaults, *named]))
    return Resolution({pkg: found[pkg] for pkg in packages}, text, latest + notes, now())


def write_lock(resolution: Resolution, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(resolution.lock)
