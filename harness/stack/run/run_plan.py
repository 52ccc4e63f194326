"""An upgrade's first step: its options read and checked, then its plan resolved once and written
(reports/upgrade-plan.json), before any suite runs. `nox -s upgrade` starts with it; so does
`nox -s plan`, CI's first job, which then hands the plan to one job per entry.

What an upgrade needs, checked before its first suite starts: a damaged lock, a missing interpreter,
an unreadable golden store or a host library missing (harness.stack.environments.host_libraries) would
otherwise cost a whole suite's run before the verdict says why.

The checks write nothing: a refused plan leaves the reports directory exactly as it was.

In a team's project the built-in contracts are judged against the tool's own golden values, which
were recorded with the tool's baseline stack. A team whose baseline pins another stack is told before
anything runs, with the command that records its own copy.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness import golden_layout, platforms, run_options
from harness.errors import HarnessError
from harness.run_options import RunOptions
from harness.model.enums import BuiltinMode
from harness.model.report import now
from harness.stack import paths, project
from harness.stack.entry_side import entry as stack_entry
from harness.stack.environments import host_libraries
from harness.stack.environments.interpreters import find_python
from harness.stack.pins import branch_hint, candidate_from, current, locks, matrix, plan
from harness.stack.pins.matrix import Entry
from harness.stack.run import golden_changes, run_directory
from harness.stack.run.entry_runs import new_run_id
from harness.stack.workspace import Workspace


def tool_versions(platform: str | None = None) -> dict[str, str]:
    """The stack the tool's built-in golden values (those of `platform`) were recorded with (their provenance)."""
    for path in sorted(paths.builtin_golden(platform).glob("*.json")):
        try:
            return dict(json.loads(path.read_text())["provenance"]["versions"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return {}


def mismatch_note(baseline: Entry, golden: Path, platform: str | None = None, reported: bool = False) -> str | None:
    """What the team should know when its baseline is not the stack of the tool's golden values and it
    has recorded no copy of its own; None when the two agree or the team has its own. `reported`: the built-in
    contracts are reported only, so a check the baseline fails is judged against its own values (a copy is optional)."""
    recorded = tool_versions(platform)
    from_tool = sorted(p.stem for p in paths.builtin_golden(platform).glob("*.json")
                       if golden_layout.team_copy(golden, p.stem) is None)
    differ = {k: (recorded[k], v) for k, v in baseline.pins.items() if k in recorded and recorded[k] != v}
    if not from_tool or not differ:
        return None
    said = ", ".join(f"{k} {theirs} (the tool's: {ours})" for k, (ours, theirs) in sorted(differ.items()))
    if reported:
        return (f"your baseline pins {said}: the built-in contracts' golden values of {', '.join(from_tool)} come "
                "with the tool and were recorded with its own stack; reported only, each one your baseline fails is "
                "judged against the baseline's own values on this host instead. To judge them against golden values "
                "of your stack, record your copy with `upgrade-harness golden --record-builtin` (it goes to the "
                "builtin/ folder of your golden directory).")
    return (f"your baseline pins {said}: the built-in contracts' golden values of {', '.join(from_tool)} come with "
            "the tool and were recorded with its own stack, so they will not hold on yours. Record your copy once "
            "with `upgrade-harness golden --record-builtin` (it goes to the builtin/ folder of your golden "
            "directory), or run only your own contracts (builtin = false).")


def check(ws: Workspace, entries: list[matrix.Entry]) -> None:
    """HarnessError listing every problem found, each naming its file (and line) and the fix."""
    host = host_libraries.problem()
    problems = [host] if host else []
    problems += list(dict.fromkeys(problem for entry in entries for problem in _entry_problems(ws, entry)))
    problems += _golden_problems(ws)
    if not problems and (missing := platform_golden_problem(ws)):
        problems.append(missing)
    if problems:
        raise HarnessError("the upgrade cannot run; nothing was run and reports/ is as it was:\n  - "
                           + "\n  - ".join(problems))


def _entry_problems(ws: Workspace, entry: matrix.Entry) -> list[str]:
    if entry.problem:  # a single-package entry the plan could not resolve: reported, never run
        return []
    problems = []
    try:
        find_python(entry.python)
    except HarnessError as exc:
        problems.append(str(exc))
    if not (entry.locked or entry.lock_file):  # resolved when its session starts
        return problems
    lock = locks.lock_path(ws, entry)
    if not lock.exists():
        if ws.is_checkout or entry.lock_file:  # a team's project resolves a missing committed lock itself
            problems.append(f"lock file {lock} of {entry.name} is missing; generate it with "
                            f"`{locks.lock_command(ws)}`.")
        return problems
    try:
        locks.check_current(ws, entry, lock)
    except HarnessError as exc:
        problems.append(str(exc))
    return problems


def golden_dirs(ws: Workspace) -> list[Path]:
    """The golden stores the suite reads: the project's, and the tool's own for the built-in contracts."""
    found = project.load(ws)
    dirs = [found.golden]
    if not ws.is_checkout and found.builtin != BuiltinMode.OFF:
        dirs.append(paths.builtin_golden(ws.options.platform))
    return list(dict.fromkeys(dirs))


def platform_golden_problem(ws: Workspace) -> str | None:
    """On an accelerator (--platform), the golden values must have been recorded there: the CPU's do not hold
    on a chip (its matmuls, its transcendental functions), and a suite judged against none would fail every
    check on both sides and so hide every change."""
    platform = ws.options.platform
    if platform in (None, platforms.CPU):
        return None
    found = project.load(ws)
    recorded = [d for d in golden_dirs(ws) if d.is_dir() and any(d.rglob("*.json"))]
    if recorded:
        return None
    record = (f"nox -s golden -- --platform {platform}" if ws.is_checkout
              else f"upgrade-harness golden --platform {platform}"
              + (" --record-builtin" if found.builtin != BuiltinMode.OFF else ""))
    return (f"no golden values are recorded on {platform} ({found.golden} holds none): the CPU's do not hold on "
            f"an accelerator. Record the baseline's on this machine first: `{record}`.")


def store_problem(directory: Path) -> str | None:
    """A golden store that exists must be a directory (golden's check too, before it records)."""
    if directory.exists() and not directory.is_dir():
        return f"the golden store {directory} is not a directory; move the file away."
    return None


def _golden_problems(ws: Workspace) -> list[str]:
    """Every golden file must read as JSON. A store not recorded yet is no problem here: its checks
    say so in the verdict."""
    problems = []
    for directory in golden_dirs(ws):
        if not directory.exists():
            continue
        if problem := store_problem(directory):
            problems.append(problem)
            continue
        try:
            files = sorted([*directory.glob("*.json"), *directory.glob(f"{golden_layout.BUILTIN_COPIES}/*.json")])
        except OSError as exc:
            problems.append(f"the golden store {directory} is unreadable ({exc.strerror or exc}); fix its permissions.")
            continue
        for file in files:
            try:
                json.loads(file.read_text())
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                problems.append(f"golden file {file} is unreadable ({exc}); restore it from version control "
                                "(`git checkout -- <file>`) or record it again.")
    return problems


@dataclasses.dataclass(frozen=True)
class Prepared:
    """An upgrade's request once read and checked (prepare): the candidate asked for, parsed or read from its
    file (None: the project's default), and where the command was typed (paths are shown relative to it).
    Everything else it was asked is in the workspace's options (the run's id, --jobs, --pre, --bisect...)."""

    candidate: matrix.CandidateRequest | None
    typed_in: Path


def prepare(ws: Workspace, given: RunOptions, invoked_from: str | None) -> tuple[Workspace, Prepared]:
    """A Python, a writable reports directory and a plan that can run, for the options the command line gave
    (`given`, as typed): HarnessError (exit 2) before anything runs or moves. The workspace with this run's
    options (paths absolute, its new id) and the reports directory they name (`--reports DIR`)."""
    typed_in = Path(invoked_from or ".").resolve()
    given = _judged_as_the_pull_request(ws, given, typed_in)
    # This run's --contracts / --builtin / --no-builtin / --baseline-from (and its id) reach the plan, every
    # entry and the verdict through the workspace handed down (and each child's environment built from it).
    ws = ws.with_options(dataclasses.replace(run_options.absolute(given, typed_in), run_id=new_run_id()))
    # Parsed (or read, --candidate-from) once, here: bad input is told before anything else.
    candidate = candidate_from.request(ws, given.candidate, given.candidate_from, typed_in)
    find_python(current.pins(ws).python)  # a project may set its own
    if given.reports:
        ws = ws.with_reports((typed_in / given.reports).resolve())
    run_directory.check(ws)
    run_directory.check_writable(ws.reports, elsewhere="give --reports another directory")
    # Every committed lock, interpreter and golden file, before anything is moved, written or run.
    check(ws, matrix.upgrade_plan(current.entries(ws, candidate)))
    return ws, Prepared(candidate, typed_in)


def _judged_as_the_pull_request(ws: Workspace, given: RunOptions, typed_in: Path) -> RunOptions:
    """In a branch whose pins file bumps the default branch's, with neither side chosen: the branch's bump is
    what the team means to judge (its lock may already be the bump's, its golden values accepted from it), so
    the run judges it as the pull-request check does, and says so; the default candidate needs --candidate."""
    if given.candidate is not None or given.candidate_from is not None or given.baseline_from is not None:
        return given
    found = branch_hint.bump(ws, typed_in)
    if found is None:
        return given
    print(f"upgrade: {found.said}: judging that bump, as the pull-request check does ({found.command}); "
          "another candidate: --candidate PINS")
    return dataclasses.replace(given, baseline_from=Path(found.baseline_from), candidate_from=Path(found.path))


class CannotStart(HarnessError):
    """The plan cannot run: a pin that does not resolve, or a resolved lock that fails its checks. Raised
    before any entry starts, so `upgrade` publishes nothing (the last finished run's verdict stays)."""


def resolve(ws: Workspace, prepared: Prepared) -> list[matrix.Entry]:
    """Every entry resolved and checked before any suite runs. CannotStart when the candidate cannot be
    resolved (its unresolvable report written into ws.reports first: the run's own directory under
    `upgrade`, the reports directory under `nox -s plan`) or when a resolved lock fails its checks."""
    try:
        entries = plan.build(ws, prepared.candidate, ws.reports / plan.LOCKS_DIR, ws.options.pre)
    except HarnessError as exc:
        side = matrix.BASELINE if isinstance(exc, plan.BaselineUnresolvable) else matrix.CANDIDATE
        requested = current.entries(ws, prepared.candidate)[side]
        stack_entry.write_unresolvable(ws.reports, requested, str(exc), now(), run_id=ws.options.run_id)
        raise CannotStart(f"{exc}\nCANNOT JUDGE: {side} is unresolvable (exit status 2; "
                          f"{ws.reports}/{side}.json says why)") from None
    try:
        check(ws, entries)  # the locks the plan resolved, too
    except HarnessError as exc:
        raise CannotStart(str(exc)) from None
    plan.write(entries, ws.reports / plan.PLAN_FILE)
    # The branch's golden values against the base branch's, beside the plan (CI's plan job has the history).
    changed = golden_changes.write(ws, ws.reports)
    if changed is not None and changed.line:
        print(f"upgrade: {changed.line}")
    found = project.load(ws)
    runs_builtin = found.builtin != BuiltinMode.OFF and not ws.is_checkout
    # Reported only when contracts of its own decide: without any, the built-in ones decide (harness.verdict.own).
    reported = found.builtin == BuiltinMode.REPORT and bool(found.own_contracts)
    note = mismatch_note(entries[0], found.golden, ws.options.platform, reported) if runs_builtin else None
    if note:
        print(f"upgrade: note: {note}")
    for entry in entries:
        for note in entry.notes:
            print(f"upgrade: {entry.name}: {note}")
    for line in branch_hint.told(ws, prepared.candidate, entries, prepared.typed_in):
        print(f"upgrade: {line}")
    return entries
