"""`nox -s accept` (`upgrade-harness accept`): adopt the judged candidate as the new baseline.

The baseline pins in matrix.toml become the candidate's installed versions, the locks are resolved
again, the golden values are recorded again from the new baseline, and golden/CHANGELOG.md says why.
It refuses (exit 2) unless there is a fresh verdict on a complete candidate and golden/ is committed,
so the only golden change under review is this one. Every change is prepared in a staged copy and moved
into place at once (harness.stack.staging): killed anywhere, the checkout is as before or, once the next
accept or upgrade has finished the moves, as after. The expensive steps (Steps) can be replaced.

golden/CHANGELOG.md: why the golden values changed. One entry per `nox -s accept`, appended at the
end; earlier entries are never rewritten (the file is only ever opened for appending).

In a team's project (accept_team) the baseline pins live in its own file ([tool.upgrade-harness]
baseline-from: requirements.txt, pyproject.toml, uv.lock, poetry.lock), which the tool does not edit: a bump is a change
of that file, in a branch or a bot's pull request. Once the file pins what the verdict judged as the
candidate, accept does the rest all or nothing (harness.stack.staging): the baseline's lock and the team's
own golden values recorded from it. While the file still pins what the verdict judged as the baseline, it
prints the whole flow as one block and changes nothing (exit 2).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from harness import env_vars, golden_layout
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.model import report_io
from harness.model.enums import BuiltinMode, Status
from harness.model.report import Report
from harness.model.verdict import Change, Verdict
from harness.stack import boundary, project, staging
from harness.stack.commands import frame, golden_record, options
from harness.stack.commands.golden_record import DepartureChanges, dropped_text, recorded_text
from harness.stack.commands.upgrade import REPLAY
from harness.stack.pins import branch_hint, current, locks, matrix
from harness.stack.pins.matrix import PACKAGES, Pins
from harness.stack.run import run_directory, run_verdict
from harness.stack.shown import log_tail
from harness.stack.workspace import Workspace
from harness.verdict import compare


HEADER = """# Golden values changelog

Each entry is one `nox -s accept`: the baseline moved to a judged candidate's versions and the golden
values were recorded again from it. Newest last; earlier entries are never rewritten.
"""
DETAIL_CHARS = 200  # a change's detail is cut to this length: the full text is in the upgrade report


@dataclasses.dataclass(frozen=True)
class Accepted:
    """What one acceptance did, as the changelog tells it."""

    when: dt.datetime
    before: Pins  # the matrix before: its python and [baseline] are the old baseline
    after: Pins
    headline: str  # the verdict's
    bits_line: str | None
    changes: list[Change]  # the candidate's changes against the old baseline (unchanged ones left out)
    reason: str | None
    golden_stat: str  # `git diff --stat -- golden/` after recording
    # Statements the new baseline breaks, recorded as its behaviour; and departures dropped (they hold again).
    departures: DepartureChanges = DepartureChanges()


def stack_text(pins: Pins) -> str:
    return ", ".join([f"python {pins.python}", *(f"{pkg} {pins.baseline[pkg]}" for pkg in PACKAGES)])


def _said(change) -> str:
    """A change in the verdict's user terms (input, before → after, size), else its raw detail."""
    if change.before or change.after:
        parts = [change.input, f"{change.before} → {change.after}", change.size]
        return short("; ".join(p for p in parts if p))
    return short(change.detail) if change.detail.strip() else ""


def moved_text(before: Pins, after: Pins) -> str:
    """What moved, e.g. 'jax 0.11.2 → 0.12.0.1, optax 0.2.6 → 0.2.8'."""
    pairs = [("python", before.python, after.python)]
    pairs += [(pkg, before.baseline[pkg], after.baseline[pkg]) for pkg in PACKAGES]
    moved = [f"{name} {old} → {new}" for name, old, new in pairs if old != new]
    return ", ".join(moved) or "no version moved"


