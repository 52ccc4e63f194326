"""`nox -s golden` (`upgrade-harness golden`): its options, and the recording, all or nothing.

One recording writes from two pytest processes (the main suite's, and the multi-device family's beside it:
harness.stack.entry_side.multi_device), each its own golden files, and the checkpoints family writes its
baseline checkpoint into golden/checkpoints/. Each process refuses on its own what it cannot write, so without
more, a family that passed was written while another failed. Instead, the recording writes into a staged copy
of the project's pins, locks and golden values (harness.stack.staging), and its files move into place only when
the whole recording succeeded; a failed or interrupted one leaves the project as it was and its staged copy
removed. Under accept, which stages the recording itself (HARNESS_STAGE), it writes into accept's staged copy
and accept moves it with the pins and locks.

The departures an acceptance's recording made: statements the new baseline breaks, recorded as its behaviour
(harness.model.departure), and those it dropped because they hold again; read from the golden files before and
after (the staged copy), for accept's output and its golden/CHANGELOG.md entry.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from harness import run_options
from harness.errors import HarnessError
from harness.model import departure
from harness.model.departure import Departure
from harness.model.enums import BuiltinMode
from harness.stack import project, staging
from harness.stack.commands import frame, options
from harness.stack.entry_side import entry as stack_entry, noise_runs
from harness.stack.pins import current, matrix
from harness.stack.run import run_directory, run_plan
from harness.stack.workspace import Workspace


Say = Callable[[str], None]


def mirrored(ws: Workspace) -> list[Path]:
    """What a recording or an acceptance may change, copied into the stage first: the pins (this checkout's
    matrix.toml; a team's pins file is its own), the locks and the golden values."""
    found = project.load(ws)
    return ([ws.matrix] if ws.is_checkout else []) + [found.locks, found.golden]


def record(ws: Workspace, run: Callable[[Workspace], None], say: Say) -> None:
    """`run` the recording in `ws` staged: its changes moved into place once it returned, none if it raised."""
    if ws.stage is not None:  # accept's: accept moves what its recording staged, with the pins and locks
        run(ws)
        return
    with staging.exclusive(ws.root):
        staging.recover(ws.root, say)
        stage = staging.create(ws.root, mirrored(ws))
        try:
            run(ws.staged(stage.files))
            moves = staging.changed(stage)
        except BaseException:
            staging.discard(stage)
            say("golden: NOT written: the recording did not succeed (see above); nothing it recorded was moved "
                "into place, in either process: the project's golden values are as they were")
            raise
        staging.commit(stage, moves)
    moved = [m.path for m in moves]
    say(f"golden: moved into place at once: {', '.join(_folded(moved)) or 'nothing (all as recorded already)'}")


def _folded(paths: list[str]) -> list[str]:
    """The files moved, a checkpoint's many files as its folder: golden/checkpoints/float32/ (12 files)."""
    shown: dict[str, int] = {}
    for path in paths:
        parts = Path(path).parts
        key = f"{'/'.join(parts[:3])}/" if len(parts) > 3 else path
        shown[key] = shown.get(key, 0) + 1
    return [key if n == 1 else f"{key} ({n} files)" for key, n in shown.items()]


@dataclasses.dataclass(frozen=True)
class DepartureChanges:
    recorded: list[Departure] = dataclasses.field(default_factory=list)  # new, or recorded again with other values
    dropped: list[Departure] = dataclasses.field(default_factory=list)  # no longer observed: the statements hold


def _entries(folder: Path) -> dict[tuple[str, str], dict]:
    """Every departure entry of a golden folder's family files, by (file, key); an unreadable file has none."""
    found = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            values = json.loads(path.read_text()).get("values") or {}
        except (OSError, ValueError, AttributeError):
            continue
        found.update({(path.name, key): entry for key, entry in values.items()
                      if key.startswith(departure.KEY) and departure.of_entry(entry) is not None})
    return found


def between(before: Path, after: Path) -> DepartureChanges:
    """What the golden folder `after` records of departures that `before` did not, and what it dropped."""
    old, new = _entries(before), _entries(after)
    recorded = [departure.of_entry(entry) for where, entry in new.items() if old.get(where) != entry]
    dropped = [departure.of_entry(entry) for where, entry in old.items() if where not in new]
    return DepartureChanges(recorded, dropped)


def recorded_text(found: Departure) -> str:
    """A departure recorded: the check, the statement and how far the release was from it."""
    return (f"`{found.check}`: {found.statement} departs from its stated {departure.stated(found)}"
            f" ({departure.size_text(found.size)})")


def dropped_text(found: Departure) -> str:
    """A departure dropped: its statement holds again."""
    return (f"`{found.check}`: {found.statement} holds again (its departure since "
            f"{departure.stack_text(found.recorded_on)} is dropped)")


USAGE = options.Usage(run_options=run_options.GOLDEN, prog="golden", strict=True)


def parse(argv, prog: str = "golden") -> run_options.RunOptions:
    """`golden`'s options: its own flags and the project options; HarnessError naming them all otherwise,
    HelpShown after printing its usage (`prog`: the command typed)."""
    argv = list(argv)
    if "-h" in argv or "--help" in argv:
        usage = options.parser(USAGE)
        usage.prog = prog
        usage.print_help()
        raise frame.HelpShown()
    given, rest = options.split(argv)
    own = [s.flags[0] for s in run_options.specs(run_options.HOST).values() if run_options.GOLDEN in s.commands]
    try:
        known, unknown = options.parser(USAGE).parse_known_args(rest)
    except SystemExit:  # argparse has printed what is wrong, e.g. --reason without its text
        unknown = rest
    if unknown:
        raise HarnessError(f"unknown arguments {unknown}; it takes {', '.join(own)} (--reason TEXT), --contracts "
                           "DIR, --builtin judge|report|all, --no-builtin")
    return run_options.given_over(options.run_options_of(known), given)  # the project options as split() read them


def golden(call: options.Invocation) -> int:
    """Record golden values from the baseline entry; refuses to change values without --accept-changes.
    In a team's project only its own contracts are recorded: the built-in ones are judged against the
    tool's own values unless --record-builtin records the team's copy (a baseline unlike the tool's)."""
    given = parse(call.argv, prog=options.prog(call.ws, "golden"))
    ws = call.ws.with_options(run_options.absolute(given, call.invoked_from))
    if given.record_builtin:
        if given.builtin == BuiltinMode.OFF.value:
            raise HarnessError("--record-builtin records the built-in contracts' values, --no-builtin skips "
                               "them: give one of the two.")
        # Run them, whatever the table's builtin says.
        ws = ws.with_options(run_options.RunOptions(builtin=BuiltinMode.JUDGE.value))
    elif not ws.is_checkout:
        ws = ws.with_options(run_options.RunOptions(builtin=BuiltinMode.OFF.value))
        try:
            project.load(ws)
        except HarnessError as exc:
            raise HarnessError(f"{str(exc).rstrip('.')}; the built-in contracts are judged against the tool's "
                               "own golden values (`--record-builtin` records your copy, for a baseline unlike "
                               "the tool's).") from None
    if given.measure_host and (given.accept_changes or given.reason is not None):
        raise HarnessError("--measure-host records no value, only this host's move of the recorded ones: give it "
                           "without --accept-changes and --reason.")
    if given.reason is not None and not given.accept_changes:
        raise HarnessError("--reason says why recorded golden values change: give it with --accept-changes "
                           "(values only added need no reason).")
    if given.reason is not None and not given.reason.strip():
        raise HarnessError('--reason is empty: say why the values change, e.g. --reason "weight decay doubled".')
    accepting = run_options.specs()["accept_changes"].pytest  # the contract side's spelling of --accept-changes
    args = ["--harness-record-golden"] + ([accepting] if given.accept_changes else [])
    if given.accept_changes:  # what wrote the changed files, and why (harness.model.golden_changes reads it)
        args += [f"--harness-accepted-by={'accept' if ws.stage else 'golden --accept-changes'}"]
        args += [f"--harness-accept-reason={given.reason}"] if given.reason else []
    baseline = current.entries(ws)[matrix.BASELINE]  # read now: --baseline-from may have just been given
    # Where it writes, before it records: a file in place of either was a traceback after the recording.
    run_directory.check_writable(ws.reports)
    if problem := run_plan.store_problem(project.load(ws).golden):
        raise HarnessError(problem)
    session = call.session

    def measuring(staged: Workspace) -> None:
        stack_entry.install_entry(session, staged, baseline, ["golden-recording"])
        here = noise_runs.record_here(session, staged, baseline)
        session.run("python", "-m", "harness.contract.host_measure", str(project.load(staged).golden), str(here))

    def recording(staged: Workspace) -> None:
        stack_entry.install_entry(session, staged, baseline, ["golden-recording"])
        noise_runs.quick_pass(session, staged, baseline)  # a team's contract that fails stops here, once
        # Your contracts compiled to round differently first: each value's numerical noise is recorded beside it;
        # then every contract recorded on each host this machine emulates: each value's host noise beside it.
        noise = noise_runs.record_noise(session, staged, baseline)  # side by side, up to the cores
        # The recorded checkpoints go to golden/; the run's own are no rollback's to read: none kept in reports/.
        stack_entry.run_entry(session, staged, baseline, pytest_args=args + noise, report_name="golden-recording",
                              install=False, rollback_reads=False, whole=True)  # one process records every family

    # Both pytest processes and the checkpoints write into a staged copy, moved into place only if all succeed.
    record(ws, measuring if given.measure_host else recording,
           lambda line: print(line, flush=True))  # beside the contract side's lines
    return 0


COMMANDS = (options.Declaration(
    "golden", "Record golden values from the baseline entry; refuses to change values without --accept-changes.",
    USAGE, golden, session=options.Session.STACK, route=options.Route.SESSION),)
