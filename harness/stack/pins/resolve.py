"""Turning what a user asks for ("jax==0.9.2", "latest", "optax==latest") into exact pins that install
together, before anything runs: packages the request does not name stay at the baseline's pins when
those resolve, else the newest versions that do, and the resolution says why it moved them.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

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


def _requirements(named: dict[str, str], defaults: dict[str, str], free: set[str]) -> str:
    """Requirement lines: named pins (just the name for LATEST); other packages at their default pin,
    or at any version when in `free`."""
    lines = []
    for pkg in dict.fromkeys([*defaults, *named]):
        version = named.get(pkg, None if pkg in free else defaults.get(pkg))
        lines.append(pkg if version in (None, LATEST) else f"{pkg}=={version}")
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


def _follow(ws, named, defaults, python, prerelease, reason) -> tuple[dict[str, str] | None, str, list[str]]:
    """Free the unnamed packages, then pin back each one that can stay at its default: the fewest moves."""
    free = set(defaults) - set(named)
    found, text = _compile(ws, _requirements(named, defaults, free), python, prerelease, _latest(named))
    if found is None:
        return None, text, []
    for pkg in [p for p in defaults if p in free and found.get(p) != defaults[p]]:
        again, again_text = _compile(ws, _requirements(named, defaults, free - {pkg}), python, prerelease,
                                     _latest(named))
        if again is not None:
            free, found, text = free - {pkg}, again, again_text
    notes = [f"{pkg} {defaults[pkg]} → {found[pkg]}: {defaults[pkg]} does not resolve with {_asked(named)}"
             f"{_needs(pkg, reason)}" for pkg in defaults if pkg in free and found.get(pkg) != defaults[pkg]]
    return found, text, notes


def resolve(ws: Workspace, named: dict[str, str], defaults: dict[str, str], python: str,
            prerelease: bool = False) -> Resolution:
    """Exact pins for `named` (exact or LATEST) with every other package of `defaults` kept at its pin when
    that resolves, else at the newest version that does; HarnessError with uv's reason when nothing does.
    The workspace's baseline lock seeds the resolution."""
    found, text = _compile(ws, _requirements(named, defaults, set()), python, prerelease, _latest(named))
    notes: list[str] = []
    if found is None and set(defaults) - set(named):
        found, text, notes = _follow(ws, named, defaults, python, prerelease, reason=text)
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