def short(text: str, limit: int = DETAIL_CHARS) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def entry_text(accepted: Accepted) -> str:
    """The Markdown of one changelog entry."""
    changes = sorted(accepted.changes, key=lambda c: (c.mark.rank, c.check_id))
    lines = [
        f"## {accepted.when.astimezone(dt.timezone.utc):%Y-%m-%d %H:%M} UTC: {moved_text(accepted.before, accepted.after)}",
        "",
        f"- From: {stack_text(accepted.before)}",
        f"- To: {stack_text(accepted.after)}",
        f"- Verdict: {accepted.headline}",
    ]
    if accepted.bits_line:
        lines.append(f"- Bits: {accepted.bits_line}")
    lines.append(f"- Reason: {short(accepted.reason, 1000) if accepted.reason else '(none given)'}")
    lines.append(f"- Accepted changes ({len(changes)}):" if changes else "- Accepted changes: none")
    lines += [f"  - `{c.check_id}`: {c.mark.value}: {_said(c)}".rstrip(": ") for c in changes]
    lines += departure_lines(accepted.departures)
    stat = accepted.golden_stat.strip("\n")
    lines += ["- Golden files changed:", "", "  ```", *(f"  {ln}" for ln in stat.splitlines()), "  ```"] \
        if stat else ["- Golden files changed: none"]
    return "\n".join(lines) + "\n"


def departure_lines(found: DepartureChanges) -> list[str]:
    """The entry's lists of departures, when the recording made or dropped any."""
    out = [f"- Departures recorded ({len(found.recorded)}): statements the new baseline breaks, recorded as its "
           "behaviour and judged against it from now on"] if found.recorded else []
    out += [f"  - {recorded_text(d)}" for d in found.recorded]
    out += [f"- Departures dropped ({len(found.dropped)}): statements that hold again"] if found.dropped else []
    return out + [f"  - {dropped_text(d)}" for d in found.dropped]


