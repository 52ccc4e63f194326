"""The upgrade's plan: every entry resolved to exact pins, with its lock, before any suite starts.

A pin that does not exist or does not fit fails here, in seconds, with the resolver's reason. The
candidate's unnamed packages, and the single-package entries' other packages, stay at the baseline's
pins when those resolve, else move to the newest that do (harness.stack.pins.resolve), and say so; so do the
rest of a team's locked set (Entry.locked_with), and what a candidate's pins file changes of it is said too. A
single-package entry that cannot be resolved is kept with its problem: it is reported unresolvable
(a partial attribution), never run. Each entry's session is given its entry from the plan in its job file (harness.model.entry_job,
HARNESS_JOB), so each entry is installed from exactly the lock resolved here.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.pins import branch_hint, current, locks, matrix, resolve
from harness.stack.workspace import Workspace

PLAN_FILE = "upgrade-plan.json"
LOCKS_DIR = "locks"  # beside the plan in the reports directory: the locks it resolved, which its entries name


def _resolved(ws: Workspace, entry: matrix.Entry, named: dict[str, str], baseline: dict[str, str], locks_dir: Path,
              prerelease: bool) -> matrix.Entry:
    """The entry with the exact pins and lock its request resolves to."""
    found = resolve.resolve(ws, named, baseline, entry.python, prerelease, held=entry.locked_with)
    lock = locks_dir / f"{entry.name}.txt"
    resolve.write_lock(found, lock)
    return dataclasses.replace(entry, pins=found.pins, locked=False, lock_file=str(lock),
                               notes=entry.notes + tuple(found.notes), resolved_at=found.resolved_at)


def _set_moves(base: matrix.Entry, cand: matrix.Entry) -> tuple[str, ...]:
    """What the candidate's pins file changes in the team's set besides the pins (no single-package entry
    attributes it): `scipy 1.14.1 → 1.15.0: uv.lock locks it`."""
    before, after = resolve.held_versions(base.locked_with), resolve.held_versions(cand.locked_with)
    source = cand.pins_from
    moved = [f"{name} {before[name]} → {version}: {source} locks it" for name, version in after.items()
             if name in before and before[name] != version]
    moved += [f"{name} {version}: {source} adds it" for name, version in after.items() if name not in before]
    return tuple(moved + [f"{name} {version}: {source} drops it" for name, version in before.items()
                          if name not in after])


class BaselineUnresolvable(HarnessError):
    """The pins `--baseline-from` names do not resolve: nothing can be judged against them."""


def build(ws: Workspace, candidate: matrix.CandidateRequest | None, locks_dir: Path,
          prerelease: bool = False) -> list[matrix.Entry]:
    """The workspace's baseline, candidate and single-package entries, resolved; HarnessError when the candidate
    cannot be (BaselineUnresolvable: a baseline `--baseline-from` names)."""
    all_entries = current.entries(ws, candidate)
    base, cand = all_entries[matrix.BASELINE], all_entries[matrix.CANDIDATE]
    if cand.locked:  # the matrix's own candidate: committed locks, nothing to resolve
        return matrix.upgrade_plan(all_entries)
    written = locks.write_if_missing(ws, base)  # a project's first run: the candidate is resolved beside it
    if written:
        print(f"upgrade: wrote {written}: the baseline's stack fully resolved (commit it)")
    if not base.locked:  # --baseline-from: resolved for this run beside the others, never over the committed lock
        try:
            base = _resolved(ws, base, dict(base.pins), base.pins, locks_dir, prerelease)
        except HarnessError as exc:
            raise BaselineUnresolvable(f"the baseline's pins ({base.pins_from}) do not resolve: {exc}") from None
    # An ad-hoc candidate names its pins; a project's default candidate, what it moves from the baseline.
    named = ({p: v for p, v in candidate.pins.items() if p in cand.pins} if candidate is not None
             else {p: v for p, v in cand.pins.items() if base.pins.get(p) != v})
    if candidate is not None and candidate.source is not None:  # a pins file's set, which may differ
        cand = dataclasses.replace(cand, notes=_set_moves(base, cand))
    cand = _resolved(ws, cand, named, base.pins, locks_dir, prerelease)
    singles = []
    for single in matrix.single_package_entries(base, cand):
        group = {p: cand.pins[p] for p in single.pins if single.pins[p] != base.pins[p]}
        try:
            singles.append(_resolved(ws, single, group, base.pins, locks_dir, prerelease))
        except HarnessError as exc:
            singles.append(dataclasses.replace(single, locked=False, problem=str(exc)))
    return [base, cand, *singles]


def _relative(lock_file: str | None, folder: Path) -> str | None:
    """A lock beside the plan, named relative to it: the plan still holds where it is moved or downloaded
    (a finished run's published reports/, a CI job's artifact)."""
    if lock_file is None or not Path(lock_file).absolute().is_relative_to(folder):
        return lock_file
    return Path(lock_file).absolute().relative_to(folder).as_posix()


def write(entries: list[matrix.Entry], path: Path) -> None:
    folder = path.parent.absolute()
    rows = [dataclasses.asdict(dataclasses.replace(e, lock_file=_relative(e.lock_file, folder))) for e in entries]
    path.write_text(json.dumps(rows, indent=1) + "\n")


def read(path: Path) -> dict[str, matrix.Entry]:
    """The plan's entries by name (for the child sessions), their locks as paths to open."""
    folder = path.parent.absolute()
    try:
        rows = json.loads(path.read_text())
        return {row["name"]: matrix.Entry(**{**row, "notes": tuple(row["notes"]), "lock_file": row["lock_file"] and
                                             str(folder / row["lock_file"]),
                                             "locked_with": tuple(row.get("locked_with", ()))}) for row in rows}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(f"the upgrade's plan {path} is unreadable ({exc}); run `nox -s upgrade` again.") from None


def told_entries(ws: Workspace) -> dict[str, matrix.Entry]:
    """The entries a session process runs when told no job: the plan it names (--plan), else the project's
    pins with the candidate it is told (--candidate), or in a branch that bumps the default branch's pins with
    neither side told, that bump against the default branch's pins, as `upgrade` judges it. What `upgrade-harness
    run NAME` may name, too."""
    if ws.options.plan:
        return read(ws.options.plan)
    if ws.options.candidate:
        return current.entries(ws, matrix.CandidateRequest.parse(ws.options.candidate))
    found = branch_hint.bump(ws, ws.root)
    if found is None:
        return current.entries(ws)
    # A branch that bumps the default branch's pins: the pair `upgrade` judges there (its
    # _judged_as_the_pull_request), so `list`, `nox -l` and `run NAME` name what an upgrade would run.
    return current.entries(*branch_hint.as_pull_request(ws, found))
