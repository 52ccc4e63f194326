"""An upgrade's first step: its options read and checked, then its plan resolved once and written
(reports/upgrade-plan.json), before any suite runs. `nox -s upgrade` starts with it; so does
`nox -s plan`, CI's first job, which then hands the plan to one job per entry."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from harness import run_options
from harness.errors import HarnessError
from harness.model.enums import BuiltinMode
from harness.model.report import now
from harness.stack import project
from harness.stack.run import builtin_golden, golden_changes, run_directory
from harness.stack.entry_side import entry as stack_entry
from harness.stack.run import preflight
from harness.stack.pins import branch_hint, candidate_from, current, matrix, plan
from harness.stack.run.entry_runs import new_run_id
from harness.stack.environments.interpreters import find_python
from harness.stack.workspace import Workspace


def prepare(ws: Workspace, args: argparse.Namespace,
            invoked_from: str | None) -> tuple[Workspace, argparse.Namespace]:
    """A Python, a writable reports directory and a plan that can run (harness.stack.run.preflight),
    for the options harness.stack.commands.upgrade.parse_options read: HarnessError (exit 2) before anything runs or
    moves. The workspace with the reports directory the arguments name (`--reports DIR`), and the arguments."""
    args.run_id = new_run_id()
    args.typed_in = str(Path(invoked_from or ".").resolve())  # where paths are shown relative to
    _judged_as_the_pull_request(ws, args)
    # This run's --contracts / --builtin / --no-builtin / --baseline-from (and its id) reach the plan, every
    # entry and the verdict through the workspace handed down (and each child's environment built from it).
    given = run_options.absolute(run_options.from_namespace(args), Path(invoked_from or "."))
    ws = ws.with_options(dataclasses.replace(given, run_id=args.run_id, offline=bool(args.offline)))
    # Parsed (or read, --candidate-from) once, here: bad input is told before anything else.
    args.candidate = candidate_from.request(ws, args.candidate, args.candidate_from, Path(args.typed_in))
    find_python(current.pins(ws).python)  # a project may set its own
    if args.reports:
        ws = ws.with_reports((Path(invoked_from or ".") / args.reports).resolve())
    run_directory.check(ws)
    run_directory.check_writable(ws.reports, elsewhere="give --reports another directory")
    # Every committed lock, interpreter and golden file, before anything is moved, written or run.
    preflight.check(ws, matrix.upgrade_plan(current.entries(ws, args.candidate)))
    return ws, args


def _judged_as_the_pull_request(ws: Workspace, args: argparse.Namespace) -> None:
    """In a branch whose pins file bumps the default branch's, with neither side chosen: the branch's bump is
    what the team means to judge (its lock may already be the bump's, its golden values accepted from it), so
    the run judges it as the pull-request check does, and says so; the default candidate needs --candidate."""
    if args.candidate is not None or args.candidate_from is not None or args.baseline_from is not None:
        return
    found = branch_hint.bump(ws, Path(args.typed_in))
    if found is None:
        return
    args.baseline_from, args.candidate_from = Path(found.baseline_from), Path(found.path)
    print(f"upgrade: {found.said}: judging that bump, as the pull-request check does ({found.command}); "
          "another candidate: --candidate PINS")


class CannotStart(HarnessError):
    """The plan cannot run: a pin that does not resolve, or a resolved lock that fails its checks. Raised
    before any entry starts, so `upgrade` publishes nothing (the last finished run's verdict stays)."""


def resolve(ws: Workspace, args) -> list[matrix.Entry]:
    """Every entry resolved and checked before any suite runs. CannotStart when the candidate cannot be
    resolved (its unresolvable report written into ws.reports first: the run's own directory under
    `upgrade`, the reports directory under `nox -s plan`) or when a resolved lock fails its checks."""
    try:
        entries = plan.build(ws, args.candidate, ws.reports / plan.LOCKS_DIR, args.pre)
    except HarnessError as exc:
        side = matrix.BASELINE if isinstance(exc, plan.BaselineUnresolvable) else matrix.CANDIDATE
        requested = current.entries(ws, args.candidate)[side]
        stack_entry.write_unresolvable(ws.reports, requested, str(exc), now(), run_id=ws.options.run_id)
        raise CannotStart(f"{exc}\nCANNOT JUDGE: {side} is unresolvable (exit status 2; "
                          f"{ws.reports}/{side}.json says why)") from None
    try:
        preflight.check(ws, entries)  # the locks the plan resolved, too
    except HarnessError as exc:
        raise CannotStart(str(exc)) from None
    plan.write(entries, ws.reports / plan.PLAN_FILE)
    # The branch's golden values against the base branch's, beside the plan (CI's plan job has the history).
    changed = golden_changes.write(ws, ws.reports)
    if changed is not None and changed.line:
        print(f"upgrade: {changed.line}")
    found = project.load(ws)
    runs_builtin = found.builtin != BuiltinMode.OFF and not ws.is_checkout
    note = builtin_golden.mismatch_note(entries[0], found.golden, ws.options.platform) if runs_builtin else None
    if note:
        print(f"upgrade: note: {note}")
    for entry in entries:
        for note in entry.notes:
            print(f"upgrade: {entry.name}: {note}")
    for line in branch_hint.told(ws, args, entries, Path(args.typed_in)):
        print(f"upgrade: {line}")
    return entries