def append(path: Path, entry: str) -> None:
    """Add an entry at the end, creating the file with its header first; never rewrites what is there."""
    existing = path.read_text() if path.exists() else None
    prefix = HEADER if existing is None else ("" if existing.endswith("\n") else "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(f"{prefix}\n{entry}")


UNDO = "git checkout -- harness/matrix.toml locks golden"
NEXT = "review `git diff`, then commit harness/matrix.toml locks/ golden/"
# harness.contract.golden_recording's words when a check fails while recording (nothing is written then)
RECORDING_FAILED = re.compile(r"golden: NOT written: \d+ checks did not pass while recording: [^\n]*"
                              r"(?:\ngolden:   [^\n]*)*")  # and each one's reason, a line each


# --- the steps that reach outside the process (git, uv, the golden session, the clock, moving files), as one
# seam: tests pass fakes, and count them to stop accept at each one.


def git(root: Path, args: list[str]) -> str:
    """git's output in the checkout; HarnessError when git is missing or this is not a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise HarnessError("git is not installed; accept needs it to check golden/ and to list what changed.") from None
    if done.returncode != 0:
        raise HarnessError(f"`git {' '.join(args)}` failed in {root} ({done.stderr.strip()}); "
                           "run accept in the project's git checkout.")
    return done.stdout


def record_golden(stage: staging.Stage, team: bool = False, reason: str | None = None) -> int:
    """`nox -s golden -- --accept-changes` as a child nox session reading the staged pins and locks and
    writing the staged golden/ (HARNESS_STAGE); its output goes to reports/golden-recording.log. In a
    team's project (`team`), the package's own sessions, told the project, as `upgrade-harness golden` runs them."""
    root = stage.root
    env = boundary.child_environment()  # the new pins, never a run's plan, selection or replay
    env[env_vars.STAGE] = str(stage.files)
    noxfile = ["-f", str(root / "noxfile.py")]
    if team:
        env[env_vars.PROJECT] = str(root)
        noxfile = ["-f", str(Path(__file__).resolve().parents[1] / "sessions.py"), "--envdir", str(root / ".nox")]
    cmd = [sys.executable, "-m", "nox", *noxfile, "-s", "golden", "--", "--accept-changes"]
    cmd += ["--reason", reason] if reason else []
    (root / "reports").mkdir(exist_ok=True)
    with open(root / "reports" / "golden-recording.log", "w") as log:
        return subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root, check=False).returncode


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Printer:
    """A stand-in for the nox session's logger when accept runs outside nox."""

    @staticmethod
    def log(message: str) -> None:
        print(f"accept: {message}", flush=True)


@dataclasses.dataclass(frozen=True)
class Steps:
    """The expensive or outside-world steps; tests pass fakes (and count them, to stop accept at each)."""

    lock: Callable[[staging.Stage, list[matrix.Entry]], None]  # write these entries' lock files, staged
    # Record golden values from the staged baseline, with the accept's reason (None: none given); the exit status.
    record_golden: Callable[[staging.Stage, str | None], int]
    git: Callable[[Path, list[str]], str] = git
    clock: Callable[[], dt.datetime] = _now  # the changelog entry's time
    replace: Callable[[Path, Path], None] = os.replace  # move one staged file into place

    @classmethod
    def real(cls, ws: Workspace, log=None) -> Steps:
        def lock(stage: staging.Stage, entries: list[matrix.Entry]) -> None:
            locks.write_locks(ws.staged(stage.files), log or Printer(), entries)

        return cls(lock=lock, record_golden=lambda stage, reason: record_golden(stage, team=not ws.is_checkout,
                                                                                reason=reason))


# accept works in a checkout's workspace (harness.stack.workspace; a test gives a temporary checkout): its
# pins (ws.matrix), and the reports it adopts: reports/, or the directory `--reports DIR` names (as
# `upgrade --reports DIR` wrote them).

def _given_reports(ws: Workspace) -> bool:
    """Whether the reports adopted are another directory than the checkout's reports/ (`--reports DIR`)."""
    return ws.reports != ws.root / "reports"


def recording_log(ws: Workspace) -> Path:
    """Where the golden session's output goes: the checkout's reports/, whichever reports are adopted."""
    return ws.root / "reports" / "golden-recording.log"


def shown(ws: Workspace, name: str) -> str:
    """A report's name as the user knows it: reports/NAME, or its whole path under --reports DIR."""
    return str(ws.reports / name) if _given_reports(ws) else f"reports/{name}"


def changelog(ws: Workspace) -> Path:
    return ws.root / "golden" / "CHANGELOG.md"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What accepting will do: the matrix before and after, and the verdict being accepted."""

    before: matrix.Pins
    after: matrix.Pins
    verdict: Verdict


def judged(ws: Workspace, command: str = "nox -s") -> tuple[Report, Report, Verdict]:
    """The baseline, the candidate and the verdict on them, or HarnessError saying why there is none; the
    commands named are `command upgrade` and `command accept` (`nox -s` here, `upgrade-harness` in a team's
    project)."""
    files = [ws.reports / f"{name}.json" for name in (matrix.BASELINE, matrix.CANDIDATE)]
    missing = [shown(ws, f.name) for f in files if not f.exists()]
    if missing:
        given = f"{' --' if command == 'nox -s' else ''} --reports {ws.reports}" if _given_reports(ws) else ""
        raise HarnessError(f"there is no verdict to accept ({' and '.join(missing)} missing); "
                           f"run `{command} upgrade{given}` first, then `{command} accept{given}`.")
    base, candidate = (report_io.load(f) for f in files)
    if candidate.status != Status.COMPLETE:
        raise HarnessError(f"the candidate's report is {candidate.status.value}"
                           f"{f' ({candidate.problem})' if candidate.problem else ''}; only a complete, judged "
                           f"candidate can be accepted. Fix that and run `{command} upgrade` again.")
    replay_file = ws.reports / f"{REPLAY}.json"
    replay = report_io.load(replay_file) if replay_file.exists() else None
    # Under the project's builtin mode, as the upgrade judged them: with built-in contracts reported only, their
    # changes are not the verdict a team accepts.
    verdict = compare.judge(base, [candidate], replay, builtin=run_verdict.verdict_builtin(ws))
    if verdict.exit_status == EXIT_CANNOT_JUDGE:
        raise HarnessError(f"the verdict could not judge the candidate ({verdict.headline}); fix what it names "
                           f"and run `{command} upgrade` again before accepting.")
    return base, candidate, verdict


def check_fresh(base: Report, pins: matrix.Pins) -> None:
    """The verdict must be on the baseline matrix.toml pins now; otherwise it judged another stack."""
    ran = base.environment.versions
    differ = [f"{pkg} {ran.get(pkg)} (matrix.toml: {pins.baseline[pkg]})"
              for pkg in matrix.PACKAGES if ran.get(pkg) != pins.baseline[pkg]]
    if base.entry.python != pins.python:
        differ.insert(0, f"python {base.entry.python} (matrix.toml: {pins.python})")
    if differ:
        raise HarnessError(f"the verdict is stale: reports/baseline.json ran {', '.join(differ)}, not matrix.toml's "
                           "baseline. Run `nox -s upgrade` again to judge the candidate against the current "
                           "baseline, then `nox -s accept`.")


def check_golden_committed(ws: Workspace, steps: Steps, golden: Path | None = None) -> None:
    """The golden folder (golden/, or a project's own) has no uncommitted change to mix with accept's."""
    folder = f"{(golden or ws.root / 'golden').relative_to(ws.root).as_posix()}/"
    status = steps.git(ws.root, ["status", "--porcelain", "--", folder]).rstrip()
    if status:
        raise HarnessError(f"{folder} has uncommitted changes:\n{status}\nCommit or discard them first "
                           f"(`git checkout -- {folder}`): accept's re-recording must be the only golden change "
                           "under review.")


def accepted_pins(candidate: Report, before: matrix.Pins) -> matrix.Pins:
    """The candidate's exact installed versions (and its python) as the baseline; [candidate] unchanged."""
    versions = candidate.environment.versions
    missing = [pkg for pkg in matrix.PACKAGES if not versions.get(pkg)]
    if missing:
        raise HarnessError(f"reports/candidate.json does not say which {', '.join(missing)} it ran; "
                           "run `nox -s upgrade` again with this harness.")
    return matrix.Pins(candidate.entry.python, {pkg: versions[pkg] for pkg in matrix.PACKAGES},
                       dict(before.candidate))


def prepare(ws: Workspace, steps: Steps) -> Plan:
    """Every refusal, before anything is changed."""
    base, candidate, verdict = judged(ws)
    before = matrix.load_pins(ws.matrix)
    check_fresh(base, before)
    check_golden_committed(ws, steps)
    return Plan(before, accepted_pins(candidate, before), verdict)


def golden_stat(ws: Workspace, stage: staging.Stage, steps: Steps) -> str:
    """The golden files the recording changed in the staged copy: git's diff stat of golden/ with the staged
    copy as the work tree (golden/ is committed, so the index is the checkout's), and any new file."""
    staged = ["--no-optional-locks", f"--work-tree={stage.files}"]  # never writes the checkout's index
    stat = steps.git(ws.root, [*staged, "diff", "--stat", "--", "golden/"])
    new = steps.git(ws.root, [*staged, "ls-files", "--others", "--exclude-standard", "--", "golden/"]).split()
    return stat + "".join(f" {name} (new file)\n" for name in new if not name.endswith("CHANGELOG.md"))


def stopped(problem: str) -> HarnessError:
    """A failure before anything moved: the staged copy is dropped, the checkout is as it was."""
    return HarnessError(f"{problem}\nNothing was changed (every change was prepared aside and is dropped); fix "
                        "that and run `nox -s accept` again.")


def recording_failed(ws: Workspace, code: int) -> HarnessError:
    """The golden session failed: its log's end, and what to do when checks fail on the new baseline."""
    log = recording_log(ws)
    problem = (f"`{options.prog(ws, 'golden')} --accept-changes` exited {code}; the end of reports/{log.name} says:\n"
               f"{log_tail(log)}")
    failing = RECORDING_FAILED.search(log.read_text(errors="replace")) if log.exists() else None
    if failing:
        where = "those contracts in harness/builtin" if ws.is_checkout else "your contracts (or your code)"
        problem += (f"\n{failing.group(0)}\nRecording cannot accept those: they fail or raise on the new baseline "
                    "beyond anything a recording keeps (a Hypothesis property, an exception, a golden value that "
                    "cannot be read; each one's reason is above). A statement the new baseline only breaks (a "
                    "reference, an exact value, an agreement, a bound) is recorded as its departure instead. If the "
                    f"new behaviour is intended, change {where} first.")
    return HarnessError(problem)


def apply(ws: Workspace, plan: Plan, steps: Steps, reason: str | None) -> Accepted:
    """Pins, locks, golden values, changelog, in that order, all in the staged copy; then every changed
    file moved into place at once. HarnessError (from `stopped`) before the move: nothing changed."""
    stage = staging.create(ws.root, golden_record.mirrored(ws))
    try:
        matrix.write_pins(plan.after, ws.staged(stage.files).matrix)
        print(f"accept: matrix.toml [baseline] will be {stack_text(plan.after)} "
              f"(prepared in {stage.dir})", flush=True)
        steps.lock(stage, [e for e in matrix.entries(plan.after, committed=ws.is_checkout).values() if e.locked])
        print("accept: recording golden values from the new baseline (log: reports/golden-recording.log)", flush=True)
        # The values move with the judged candidate: its verdict is the reason when none is given.
        code = steps.record_golden(stage, reason or f"the judged candidate {stack_text(plan.after)} "
                                                    f"({plan.verdict.headline})")
        if code:
            raise recording_failed(ws, code)
        accepted = Accepted(
            when=steps.clock(), before=plan.before, after=plan.after,
            headline=plan.verdict.headline, bits_line=plan.verdict.bits_line,
            changes=plan.verdict.entries[0].changed, reason=reason, golden_stat=golden_stat(ws, stage, steps),
            departures=golden_record.between(changelog(ws).parent, stage.copy_of(changelog(ws).parent)))
        append(stage.copy_of(changelog(ws)), entry_text(accepted))
        moves = staging.changed(stage)
    except Exception as exc:  # noqa: BLE001  any failure: nothing moved yet
        staging.discard(stage)
        problem = str(exc) if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
        raise stopped(f"accept stopped: {problem}") from None
    try:
        staging.commit(stage, moves, steps.replace)
    except OSError as exc:
        raise HarnessError(f"accept stopped while moving its staged files into place ({exc}); fix that, then "
                           f"`nox -s accept` or `nox -s upgrade` finishes the moves {stage.journal} lists.") from None
    return accepted


def _report(plan: Plan, accepted: Accepted) -> None:
    print(f"accept: accepted {moved_text(plan.before, plan.after)} ({plan.verdict.headline}; "
          f"{len(accepted.changes)} changes listed)")
    same = plan.after.candidate == plan.after.baseline
    print(f"accept: [candidate] left as it is ({'now equal to the baseline' if same else 'still differs'}); "
          "locks/ re-written")
    print("accept: golden files changed:\n" + (accepted.golden_stat.rstrip() or "  none"))
    say_departures(accepted.departures)
    print("accept: golden/CHANGELOG.md: entry appended")
    print(f"accept: next: {NEXT}. (`{UNDO}` undoes it all.)")


def say_departures(found: golden_record.DepartureChanges) -> None:
    """Each departure the recording made (a statement the new baseline breaks) or dropped, for the reviewer."""
    if found.recorded:
        print(f"accept: departures recorded ({len(found.recorded)}): statements the new baseline breaks, recorded "
              "as its behaviour (the checks are judged against it from now on; the verdict lists them):")
        print("\n".join(f"  {golden_record.recorded_text(d)}" for d in found.recorded))
    if found.dropped:
        print(f"accept: departures dropped ({len(found.dropped)}): their statements hold again:")
        print("\n".join(f"  {golden_record.dropped_text(d)}" for d in found.dropped))


def accept(ws: Workspace, argv, log=None, steps: Steps | None = None, invoked_from: Path | None = None) -> int:
    """nox -s accept in the checkout `ws`: refuse, or adopt the candidate; the exit status (0 done, 2 refused
    or stopped). `--reports DIR` is taken from `invoked_from`, the directory the command was typed in."""
    steps = steps or Steps.real(ws, log)
    return frame.execute(frame.Command("accept: refused", functools.partial(options.parse, USAGE),
                                       lambda args: _held(ws, steps, args, argv, invoked_from)), argv)


def _held(ws: Workspace, steps: Steps, args, argv, invoked_from: Path | None) -> int:
    """Accept in the reports `--reports DIR` names, holding the run lock and the project's staging lock."""
    reports = (Path(invoked_from or ".") / args.reports).resolve() if args.reports else None
    if reports is not None:
        ws = ws.with_reports(reports)
    if reports is not None and not reports.is_dir():
        raise HarnessError(f"--reports {args.reports}: {reports} is not a directory; give the one "
                           "`upgrade --reports DIR` wrote its verdict to.")
    with _holding(ws, steps, ["nox", "-s", "accept", "--", *argv]):
        return _accept(ws, steps, args)


@contextlib.contextmanager
def _holding(ws: Workspace, steps: Steps, typed: list[str]):
    """The run lock of ws.reports (never while an upgrade writes them) and the project's staging lock (one accept
    or recording at a time changes its files), an interrupted accept finished first; `typed`: the command line
    the lock names."""
    with run_directory.hold(ws.reports, typed):
        with staging.exclusive(ws.root):
            staging.recover(ws.root, Printer.log, steps.replace)
            yield


def _accept(ws: Workspace, steps: Steps, args) -> int:
    plan = prepare(ws, steps)  # a HarnessError here is a refusal (accept() says so)
    if plan.after == plan.before:
        print(f"accept: nothing to accept: the candidate ran the baseline's versions "
              f"({stack_text(plan.before)}).")
        return 0
    print(f"accept: {plan.verdict.headline}; adopting the candidate as the new baseline")
    try:
        accepted = apply(ws, plan, steps, args.reason)
    except HarnessError as exc:
        print(f"accept: {exc}", file=sys.stderr)
        return exc.exit_status
    _report(plan, accepted)
    return 0


TOOL = "upgrade-harness"  # how a team runs accept


def _ran(report: Report, packages: list[str]) -> dict[str, str | None]:
    return {p: report.environment.versions.get(p) for p in packages}


def _pins_text(pins: dict[str, str | None]) -> str:
    return ", ".join(f"{p}=={v}" for p, v in pins.items())


# A lock's pins change where its project declares them, then the lock is made again by its own tool.
_RELOCKED_BY = {"uv.lock": "uv lock", "poetry.lock": "poetry lock"}


def _poetry_text(pins: dict[str, str | None]) -> str:
    return ", ".join(f'{p} = "{v}"' for p, v in pins.items())


def flow(pins_file: str, wanted: dict[str, str | None], headline: str,
         base: dict[str, str | None] | None = None) -> str:
    """The team's whole flow, as one block to follow. A lock's project pins only what moves from `base` (the
    judged baseline's versions), in its own syntax (Poetry's `optax = "0.2.8"`), then re-locks."""
    relock = _RELOCKED_BY.get(Path(pins_file).name)
    moved = {p: v for p, v in wanted.items() if base is None or base.get(p) != v} or wanted
    written = _poetry_text(moved) if Path(pins_file).name == "poetry.lock" else _pins_text(moved)
    where = (f"in {Path(pins_file).with_name('pyproject.toml').as_posix()}, pin {written} and re-lock "
             f"(`{relock}`)" if relock else f"in {pins_file}, pin {_pins_text(wanted)}")
    return (f"accept: the verdict judged the candidate {_pins_text(wanted)} ({headline}).\n"
            f"accept: your baseline is what {pins_file} pins, and {TOOL} does not edit that file. To accept:\n"
            f"  1. {where} (or merge the pull request that does)\n"
            f"  2. {TOOL} accept        re-locks the baseline and records your golden values from it\n"
            f"  3. commit {'pyproject.toml, ' if relock else ''}{pins_file}, the lock and golden/ together\n"
            "Nothing was changed.")


def accept_team(ws: Workspace, argv, steps: Steps | None = None, invoked_from: Path | None = None) -> int:
    """`upgrade-harness accept` in a team's project: the exit status, 0 accepted (or nothing to accept), 2
    refused or not yet possible (the flow printed)."""
    steps = steps or Steps.real(ws)
    return frame.execute(frame.Command("accept: refused", functools.partial(options.parse, TEAM_USAGE),
                                       lambda args: _team_held(ws, steps, args, argv, invoked_from)), argv)


def _team_held(ws: Workspace, steps: Steps, args, argv, invoked_from: Path | None) -> int:
    """Accept in the reports `--reports DIR` names, holding the run lock and the project's staging lock."""
    if args.reports:
        ws = ws.with_reports((Path(invoked_from or ".") / args.reports).resolve())
    with _holding(ws, steps, [TOOL, "accept", *argv]):
        return _team_accept(ws, steps, args.reason)


def _team_accept(ws: Workspace, steps: Steps, reason: str | None) -> int:
    found = project.load(ws)
    base, candidate, verdict = judged(ws, command=TOOL)
    pinned = current.pins(ws).baseline
    packages = [p for p in matrix.PACKAGES if p in pinned]
    judged_base, wanted = _ran(base, packages), _ran(candidate, packages)
    pins_file = str(found.baseline_from.relative_to(ws.root)) if found.baseline_from else "your pins file"
    if wanted == judged_base:
        print(f"accept: nothing to accept: the candidate ran the baseline's versions ({_pins_text(wanted)}).")
        return 0
    if pinned == judged_base:
        print(flow(pins_file, wanted, verdict.headline, judged_base))
        return EXIT_CANNOT_JUDGE
    if pinned != wanted:
        # Against the default branch's pins (a branch has committed its bump; HEAD would judge it against itself).
        branch = branch_hint.default_branch(ws.root) or "HEAD"
        raise HarnessError(f"{pins_file} pins {_pins_text(pinned)}: neither the judged baseline "
                           f"({_pins_text(judged_base)}) nor the judged candidate ({_pins_text(wanted)}). To judge "
                           f"what it pins now against {branch}'s, from the project's root: `{TOOL} upgrade "
                           f"--baseline-from {branch}:{pins_file} --candidate-from {pins_file}`, then `{TOOL} "
                           "accept`; or pin the judged candidate exactly.")
    check_golden_committed(ws, steps, golden=found.golden)
    print(f"accept: {pins_file} pins the judged candidate ({_pins_text(wanted)}; {verdict.headline}); re-locking "
          "and recording your golden values from it", flush=True)
    stage = staging.create(ws.root, golden_record.mirrored(ws))
    try:
        steps.lock(stage, [current.entries(ws)[matrix.BASELINE]])
        # The values move with the judged bump: its verdict is the reason when the team gives none.
        said = reason or f"the judged candidate {_pins_text(wanted)} ({verdict.headline})"
        code = steps.record_golden(stage, said)
        if code:
            raise recording_failed(ws, code)
        moves = staging.changed(stage)
        departures = golden_record.between(found.golden, stage.copy_of(found.golden))
    except Exception as exc:  # noqa: BLE001  any failure: nothing moved yet
        staging.discard(stage)
        problem = str(exc) if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
        print(f"accept: stopped: {problem}\nNothing was changed (every change was prepared aside and is dropped); "
              f"fix that and run `{TOOL} accept` again.", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    staging.commit(stage, moves, steps.replace)
    print(f"accept: wrote {', '.join(m.path for m in moves) or 'nothing (already recorded)'}")
    say_departures(departures)
    copies = f"{found.golden.relative_to(ws.root).as_posix()}/{golden_layout.BUILTIN_COPIES}/"
    if (said := builtin_after(found.builtin, copies)) is not None:
        print(said)
    print(f"accept: next: review `git diff`, then commit {pins_file}, "
          f"{found.locks.relative_to(ws.root)}/ and {found.golden.relative_to(ws.root)}/ together.")
    return 0


def builtin_after(mode: BuiltinMode, copies: str) -> str | None:
    """What becomes of the built-in contracts once the accepted stack is the baseline: accept records only the team's
    own values, so the built-in ones keep golden values of another stack, which the new baseline may fail. Reported
    only, the checks judge each one it fails against its own values on the same host (harness.verdict.
    against_baseline); where they decide, a baseline that fails them gives no verdict until a copy is recorded in
    `copies` (the builtin/ folder of the team's golden directory)."""
    if mode == BuiltinMode.REPORT:
        return ("accept: built-in contracts (reported only): their golden values are not recorded again (the tool's, "
                f"or your copy in {copies}); where the new baseline fails them, every later check judges each "
                "one against the baseline's own values on the same host, baseline against candidate")
    if mode == BuiltinMode.JUDGE:
        return ('accept: built-in contracts (they decide here, builtin = "judge"): their golden values are not '
                "recorded again; where the new baseline fails them the check cannot judge (exit 2): record your copy "
                f"from it with `{TOOL} golden --record-builtin --accept-changes --reason \"...\"` and commit {copies} "
                "too")
    return None


_REPORTS = options.own("--reports", type=Path, metavar="DIR",
                       help="adopt the verdict `upgrade --reports DIR` wrote there (default: reports/)")
USAGE = options.Usage(prog="nox -s accept --", description=(
    "Adopt the judged candidate as the new baseline: pins, locks, golden values, golden/CHANGELOG.md."), own=(
    options.own("--reason", help="why the changes are accepted (written to golden/CHANGELOG.md)"), _REPORTS))
TEAM_USAGE = options.Usage(prog="upgrade-harness accept", description=(
    "Adopt the judged candidate as the baseline: once your pins file pins it, re-lock and record your golden "
    "values."), own=(
    options.own("--reason", help="why the changes are accepted (written into each changed golden file: a "
                                 "pull-request check lists it beside every value the branch re-recorded)"),
    _REPORTS))


def _run(call: options.Invocation) -> int:
    """This checkout's accept, or a team's (its pins are its own file's)."""
    if not call.ws.is_checkout:
        return accept_team(call.ws, list(call.argv), invoked_from=call.invoked_from)
    return accept(call.ws, list(call.argv), log=call.session, invoked_from=call.invoked_from)


COMMANDS = (options.Declaration(
    "accept", "Adopt the judged candidate as the new baseline: pins, locks, golden values, golden/CHANGELOG.md.",
    USAGE, _run, session=options.Session.HOST, route=options.Route.SESSION, team_usage=TEAM_USAGE),)
