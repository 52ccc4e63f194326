"""The project a command works on, its pins and where its reports go, built once where the command comes in (the nox
session, the `upgrade-harness` command, a test) and handed down, never kept in module globals: a run in
progress gets a workspace of its own (`running`) instead of repointing a shared one.

What does not depend on the project (the harness package's own files) stays in harness.stack.paths.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Mapping

from harness import env_vars, run_options
from harness.model import entry_job
from harness.run_options import RunOptions
from harness.stack import boundary, paths


@dataclasses.dataclass(frozen=True)
class Workspace:
    """root: the project judged; is_checkout: whether it is this checkout (pins in harness/matrix.toml) or a
    team's project; reports: where this command reads and writes reports, the run's own directory while an
    upgrade runs; home: then the reports directory the run publishes to (None otherwise); matrix: the
    harness's pins (this checkout's baseline and candidate; a project's default candidate); noxfile: the
    sessions the entries' child processes load (None: the checkout's noxfile.py, or the package's
    sessions for a project); stage: while accept or a golden recording prepares its changes, the staged
    copy (harness.stack.staging) where the pins, locks and golden values are read and written instead;
    options: the run's options (--contracts, --builtin, --baseline-from, the run id...), as the command
    line gave them over what the process was told (harness.stack.boundary), paths absolute."""

    root: Path
    is_checkout: bool
    reports: Path
    home: Path | None = None
    matrix: Path = paths.DEFAULT_MATRIX
    noxfile: Path | None = None
    stage: Path | None = None
    options: RunOptions = RunOptions()
    # The project as harness.stack.project.load read it, by what it depends on (its stage and the project's
    # options): shared by every workspace derived from this one (dataclasses.replace keeps it), so a command
    # reads and checks its project once; a new command's workspace starts empty.
    loaded: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    # While an upgrade runs: its harness.stack.run.run_directory.RunDirectory (the reports it has read), which
    # its steps get with RunDirectory.of(ws).
    run_directory: object | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.noxfile is None:
            default = self.root / "noxfile.py" if self.is_checkout else paths.PACKAGE / "stack" / "sessions.py"
            object.__setattr__(self, "noxfile", default)

    @classmethod
    def of(cls, root: Path, reports: Path | None = None) -> Workspace:
        """The project at `root`, its reports in `reports` (default: root/reports)."""
        root = Path(root).resolve()
        return cls(root, root == paths.SOURCE.resolve(), Path(reports) if reports else root / "reports")

    @classmethod
    def checkout(cls, root: Path, reports: Path | None = None) -> Workspace:
        """A checkout of the harness at `root` (this one, or a copy a test works in): its own pins,
        root/harness/matrix.toml, which `nox -s accept` rewrites."""
        root = Path(root).resolve()
        return cls(root, True, Path(reports) if reports else root / "reports", matrix=root / paths.MATRIX_FILE)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Workspace:
        """As the environment says (harness.stack.boundary): HARNESS_PROJECT (set by `upgrade-harness` and a
        team's noxfile; else this checkout), HARNESS_REPORTS_DIR (an upgrade tells its entries the run's
        directory) and the run's options its parent declared (harness.run_options): as variables, and in the
        job file HARNESS_JOB names (an entry's session: harness.model.entry_job)."""
        environ = boundary.variables() if environ is None else environ
        options = run_options.from_environment(environ)
        job = environ.get(env_vars.JOB)
        if job:
            options = entry_job.told(options, entry_job.read(Path(job)))
        found = cls.of(paths.project_root(environ), options.reports_dir)
        found = dataclasses.replace(found, options=options)
        stage = environ.get(env_vars.STAGE)  # accept's golden session records into accept's staged copy
        return found.staged(Path(stage)) if stage else found

    def with_options(self, options: RunOptions) -> Workspace:
        """The same project under a command's options (given over those the process was told)."""
        return dataclasses.replace(self, options=run_options.given_over(self.options, options))

    def staged(self, files: Path) -> Workspace:
        """The same project, its pins, locks and golden values read and written in the staged copy `files`
        (laid out as the project)."""
        matrix = files / self.matrix.relative_to(self.root) if self.is_checkout else self.matrix
        return dataclasses.replace(self, stage=files, matrix=matrix)

    def in_stage(self, path: Path) -> Path:
        """A project file as this command reads and writes it: its staged copy while staging."""
        if self.stage is None:
            return path
        try:
            return self.stage / Path(path).relative_to(self.root)
        except ValueError:
            return path  # outside the project: never staged (harness.stack.staging refuses to stage it)

    def with_reports(self, reports: Path) -> Workspace:
        """The same project, its reports in another directory (`--reports DIR`)."""
        return dataclasses.replace(self, reports=reports, home=None)

    def running(self, run: Path) -> Workspace:
        """While a run is in progress: it writes into `run`, and publishes to this workspace's reports."""
        return dataclasses.replace(self, reports=run, home=self.reports)

    @property
    def published(self) -> Path:
        """The reports directory itself, never a run's own directory: what outlives runs is kept there."""
        return self.home or self.reports

    @property
    def envdir(self) -> Path:
        """The entries' environments: .nox/ beside the default reports/, DIR/.nox for `--reports DIR`, so two
        upgrades in two reports directories never install into one environment."""
        published = self.published
        return self.root / ".nox" if published == self.root / "reports" else published / ".nox"

    @property
    def adhoc_locks(self) -> Path:
        """Where an entry that is not committed (an ad-hoc candidate) has its lock resolved."""
        return self.root / ".nox" / "adhoc-locks"

    @property
    def wheel_cache(self) -> Path:
        """The harness wheels the entries install (an installed tool), by content hash."""
        return self.root / ".nox" / "harness-wheel"
