"""`upgrade-harness list`: the project's entries, each with its pins, as the project's table and pins give them
(and --baseline-from, --candidate ... where given): what `upgrade-harness run ENTRY` can name."""

from __future__ import annotations

from harness.errors import HarnessError
from harness.stack.pins import branch_hint, plan
from harness.stack.workspace import Workspace


def show(ws: Workspace, rest: list[str]) -> int:
    if rest:
        raise HarnessError(f"unknown arguments {rest}; list takes the project's options only (--baseline-from, "
                           "--contracts, --builtin).")
    entries = plan.told_entries(ws)
    width = max(len(name) for name in entries)
    print(f"The entries of {ws.root}, each with its pins:")
    bump = None if ws.options.plan or ws.options.candidate else branch_hint.bump(ws, ws.root)
    if bump:
        print(f"  ({bump.said}: the pair `upgrade` judges here)")
    for entry in entries.values():
        print(f"  {entry.name:{width}s}  {entry.pin_text}  ({entry.description})")
    print("`upgrade-harness upgrade` runs those its plan needs; `upgrade-harness run ENTRY` runs one (its report: "
          "reports/ENTRY.json).")
    return 0
