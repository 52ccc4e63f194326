"""The project's entries (baseline, candidate, the single-package ones): `list` shows each with its pins, as
the project's table and pins give them (and --baseline-from, --candidate ... where given); `run ENTRY` runs
one entry's contracts (its own session, harness.stack.sessions); `lock` writes the locked entries' locks."""

from __future__ import annotations

import argparse

from harness.errors import HarnessError
from harness.stack.commands import options
from harness.stack.environments.interpreters import find_python
from harness.stack.pins import branch_hint, locks, matrix, plan
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


def lock(call: options.Invocation) -> int:
    """Regenerate the committed locks (the full resolved stack of each locked entry) with uv."""
    options.parse(LOCK, call.argv, prog=options.prog(call.ws, "lock"))  # --help: nothing written
    entries = plan.told_entries(call.ws)
    find_python(entries[matrix.BASELINE].python)  # the entries' Python, as their sessions need it
    locks.write_locks(call.ws, call.session, [e for e in entries.values() if e.locked])
    return 0


LOCK = options.Usage(description="Write the locks of the locked entries (a team's project: its baseline's, in its "
                                 "locks directory): their pins fully resolved, with uv.")
COMMANDS = (
    options.Declaration("list", "The project's entries, each with its pins.", options.Usage(
        description="The project's entries (baseline, candidate, the single-package ones), each with its pins."),
        lambda call: show(call.ws, list(call.argv)), route=options.Route.HERE),
    options.Declaration("run", "One entry's contracts.", options.Usage(
        description="One entry's contracts (`upgrade-harness list` names the entries), its report in "
                    "reports/ENTRY.json; what follows `--` goes to pytest.", own=(
            options.own("entry", metavar="ENTRY"), options.own("pytest", nargs=argparse.REMAINDER,
                                                               metavar="-- PYTEST_ARGS"))),
        None, route=options.Route.ENTRY_SESSION),  # each entry's own session runs it (harness.stack.sessions)
    options.Declaration("lock", "Regenerate the committed locks (the full resolved stack of each locked matrix "
                                "entry) with uv.", LOCK, lock, session=options.Session.HOST,
                        route=options.Route.SESSION),
)
