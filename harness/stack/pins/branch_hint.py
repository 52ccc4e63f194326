"""What an upgrade says, before it runs, about the sides it judges: where each side's pins came from when
an option chose them; when none did, in a branch whose pins file differs from the default branch's, the
bump it could judge instead and the exact command (it still runs what it was asked)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness import revision_path
from harness.errors import HarnessError
from harness.stack import project
from harness.stack.pins import candidate_from, matrix, pins_from
from harness.stack.pins.pin_files import git
from harness.stack.pins_source import PinsSource
from harness.stack.workspace import Workspace


def default_branch(repository: Path) -> str | None:
    """origin/HEAD's branch (`origin/main`), else a local main or master; None outside git (no git process
    asked: `list` and `nox -l` read the entries in any project)."""
    if not any((folder / ".git").exists() for folder in (repository.resolve(), *repository.resolve().parents)):
        return None
    remote = git(repository, "rev-parse", "--abbrev-ref", "origin/HEAD")
    if remote.returncode == 0 and remote.stdout.decode().strip() not in ("", "origin/HEAD"):
        return remote.stdout.decode().strip()
    for name in ("main", "master"):
        if git(repository, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}").returncode == 0:
            return name
    return None


@dataclasses.dataclass(frozen=True)
class Bump:
    """This branch's pins file against the default branch's: what moved, and the sides that judge it."""

    default: str  # the default branch (`origin/main`)
    path: str  # the pins file, as typed from the directory the command runs in
    moved: list[str]  # "optax 0.2.6 → 0.2.8"

    @property
    def baseline_from(self) -> str:
        return f"{self.default}:{self.path}"

    @property
    def command(self) -> str:
        return f"upgrade-harness upgrade --baseline-from {self.baseline_from} --candidate-from {self.path}"

    @property
    def said(self) -> str:
        return f"this branch's {self.path} bumps {', '.join(self.moved)} over {self.default}'s"


def bump(ws: Workspace, invoked_from: Path) -> Bump | None:
    """The branch's bump of the project's pins file over the default branch's; None when there is none (no
    git, the same pins, a file either side cannot give, or --baseline-from)."""
    if ws.is_checkout or ws.options.baseline_from:
        return None
    found = project.load(ws)
    ours = found.baseline_source
    default = default_branch(found.root)
    if ours is None or default is None:
        return None
    try:
        optional = () if found.imports_flax else matrix.OPTIONAL
        before = pins_from.read_source(PinsSource(ours.path, default), found.pins_outside_index, optional=optional)
        after = pins_from.read_source(ours, found.pins_outside_index, side="candidate", optional=optional)
    except HarnessError:
        return None
    moved = [f"{pkg} {before.get(pkg, 'unpinned')} → {after.get(pkg, 'unpinned')}" for pkg in matrix.PACKAGES
             if before.get(pkg) != after.get(pkg)]  # flax is unpinned in a project that does not use it
    return Bump(default, ours.shown(invoked_from), moved) if moved else None


def as_pull_request(ws: Workspace, found: Bump) -> tuple[Workspace, matrix.CandidateRequest]:
    """The workspace told the default branch's pins as its baseline, and the branch's pins as the candidate: the
    sides `upgrade` judges in a bump branch when no option chose one. `found` read from the project's root."""
    told = dataclasses.replace(ws.options, baseline_from=Path(revision_path.absolute(found.baseline_from, ws.root)))
    moved = ws.with_options(told)
    return moved, candidate_from.request(moved, None, Path(found.path), ws.root)


def line(ws: Workspace, invoked_from: Path) -> str | None:
    """The branch's bump and the command that judges it; None when there is none."""
    found = bump(ws, invoked_from)
    return f"{found.said}; to judge that bump: {found.command}" if found else None


def told(ws: Workspace, candidate: matrix.CandidateRequest | None, entries: list[matrix.Entry],
         invoked_from: Path) -> list[str]:
    """The lines to print: the sides' sources when an option chose one, else the branch's bump if any
    (`candidate`: the one asked for, None: the project's default)."""
    # `upgrade-harness` hands --baseline-from to its nox session, which is told it (the workspace's options).
    if ws.options.baseline_from or ws.options.candidate_from:
        base, cand = entries[0], entries[1]
        return [f"baseline's pins from {base.pins_from}; candidate's from {cand.pins_from}"]
    hint = line(ws, invoked_from) if candidate is None else None
    return [hint] if hint else []
