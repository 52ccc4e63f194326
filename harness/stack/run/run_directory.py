"""One run's folder: where it is, what is in it, and who may write it.

Every file name of a run (an entry's report, log and junit file, the plan, the follow-ups' selections, the
checkpoints, the summaries) is built here, and its reports are held typed once read (harness.verdict.run_reports),
so that the run's steps (the reports kept for reuse, the follow-ups, the bisection, the API diff, the verdict)
read, validate and compare each report once. The folder is reports/.runs/<run id>/ while an upgrade runs, the
reports directory afterwards, or the directory `judge DIR` is given; the run's steps are handed it with their
workspace (`of`).

Each upgrade writes into its own run directory and only a run that finished is published into reports/, so
nothing a stopped or killed run (or an entry of it) writes can land among the reports of another run; while the
run lasts, its steps' workspace (harness.stack.workspace) has the run's directory as its reports (the entries
are told it through HARNESS_REPORTS_DIR) and the reports directory as its home.

The reports directory holds only what runs write. A run publishes there, moves the last run's files to
previous/ and replaces the folders it writes whole (the plan's locks/, checkpoints/): over the project's own
files (its root, golden values, locks, contracts) it would move or replace them (`--reports ""` once moved a
team's committed locks/baseline.txt to previous/), so such a directory is refused.

One upgrade per reports directory at a time (the run lock): a second run refuses at once, naming the running
one, instead of writing into the same files and producing a verdict mixed from two runs; publishing never
interleaves with another run's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.model import api_diff, bisection, golden_changes, report_io
from harness.model.report import Report, now
from harness.stack import project
from harness.stack.entry_side import parts as entry_parts, rollback
from harness.stack.entry_side.rollback import CHECKPOINTS
from harness.stack.pins import plan
from harness.stack.pins.plan import LOCKS_DIR
from harness.stack.workspace import Workspace
from harness.verdict import judgement
from harness.verdict.run_reports import RunReports


if TYPE_CHECKING:
    from harness.stack.workspace import Workspace

REPLAY = "baseline-replay"  # the baseline re-running the candidate's falsifying examples
EXAMPLES = "replay-examples.json"  # check id -> the @reproduce_failure arguments the replay runs
REPLAY_SELECTION = "replay-selection.txt"
ATTRIBUTION_SELECTION = "attribution-selection.txt"
BISECT_SELECTION = "bisect-selection.txt"
JOBS = "jobs"  # the sessions' job files (harness.model.entry_job)
ENTRY_SUFFIXES = (".json", ".junit.xml", ".log")  # an entry's report, its junit file, its log
# The files of a run besides its entries' reports, junit files and logs.
SUMMARY_FILES = (judgement.SUMMARY_MD, judgement.SUMMARY_JSON, judgement.REPORT_HTML, ATTRIBUTION_SELECTION,
                 REPLAY_SELECTION, EXAMPLES, plan.PLAN_FILE, bisection.BISECT_FILE, BISECT_SELECTION,
                 rollback.SELECTION, api_diff.API_DIFF_FILE, golden_changes.GOLDEN_CHANGES_FILE)


def entry_files(name: str) -> list[str]:
    """The file names of report `name`: its report, junit file and log."""
    return [f"{name}{suffix}" for suffix in ENTRY_SUFFIXES]


@dataclasses.dataclass(frozen=True)
class RunDirectory:
    """The folder `path` of one run, and the reports the run read from it (`loaded`)."""

    path: Path
    loaded: RunReports = dataclasses.field(default_factory=RunReports, compare=False, repr=False)

    @classmethod
    def of(cls, ws: Workspace) -> RunDirectory:
        """The run directory of the workspace's run (the one `running` was given, with what the run read), or
        the workspace's reports directory read afresh (a CI job, a command outside an upgrade)."""
        held = ws.run_directory
        return held if isinstance(held, RunDirectory) and held.path == ws.reports else cls(ws.reports)

    @classmethod
    def at(cls, where: RunDirectory | Path) -> RunDirectory:
        """`where` itself, or a run directory of the folder `where` (read afresh)."""
        return where if isinstance(where, RunDirectory) else cls(Path(where))

    # --- an entry's files -----------------------------------------------------------------------------

    def report_file(self, name: str) -> Path:
        """The report named `name` (an entry's, the replay's, a rollback's, a bisection probe's)."""
        return self.path / f"{name}.json"

    def log(self, name: str) -> Path:
        return self.path / f"{name}.log"

    def junit(self, name: str) -> Path:
        return self.path / f"{name}.junit.xml"

    def job(self, name: str) -> Path:
        """The job file of the session writing report `name` (several writers: the rollbacks' prefix), which
        it is told (harness.model.entry_job); in a folder of their own, never read as a report."""
        return self.jobs / f"{name}.json"

    @property
    def jobs(self) -> Path:
        return self.path / JOBS

    @property
    def parts(self) -> Path:
        """The parts of its entries' reports, each run and kept apart, before they were joined."""
        return self.path / entry_parts.PARTS

    def reports(self, name: str) -> Report:
        """The typed report `name`, read and validated once in this run; ReportProblem when unusable."""
        return self.loaded.load(self.report_file(name))

    def load(self, path: Path) -> Report:
        """A report of this run given by its path (one named by the verdict's inputs), read once."""
        return self.loaded.load(path)

    def write(self, name: str, report: Report) -> None:
        """Write report `name` (validated, atomic: report_io.write); read back from memory."""
        path = self.report_file(name)
        report_io.write(path, report)
        self.loaded.wrote(path, report)

    # --- the run's other files ------------------------------------------------------------------------

    @property
    def replay(self) -> Path:
        return self.report_file(REPLAY)

    def rollback_report(self, writer: str) -> Path:
        """The baseline's rollback of the checkpoints of report `writer`."""
        return self.report_file(rollback.report_name(writer))

    @property
    def checkpoints(self) -> Path:
        return self.path / rollback.CHECKPOINTS

    def checkpoints_of(self, writer: str) -> Path:
        """Where the entry writing report `writer` saves its checkpoints."""
        return self.path / rollback.folder_name(writer)

    @property
    def plan(self) -> Path:
        return self.path / plan.PLAN_FILE

    @property
    def locks(self) -> Path:
        return self.path / plan.LOCKS_DIR

    @property
    def examples(self) -> Path:
        return self.path / EXAMPLES

    @property
    def replay_selection(self) -> Path:
        return self.path / REPLAY_SELECTION

    @property
    def attribution_selection(self) -> Path:
        return self.path / ATTRIBUTION_SELECTION

    @property
    def rollback_selection(self) -> Path:
        return self.path / rollback.SELECTION

    @property
    def bisect_selection(self) -> Path:
        return self.path / BISECT_SELECTION

    @property
    def bisection(self) -> Path:
        return self.path / bisection.BISECT_FILE

    @property
    def api_diff(self) -> Path:
        return self.path / api_diff.API_DIFF_FILE

    @property
    def golden_changes(self) -> Path:
        return self.path / golden_changes.GOLDEN_CHANGES_FILE

    @property
    def summary(self) -> judgement.Outputs:
        """The verdict's Markdown, JSON and HTML files."""
        return judgement.Outputs.beside(self.path)


