"""In a team's project the built-in contracts are judged against the tool's own golden values, which
were recorded with the tool's baseline stack. A team whose baseline pins another stack is told before
anything runs, with the command that records its own copy."""

from __future__ import annotations

import json
from pathlib import Path

from harness import golden_layout
from harness.stack import paths
from harness.stack.pins.matrix import Entry


def tool_versions(platform: str | None = None) -> dict[str, str]:
    """The stack the tool's built-in golden values (those of `platform`) were recorded with (their provenance)."""
    for path in sorted(paths.builtin_golden(platform).glob("*.json")):
        try:
            return dict(json.loads(path.read_text())["provenance"]["versions"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return {}


def mismatch_note(baseline: Entry, golden: Path, platform: str | None = None) -> str | None:
    """What the team should know when its baseline is not the stack of the tool's golden values and it
    has recorded no copy of its own; None when the two agree or the team has its own."""
    recorded = tool_versions(platform)
    from_tool = sorted(p.stem for p in paths.builtin_golden(platform).glob("*.json")
                       if golden_layout.team_copy(golden, p.stem) is None)
    differ = {k: (recorded[k], v) for k, v in baseline.pins.items() if k in recorded and recorded[k] != v}
    if not from_tool or not differ:
        return None
    said = ", ".join(f"{k} {theirs} (the tool's: {ours})" for k, (ours, theirs) in sorted(differ.items()))
    return (f"your baseline pins {said}: the built-in contracts' golden values of {', '.join(from_tool)} come with "
            "the tool and were recorded with its own stack, so they will not hold on yours. Record your copy once "
            "with `upgrade-harness golden --record-builtin` (it goes to the builtin/ folder of your golden "
            "directory), or run only your own contracts (builtin = false).")
