"""Each report is read once per run (harness.stack.run.run_directory): an upgrade's steps (the report kept for
reuse, the follow-ups, the bisection, the API diff, the verdict) and `judge DIR` all read a report of the run
through its RunDirectory. Counted on the one read function, report_io.load, with the simulated project
(tests/support/simulated_stack.py: only the child sessions, the resolver and the index are faked); and no
report file is opened by anything else."""

from __future__ import annotations

import collections
import pathlib

import pytest

from support import sequence_driver as drive
from support import simulated_stack as sim
from harness.model import report_io
from harness.stack.commands import upgrade
from harness.stack.run import run_verdict
from harness.stack.run import run_directory
from harness.stack.workspace import Workspace

CHANGES = drive.CANDIDATES["changes checks"]  # two groups bumped: attributed by jax-only and optax-only


@pytest.fixture
def project(tmp_path):
    return sim.make_project(tmp_path / "project")


@pytest.fixture
def reads(monkeypatch, project) -> collections.Counter:
    """report file name -> how often report_io.load read it; and no report read any other way (a JSON file
    of the project named as a report, opened with Path.read_text outside report_io.load, fails the test)."""
    counted: collections.Counter = collections.Counter()
    real_load, real_read_text = report_io.load, pathlib.Path.read_text
    inside = []

    def load(path):
        counted[pathlib.Path(path).name] += 1
        inside.append(True)
        try:
            return real_load(path)
        finally:
            inside.pop()

    def read_text(self, *args, **kwargs):
        if self.suffix == ".json" and not inside and _is_report(self) and project in self.parents:
            raise AssertionError(f"{self} read outside report_io.load")
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(report_io, "load", load)
    monkeypatch.setattr(pathlib.Path, "read_text", read_text)
    return counted


def _is_report(path: pathlib.Path) -> bool:
    """An entry's report in a reports directory (not the plan, the summary, a cache record, the API diff, an
    entry's job file in jobs/)."""
    return path.parent.name != run_directory.JOBS and (
        path.stem in {"baseline", "candidate", "jax-only", "optax-only"} or path.stem.startswith("bisect-"))


def _reports(directory: pathlib.Path) -> set[str]:
    return {p.name for p in directory.glob("*.json") if _is_report(p)}


def test_an_upgrade_reads_each_report_once(project, reads, monkeypatch, capsys):
    drive.install_boundary(monkeypatch)
    assert upgrade.upgrade(Workspace.of(project), ["--candidate", CHANGES, "--bisect"],
                           invoked_from=str(project.parent)) == 1, capsys.readouterr()
    published = _reports(project / "reports")
    assert {"baseline.json", "candidate.json", "jax-only.json", "optax-only.json"} <= published
    assert any(name.startswith("bisect-") for name in published)  # the bisection's probes, judged
    assert dict(reads) == dict.fromkeys(published, 1)


def test_an_upgrade_whose_reports_are_all_reused_reads_none(project, reads, monkeypatch, capsys):
    """Reused, a report is written from the typed record kept for reuse (validated when read from the cache)
    and held: the run never reads it back."""
    drive.install_boundary(monkeypatch)
    argv = ["--candidate", CHANGES]
    assert upgrade.upgrade(Workspace.of(project), argv, invoked_from=str(project.parent)) == 1
    reads.clear()
    assert upgrade.upgrade(Workspace.of(project), argv, invoked_from=str(project.parent)) == 1
    assert "reused" in capsys.readouterr().out and not reads


def test_judge_dir_reads_each_report_once(project, reads, monkeypatch, capsys):
    drive.install_boundary(monkeypatch)
    ws = Workspace.of(project)
    assert upgrade.upgrade(ws, ["--candidate", CHANGES], invoked_from=str(project.parent)) == 1
    reads.clear()
    directory = project / "reports"
    assert run_verdict.judge(ws, directory) == 1, capsys.readouterr()
    assert dict(reads) == dict.fromkeys(_reports(directory), 1)
