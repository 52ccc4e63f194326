"""`upgrade-harness accept` in a team's project: the judged candidate adopted as the baseline.

A team's baseline pins live in its own file ([tool.upgrade-harness] baseline-from: requirements.txt,
pyproject.toml, uv.lock), which the tool does not edit: a bump is a change of that file, in a branch or a
bot's pull request. Once the file pins what the verdict judged as the candidate, accept does the rest all
or nothing (harness.stack.staging): the baseline's lock and the team's own golden values recorded from
it. While the file still pins what the verdict judged as the baseline, it prints the whole flow as one
block and changes nothing (exit 2).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.model.report import Report
from harness.stack import project, staging
from harness.stack.commands import accept as checkout_accept, frame, golden_record, options
from harness.stack.commands.accept import Printer, Steps
from harness.stack.pins import branch_hint, current, matrix
from harness.stack.run import run_directory
from harness.stack.workspace import Workspace

COMMAND = "upgrade-harness"


def _ran(report: Report, packages: list[str]) -> dict[str, str | None]:
    return {p: report.environment.versions.get(p) for p in packages}


def _pins_text(pins: dict[str, str | None]) -> str:
    return ", ".join(f"{p}=={v}" for p, v in pins.items())


def flow(pins_file: str, wanted: dict[str, str | None], headline: str) -> str:
    """The team's whole flow, as one block to follow."""
    return (f"accept: the verdict judged the candidate {_pins_text(wanted)} ({headline}).\n"
            f"accept: your baseline is what {pins_file} pins, and {COMMAND} does not edit that file. To accept:\n"
            f"  1. in {pins_file}, pin {_pins_text(wanted)} (or merge the pull request that does)\n"
            f"  2. {COMMAND} accept        re-locks the baseline and records your golden values from it\n"
            f"  3. commit {pins_file}, the lock and golden/ together\n"
            "Nothing was changed.")


def accept(ws: Workspace, argv, steps: Steps | None = None, invoked_from: Path | None = None) -> int:
    """The exit status: 0 accepted (or nothing to accept), 2 refused or not yet possible (the flow printed)."""
    steps = steps or Steps.real(ws)
    return frame.execute(frame.Command("accept: refused", functools.partial(options.parse, "team-accept"),
                                       lambda args: _held(ws, steps, args, argv, invoked_from)), argv)


def _held(ws: Workspace, steps: Steps, args, argv, invoked_from: Path | None) -> int:
    """Accept in the reports `--reports DIR` names, holding the run lock and the project's staging lock."""
    if args.reports:
        ws = ws.with_reports((Path(invoked_from or ".") / args.reports).resolve())
    with run_directory.hold(ws.reports, [COMMAND, "accept", *argv]):
        with staging.exclusive(ws.root):
            staging.recover(ws.root, Printer.log, steps.replace)
            return _accept(ws, steps, args.reason)


def _accept(ws: Workspace, steps: Steps, reason: str | None) -> int:
    found = project.load(ws)
    base, candidate, verdict = checkout_accept.judged(ws, command=COMMAND)
    pinned = current.pins(ws).baseline
    packages = [p for p in matrix.PACKAGES if p in pinned]
    judged_base, wanted = _ran(base, packages), _ran(candidate, packages)
    pins_file = str(found.baseline_from.relative_to(ws.root)) if found.baseline_from else "your pins file"
    if wanted == judged_base:
        print(f"accept: nothing to accept: the candidate ran the baseline's versions ({_pins_text(wanted)}).")
        return 0
    if pinned == judged_base:
        print(flow(pins_file, wanted, verdict.headline))
        return EXIT_CANNOT_JUDGE
    if pinned != wanted:
        # Against the default branch's pins (a branch has committed its bump; HEAD would judge it against itself).
        branch = branch_hint.default_branch(ws.root) or "HEAD"
        raise HarnessError(f"{pins_file} pins {_pins_text(pinned)}: neither the judged baseline "
                           f"({_pins_text(judged_base)}) nor the judged candidate ({_pins_text(wanted)}). To judge "
                           f"what it pins now against {branch}'s, from the project's root: `{COMMAND} upgrade "
                           f"--baseline-from {branch}:{pins_file} --candidate-from {pins_file}`, then `{COMMAND} "
                           "accept`; or pin the judged candidate exactly.")
    checkout_accept.check_golden_committed(ws, steps, golden=found.golden)
    print(f"accept: {pins_file} pins the judged candidate ({_pins_text(wanted)}; {verdict.headline}); re-locking "
          "and recording your golden values from it", flush=True)
    stage = staging.create(ws.root, golden_record.mirrored(ws))
    try:
        steps.lock(stage, [current.entries(ws)[matrix.BASELINE]])
        # The values move with the judged bump: its verdict is the reason when the team gives none.
        said = reason or f"the judged candidate {_pins_text(wanted)} ({verdict.headline})"
        code = steps.record_golden(stage, said)
        if code:
            raise checkout_accept.recording_failed(ws, code)
        moves = staging.changed(stage)
        departures = golden_record.between(found.golden, stage.copy_of(found.golden))
    except Exception as exc:  # noqa: BLE001  any failure: nothing moved yet
        staging.discard(stage)
        problem = str(exc) if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
        print(f"accept: stopped: {problem}\nNothing was changed (every change was prepared aside and is dropped); "
              f"fix that and run `{COMMAND} accept` again.", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    staging.commit(stage, moves, steps.replace)
    print(f"accept: wrote {', '.join(m.path for m in moves) or 'nothing (already recorded)'}")
    checkout_accept.say_departures(departures)
    print(f"accept: next: review `git diff`, then commit {pins_file}, "
          f"{found.locks.relative_to(ws.root)}/ and {found.golden.relative_to(ws.root)}/ together.")
    return 0
