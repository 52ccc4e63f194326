"""The entry's second pytest process: the multi-device family (harness.devices), run beside the main suite
(harness.stack.entry_side.entry starts it first) with the devices it needs, its report merged into the
entry's one report (harness.model.report_merge) once both ended.

The main process keeps JAX's default devices, so its single-device results stay as they were; only this
process is told to simulate 4 CPU devices (or to use an accelerator's, `--multi-device-platform`).
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

from harness import devices, env_vars, platforms, run_options
from harness.model import report_io, report_merge
from harness.model.enums import Status
from harness.model.report import JaxPlatform
from harness.stack import paths, project
from harness.run_options import RunOptions
from harness.stack.entry_side import ending, entry_jobs
from harness.stack.pins.matrix import Entry
from harness.verdict.run_reports import RunReports

PARTS = "harness-parts"  # in the entry's environment: the family process's own report, before the merge
NO_CHECKS = 5  # pytest's exit status when a `-k` or `--harness-only` selects none of the family: no failure


@dataclasses.dataclass(frozen=True)
class FamilyProcess:
    """What the family's pytest process is given besides the main run's settings."""

    platform: str
    arguments: tuple[str, ...]
    environment: dict[str, str]


def planned(found: project.Project, environ, platform: str | None = None) -> FamilyProcess | None:
    """The family's process for this project under `environ`, on `platform` (default: the one `environ` names,
    else cpu); None when the run does not take the family (the built-in contracts are off, or the project's
    code shards nothing: harness.stack.selection)."""
    if not found.runs_family(devices.FAMILY):
        return None
    platform = platform or run_options.from_environment(environ).multi_device_platform or platforms.CPU
    return FamilyProcess(platform, ("--pyargs", devices.MODULE, "--harness-multi-device"),
                         devices.process_environment(platform, environ))


def wanted(only: Path | None) -> bool:
    """Whether the run selects any of the family's checks (`only`, the file of --harness-only: attribution and
    replay runs; None: every check)."""
    if not only:
        return True
    return any(line.strip().startswith(f"{devices.FAMILY}/") for line in Path(only).read_text().splitlines())


def part_path(venv: str, report: Path) -> Path:
    return Path(venv) / PARTS / f"{report.stem}.{devices.FAMILY}.json"


@dataclasses.dataclass(frozen=True)
class Ended:
    """How the family's process ended: its own report (`part`, before the merge), its return code (None: it
    never started) and nox's failure, if it failed."""

    part: Path
    code: int | None
    failure: Exception | None


def launch(session, process: FamilyProcess, arguments: list[str], env: dict[str, str], report: Path,
           stdout=None) -> Ended:
    """Run the family's pytest with `arguments` (the main run's, less its contract paths), its output to
    `stdout` (None: the session's); blocks until it ends. Its report is merged by finish()."""
    part = part_path(session.virtualenv.location, report)
    part.parent.mkdir(exist_ok=True)
    part.unlink(missing_ok=True)
    try:
        session.run("python", "-m", paths.SUITE_MAIN, *arguments, *process.arguments, success_codes=[0, NO_CHECKS],
                    env={**env, env_vars.REPORT: str(part), **process.environment},
                    **({} if stdout is None else {"stdout": stdout}))
    except Exception as exc:  # nox's CommandFailed: the return code says how it ended
        return Ended(part, getattr(exc, "return_code", None), exc)
    return Ended(part, 0, None)


def finish(report: Path, ended: Ended, platform: str, run: RunReports | None = None) -> None:
    """Merge the family's report into `report`, which the main run wrote; a process that could not run leaves
    an error check in its place, and its failure (like the main run's) then fails the session. `run`: the
    session's reports, which then hold the merged one as written."""
    merge(report, ended.part, ended.code, platform, run)
    if ended.failure is not None:
        raise ended.failure


def run(session, process: FamilyProcess, arguments: list[str], env: dict[str, str], report: Path) -> None:
    """The family's process after the main run (launch, then finish)."""
    finish(report, launch(session, process, arguments, env, report), process.platform)


def merge(report: Path, part: Path, code: int | None, platform: str, run: RunReports | None = None) -> None:
    """`report` with the family's results (or, when its process wrote none, an error check saying why); `run`
    holds the merged report as written (the session's ending reads it from there, not from the file again)."""
    run = run or RunReports()
    main = run.load(report)
    try:
        found = report_io.load(part)
    except report_io.ReportProblem as exc:
        ended = "before it started" if code is None else ending.explain(code, None)
        detail = f" ({exc})" if part.exists() else ""
        why = f"its pytest process on {platform} {ended}, with no report{detail}; the entry's log has its output"
        merged = report_merge.not_started(main, devices.FAMILY, why, JaxPlatform(backend=None, error=why))
    else:
        if found.problem is None and found.status == Status.PARTIAL and code is not None:
            found = dataclasses.replace(found, problem=ending.explain(code, None))
        merged = report_merge.merged(main, found, devices.FAMILY)
    report_io.write(report, merged)
    run.wrote(report, merged)


def environment_of(process: FamilyProcess | None) -> dict[str, str]:
    """For the report key: what the process is told besides the entry's environment (whose XLA_FLAGS the key
    holds already): its platform, arguments and device count, or nothing when it does not run."""
    if process is None:
        return {}
    added = devices.process_environment(process.platform, {})
    return {"platform": process.platform, "arguments": " ".join(process.arguments), "count": str(devices.COUNT),
            **added}


def job(session, report: Path, entry: Entry, options: RunOptions) -> Path:
    """The family's process's job: the main run's (writing `report`), without the progress file (the upgrade
    shows the main run's checks: the two would overwrite each other's)."""
    return entry_jobs.write_beside(session.virtualenv.location, part_path(session.virtualenv.location, report).stem,
                                   entry, dataclasses.replace(options, progress=None))


class Beside:
    """The family's pytest process running beside the main one, from a thread of the entry's session (nox's
    session.run blocks): its output to a file of its own, written into the session's log once it ended, so the
    two runs' lines never interleave; its report merged into the main run's (`report`) once both ended."""

    def __init__(self, session, family: FamilyProcess, arguments: list[str], env: dict[str, str], report: Path):
        self.family, self.report = family, report
        self.output = part_path(session.virtualenv.location, report).with_suffix(".log")
        self.output.parent.mkdir(exist_ok=True)
        self.ended: Ended | None = None
        self.broke: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(session, arguments, env), daemon=True,
                                       name=f"{devices.FAMILY} family")
        self.thread.start()

    def _run(self, session, arguments, env) -> None:
        try:
            with open(self.output, "w") as out:
                self.ended = launch(session, self.family, arguments, env, self.report, stdout=out)
        except BaseException as exc:  # noqa: BLE001 (raised in the session's own thread by finish())
            self.broke = exc

    def wait(self) -> None:
        """Until the family's process ended; then its output into the log."""
        self.thread.join()
        print(self.output.read_text(errors="replace"), end="", flush=True)

    def finish(self, run: RunReports) -> None:
        """Wait, then merge its report into the main run's (held in `run`), failing the session as its process
        failed."""
        self.wait()
        if self.broke is not None:
            raise self.broke
        finish(self.report, self.ended, self.family.platform, run)
