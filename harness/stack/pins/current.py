"""The pins of the project being judged: this checkout's harness/matrix.toml, or a team's own baseline
and default candidate (harness.stack.pins.project_pins). The one place that chooses between the two, so
neither the matrix nor a team's pins need the other to read theirs."""

from __future__ import annotations

import dataclasses

from harness.errors import HarnessError
from harness.stack.pins import matrix, project_pins
from harness.stack.pins.matrix import CandidateRequest, Entry, Pins
from harness.stack.workspace import Workspace


def pins(ws: Workspace) -> Pins:
    """Read now (`nox -s accept` rewrites them; `--baseline-from` may have just been given)."""
    if not ws.is_checkout:
        return project_pins.load(ws)
    if ws.options.baseline_from:
        raise HarnessError("--baseline-from is for your own project, whose golden values are recorded from that "
                           "baseline; this checkout's baseline is harness/matrix.toml. Run `upgrade-harness init` "
                           "in your project's root, then `upgrade-harness upgrade --baseline-from PATH` there.")
    return matrix.load_pins(ws.matrix)


def entries(ws: Workspace, candidate: CandidateRequest | None = None) -> dict[str, Entry]:
    """The project's entries by name, the candidate replaced by an ad-hoc request when one is given."""
    found = pins(ws)
    return matrix.entries(found, within(candidate, found.baseline), committed=ws.is_checkout,
                          baseline_given=bool(ws.options.baseline_from))


def within(candidate: CandidateRequest | None, baseline: dict[str, str]) -> CandidateRequest | None:
    """The request less the optional packages the baseline leaves out (`--candidate latest` names flax; a
    project without it installs none on either side)."""
    if candidate is None:
        return None
    kept = {p: v for p, v in candidate.pins.items() if p in baseline or p not in matrix.OPTIONAL}
    return candidate if kept == candidate.pins else dataclasses.replace(candidate, pins=kept)