RUNS = ".runs"
PREVIOUS = "previous"  # the last run's files, moved aside as a run publishes


def keep_previous(reports: Path, names: list[str], folders: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Move last run's reports (and its `folders`: the checkpoints) to reports/previous/ so a new run never
    silently overwrites them; what previous/ held before is the run before that one's, replaced."""
    files = [file for name in names for file in entry_files(name)]
    kept = [name for name in dict.fromkeys([*files, *SUMMARY_FILES, *folders]) if (reports / name).exists()]
    if kept:
        (reports / PREVIOUS).mkdir(exist_ok=True)
    for name in kept:
        if (reports / name).is_dir():
            shutil.rmtree(reports / PREVIOUS / name, ignore_errors=True)
        os.replace(reports / name, reports / PREVIOUS / name)
    return kept


def start(ws: Workspace, run_id: str) -> Workspace:
    """The run's directory, made: the workspace the run's steps write into (published or not), holding the
    run's RunDirectory (what the run reads from it, read once)."""
    run = ws.reports / RUNS / run_id
    run.mkdir(parents=True)
    return dataclasses.replace(ws.running(run), run_directory=RunDirectory(run))


def unfinished(home: Path) -> list[Path]:
    """Run directories left by runs that never finished (stopped, killed): oldest first."""
    runs = home / RUNS
    return sorted((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.name) if runs.is_dir() else []


def prune(home: Path, keep: int = 1) -> Path | None:
    """Remove unfinished runs' directories but the newest `keep` (called under the run lock, so none of
    them is live); the newest one kept, for its logs, or None."""
    left = unfinished(home)
    for stale in left[:-keep] if keep else left:
        shutil.rmtree(stale, ignore_errors=True)
    return left[-1] if keep and left else None


def newer_than_the_last_verdict(home: Path, run: Path) -> bool:
    """Whether an unfinished run's directory changed after the last published verdict: the run after it
    named it and finished, so the runs after that need not name it again (its files stay)."""
    verdict = home / judgement.SUMMARY_JSON  # written as a run ends
    try:
        return not verdict.exists() or run.stat().st_mtime_ns >= verdict.stat().st_mtime_ns
    except OSError:
        return True


def publish(run: Path, home: Path) -> list[str]:
    """Move every file (and folder) of the finished run into `home`, each with one rename, so a reader
    sees a report whole or not at all; then remove the run directory. The names moved. The sessions' job
    files (what they were told, not what they found: their progress files are gone) and the parts its
    entries' reports were joined from (harness.stack.entry_side.parts) are not published."""
    shutil.rmtree(RunDirectory(run).jobs, ignore_errors=True)
    shutil.rmtree(RunDirectory(run).parts, ignore_errors=True)
    moved = []
    for item in sorted(run.iterdir()):
        target = home / item.name
        if item.is_dir() and target.is_dir():
            shutil.rmtree(target)  # a folder (the plan's locks/) is replaced whole, as it was rewritten whole
        os.replace(item, target)
        moved.append(item.name)
    run.rmdir()
    with contextlib.suppress(OSError):
        (home / RUNS).rmdir()  # only when no unfinished run's directory is left in it
    return moved


WRITTEN_WHOLE = (LOCKS_DIR, CHECKPOINTS, PREVIOUS)  # folders of the reports directory a run moves or replaces


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check(ws: Workspace) -> None:
    """HarnessError (before anything is written) when the reports directory is the project's root, lies in
    its golden or locks directory, or would move or replace one of those or a contracts directory."""
    found, reports = project.load(ws), ws.reports.resolve()
    why = _overlap(reports, found)
    if why:
        raise HarnessError(f"reports directory {reports} {why}: a run publishes its files there, moves the last "
                           f"run's to {PREVIOUS}/ and replaces its {LOCKS_DIR}/ and {CHECKPOINTS}/; give --reports "
                           "a directory of its own (the default is reports/ in the project's root).")


def _overlap(reports: Path, found: project.Project) -> str | None:
    """How the reports directory overlaps the project's own files, the first found; None when it does not."""
    if reports == found.root.resolve():
        return "is the project's root"
    own = [("golden", found.golden.resolve()), ("locks", found.locks.resolve()),
           *(("contracts", d.resolve()) for d in found.own_contracts)]
    written = (reports, *(reports / name for name in WRITTEN_WHOLE))
    for what, folder in own:
        if what != "contracts" and _within(reports, folder):  # a run writes nothing into its contracts
            return f"is inside the project's {what} directory {folder}"
        if any(_within(folder, place) for place in written):
            return f"would move or replace the project's {what} directory {folder}"
    return None


LOCK_NAME = ".upgrade.lock"
_HELD: list[int] = []  # the file descriptors of the locks this process holds


def held_fds() -> tuple[int, ...]:
    """The held locks' file descriptors, for the run's entries to inherit: a flock belongs to the open
    file description, so the lock stays held until the run and every entry it started have exited."""
    return tuple(_HELD)


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text() or "{}")
        text = f"pid {info['pid']}, started {info['started']}: {info['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "details unreadable"
    if not _alive(info["pid"]):
        text += "; that process has ended but entries it started still hold the lock while they stop"
    return text


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def hold(reports: Path, command: list[str]):
    """Hold the reports directory's lock for the run; HarnessError when another run holds it.

    An OS lock (flock), so a run that crashed or was killed never leaves a stale lock behind."""
    check_writable(reports)
    path = reports / LOCK_NAME
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise HarnessError(
            f"another upgrade is writing to {reports} ({_holder(path)}); wait for it to finish, or give this "
            "run its own directory with `nox -s upgrade -- --reports DIR`."
        ) from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "started": now(), "command": " ".join(command or sys.argv)}))
        handle.flush()
        _HELD.append(handle.fileno())
        yield
    finally:
        if handle.fileno() in _HELD:
            _HELD.remove(handle.fileno())
        handle.close()  # releases the lock once no entry of the run holds it either


def check_writable(directory: Path, elsewhere: str = "") -> None:
    """The reports directory takes files (a probe written and removed): said before anything runs.
    `elsewhere`: how this command is given another directory (upgrade's `--reports`), when it can be."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise HarnessError(f"reports directory {directory} is not writable: "
                           f"{_unwritable(directory, exc, elsewhere)}.") from None


def _unwritable(directory: Path, exc: OSError, elsewhere: str) -> str:
    """What is wrong, on the path at fault (never the probe, a file the user never sees), and the fix."""
    where = directory if exc.filename is None or Path(exc.filename).parent == directory else exc.filename
    other = f", or {elsewhere}" if elsewhere else ""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{where}: {exc.strerror}; fix the permissions of it or of the directory that holds it{other}"
    if directory.is_file():
        return f"{directory} is a file, not a directory; move it away{other}"
    return f"{where} cannot be created ({exc.strerror or exc}); its parents must be directories{other}"
