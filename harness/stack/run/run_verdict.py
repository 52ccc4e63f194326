"""A run's verdict: its inputs from the run's directory (verdict_inputs, for `upgrade` and `judge DIR`
alike), and, for `judge DIR` (`nox -s judge -- DIR`, `upgrade-harness judge DIR`,
harness.stack.commands.fanout), the verdict on a directory of one run's reports produced anywhere (CI jobs'
artifacts downloaded into one folder, a published reports/), written there as `nox -s upgrade` writes it. The
run's plan (upgrade-plan.json) says which report is the
baseline, the candidate and the attribution entries; the follow-ups are decided again from the baseline
and the candidate (harness.stack.run.followups), so the verdict needs exactly the reports the run made.
A missing, unreadable or foreign report stops it (exit 2) naming the file and the fix.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.model import platform_marks, report_io
from harness.model.enums import BuiltinMode, Status
from harness.model.report import Report
from harness.model.verdict import TeamCall
from harness.stack import project
from harness.stack.run import api_diff as api_for_run
from harness.stack.pins import matrix, plan
from harness.stack.run import followups
from harness.stack.run.run_directory import REPLAY, RunDirectory
from harness.stack.workspace import Workspace
from harness.verdict import judgement

FETCH = ("download every artifact of the run into it (`gh run download RUN_ID --dir DIR`), or judge the "
         "reports directory of a finished `nox -s upgrade`")


def verdict_builtin(ws: Workspace) -> BuiltinMode:
    """REPORT when the project (its table, or this run's --builtin) reports the built-in contracts only;
    JUDGE otherwise, so that the checkout's verdict is judged as ever."""
    return BuiltinMode.REPORT if project.load(ws).builtin == BuiltinMode.REPORT else BuiltinMode.JUDGE


def builtin_note(ws: Workspace) -> str | None:
    """A team's project: which built-in tests its run takes and why (harness.stack.selection)."""
    found = project.load(ws)
    return found.selection.line() if found.selection is not None and found.builtin != BuiltinMode.OFF else None


def team_calls(ws: Workspace) -> tuple[TeamCall, ...]:
    """A team's project: each callable its code calls, where, and the built-in tests it takes (the verdict marks
    their changes as the team's); none where the built-in contracts do not run or every family runs whole."""
    found = project.load(ws)
    if found.selection is None or found.builtin == BuiltinMode.OFF:
        return ()
    return tuple(TeamCall(c.callable, c.use.where, c.tests) for c in found.selection.called)


def _unplanned(directory: Path) -> str:
    """Why a run made no plan, when its candidate's report says: the candidate did not resolve."""
    try:
        report = report_io.load(RunDirectory(directory).report_file(matrix.CANDIDATE))  # the one read: no verdict
    except HarnessError:
        return ""
    if report.status != Status.UNRESOLVABLE:
        return ""
    return f" The run made none: its candidate does not resolve ({report.problem.rstrip('.')}); CANNOT JUDGE."


def planned_entries(directory: Path) -> list[matrix.Entry]:
    """Baseline, candidate and the single-package entries of the run's plan, in the plan's order."""
    path = RunDirectory(directory).plan
    if not directory.is_dir():
        raise HarnessError(f"{directory} is not a directory; give the directory that holds one run's "
                           f"reports and its {plan.PLAN_FILE}.")
    if not path.is_file():
        raise HarnessError(f"{path} is missing: the run's plan says which report is which; {FETCH}."
                           + _unplanned(directory))
    try:
        found = plan.read(path)
    except HarnessError as exc:
        raise HarnessError(f"{str(exc).rstrip('.')}; {FETCH}.") from None
    missing = [n for n in (matrix.BASELINE, matrix.CANDIDATE) if n not in found]
    if missing:
        raise HarnessError(f"{path} plans no {' and no '.join(missing)}: it is not an upgrade's plan; {FETCH}.")
    singles = [found[name] for name in (f"{g}-only" for g in matrix.GROUPS) if name in found]
    return [found[matrix.BASELINE], found[matrix.CANDIDATE], *singles]


def _rerun(entry: matrix.Entry) -> str:
    return f"re-run its job (`nox -s {entry.name}` told the plan and the run's id), then judge again"


def _load(run: RunDirectory, name: str, entry: matrix.Entry, role: str) -> Report:
    """Report `name` of the run, `entry`'s; HarnessError naming the file and the fix."""
    path = run.report_file(name)
    if not path.is_file():
        raise HarnessError(f"{path} is missing: it is the {role}'s report, which the verdict needs; "
                           f"{FETCH}, or {_rerun(entry)}.")
    try:
        report = run.reports(name)
    except HarnessError as exc:
        raise HarnessError(f"the {role}'s report is unusable: {str(exc).rstrip('.')}; {_rerun(entry)}.") from None
    if report.entry.name != entry.name or report.entry.requested != entry.pins:
        raise HarnessError(
            f"{path} is not this plan's {role}: it ran entry {report.entry.name} "
            f"({' '.join(f'{k}=={v}' for k, v in report.entry.requested.items())}), the plan's {entry.name} is "
            f"{entry.pin_text}. Judge each run's reports in a directory of their own, with that run's plan.")
    return report


def _of_run(run: RunDirectory, name: str, entry: matrix.Entry, role: str, run_id: str | None) -> None:
    """HarnessError unless report `name` is `entry`'s and from run `run_id` (the baseline's)."""
    found = _load(run, name, entry, role).run_id
    if found != run_id:
        raise HarnessError(
            f"{run.report_file(name)} is from run {found or '(none: a session run by hand)'}, the baseline's report "
            f"from run {run_id or '(none: a session run by hand)'}: a report of another run is never judged with "
            f"this one's. Judge each run's reports in a directory of their own; {_rerun(entry)}.")


def _checked(run: RunDirectory, entries: list[matrix.Entry]) -> tuple[followups.FollowUps, str | None]:
    """The follow-ups of the run in `run` and its id, once every report its verdict judges is there, this
    plan's and of one run; HarnessError when one is wanting."""
    run_id = _load(run, matrix.BASELINE, entries[0], "baseline").run_id
    _of_run(run, matrix.CANDIDATE, entries[1], "candidate", run_id)
    follow = followups.decide(run, entries)
    by_name = {e.name: e for e in entries}
    for name in follow.reports():
        _of_run(run, name, by_name[name], f"attribution entry {name}", run_id)
    if follow.examples:
        _of_run(run, REPLAY, entries[0], "baseline replay", run_id)
    for writer, name in follow.rollbacks(entries[1]).items():
        _of_run(run, name, entries[0], f"baseline rollback of {writer}", run_id)
    return follow, run_id


def verdict_inputs(ws: Workspace, run: RunDirectory, entries: list[matrix.Entry], follow: followups.FollowUps,
                   run_id: str | None) -> judgement.Inputs:
    """What the verdict judges, for `nox -s upgrade` (in its run directory) and `judge DIR` alike: the reports of
    baseline, candidate and the attribution entries, the replay's and the rollbacks' that are there (an upgrade
    said which are missing, judge DIR refused them), the bisection and the API diff when the run made them, and
    the reports as the run read and compared them so far."""
    rolled = {writer: run.report_file(name) for writer, name in follow.rollbacks(entries[1]).items()}
    return judgement.Inputs(
        tuple(run.report_file(name) for name in [e.name for e in entries[:2]] + follow.reports()),
        replay=run.replay if follow.examples and run.replay.is_file() else None,
        bisect=run.bisection if run.bisection.is_file() else None,
        builtin=verdict_builtin(ws), run_id=run_id, builtin_note=builtin_note(ws), team_calls=team_calls(ws),
        rollbacks={writer: path for writer, path in rolled.items() if path.is_file()},
        api_diff=run.api_diff if run.api_diff.is_file() else None, reading=run.loaded,
        golden_changes=run.golden_changes if run.golden_changes.is_file() else None,
        platform_marks=ws.published / platform_marks.FOLDER)


def judge(ws: Workspace, directory: Path) -> int:
    """The verdict on the run in `directory` (of the workspace's project), written beside its reports; the
    exit status (0/1/2)."""
    run = RunDirectory(directory)
    entries = planned_entries(directory)
    follow, run_id = _checked(run, entries)
    api_for_run.beside(ws, run, entries)
    return judgement.judge(verdict_inputs(ws, run, entries, follow, run_id), run.summary)
