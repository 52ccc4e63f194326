"""A team's project's pins: its baseline from its own files (and the rest of the set they lock, which every
entry installs), its default candidate from its table or else the harness's own candidate
(harness/matrix.toml), for the packages that candidate moves."""

from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from harness.stack import paths, project
from harness.stack.pins import matrix, pins_from
from harness.stack.selection import team_code
from harness.stack.workspace import Workspace


def load(ws: Workspace) -> matrix.Pins:
    found = project.load(ws)
    defaults = matrix.load_pins(ws.matrix)
    # flax is the project's to pin only when its code imports it (harness.stack.selection.team_code).
    read = pins_from.read_source_all(found.baseline_source, found.pins_outside_index,
                                     optional=() if found.imports_flax else matrix.OPTIONAL)
    baseline = read.pins
    # The harness's candidate moves what it bumps over its own baseline; the project's other pins stay.
    # Only forward: a team already past the harness's candidate keeps its own version.
    moved = {p: v for p, v in defaults.candidate.items()
             if p in baseline and defaults.baseline.get(p) != v and Version(v) > Version(baseline[p])}
    candidate = dict(baseline, **(found.candidate if found.candidate is not None else moved))
    candidate = {p: v for p, v in candidate.items() if p in baseline or p not in matrix.OPTIONAL}
    unknown = sorted(set(candidate) - set(matrix.PACKAGES))
    if unknown:
        raise matrix.HarnessError(f"[tool.{project.TABLE}.candidate] pins {', '.join(unknown)}; "
                                  f"it may pin {', '.join(matrix.PACKAGES)}.")
    where = found.baseline_source.shown(found.root)
    candidate_from = (f"[tool.{project.TABLE}.candidate] over {where}" if found.candidate is not None
                      else f"the harness's candidate ({paths.MATRIX_FILE}) over {where}")
    return matrix.Pins(found.python or defaults.python, baseline, candidate, where, candidate_from, read.locked_with)


def optional_packages(root: Path) -> tuple[str, ...]:
    """What the project at `root` (before it has a table: all its code) may leave unpinned: flax unless it
    imports it."""
    code = team_code.read(root, team_code.files(root, (root,), (), ()))
    return () if code.imports_flax else matrix.OPTIONAL
