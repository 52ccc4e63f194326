"""The candidate an upgrade judges, as the command line names it: `--candidate PINS` typed out, or
`--candidate-from [REV:]PATH`, a pins file read as the baseline's is, so a branch's bump of any of the
team's pins is judged with the pins neither side changed kept."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.stack import pins_source, project
from harness.stack.pins import matrix, pins_from
from harness.stack.workspace import Workspace


def request(ws: Workspace, typed: str | None, source: Path | None,
            invoked_from: Path) -> matrix.CandidateRequest | None:
    """The candidate asked for (None: the project's default); HarnessError naming the fix for bad input."""
    if typed is not None and source is not None:
        raise HarnessError("--candidate and --candidate-from both name the candidate; give one: --candidate-from "
                           "PATH to judge the pins of a file (REV:PATH for a git revision's), --candidate PINS for "
                           "pins typed out.")
    if source is None:
        return None if typed is None else matrix.CandidateRequest.parse(typed)
    found = project.load(ws)
    where = pins_source.parse(str(source), invoked_from)
    read = pins_from.read_source_all(where, found.pins_outside_index, side="candidate",
                                     optional=() if found.imports_flax else matrix.OPTIONAL)
    shown = where.shown(found.root)
    # Pins equal to the baseline's are judged too (a pull request that changes only contracts or code): the
    # two entries install one stack, which runs once (harness.stack.run.report_cache).
    return matrix.CandidateRequest(f"--candidate-from {shown}", read.pins, shown, read.locked_with)
