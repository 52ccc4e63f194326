"""The upgrade session's steps: bad input becomes one clear message and exit status 2."""

import shutil
from pathlib import Path

import pytest

from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.pins import current, locks, matrix
from harness.stack.run import entry_runs
from harness.errors import HarnessError
from unit.stack.commands.test_runner import _checkout  # noqa: F401 (shared with it)


def test_reports_directory_that_is_a_file_is_refused(tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "reports"
    blocked.write_text("not a directory")
    assert upgrade.upgrade(_checkout(blocked), []) == 2
    err = capsys.readouterr().err
    assert "reports directory" in err and "not writable" in err


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv resolves the stacks")
def test_nonexistent_version_is_an_unresolvable_entry(tmp_path):
    entry = current.entries(Workspace.from_environment(), matrix.CandidateRequest.parse("jax==0.0.999 jaxlib==0.0.999"))["candidate"]
    with pytest.raises(HarnessError) as info:
        locks.compile_lock(entry, tmp_path / "lock.txt")
    message = str(info.value)
    assert "cannot resolve matrix entry 'candidate'" in message and "0.0.999" in message
    assert not (tmp_path / "lock.txt").exists()


def test_entry_without_report_is_cannot_judge(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(upgrade, "run_entries", lambda ws, *a, **k: (ws.reports / "baseline.log").write_text("boom\n"))
    assert upgrade.upgrade(_checkout(tmp_path), []) == 2
    err = capsys.readouterr().err
    assert "entry baseline wrote no report" in err and "boom" in err


def test_the_harness_wheel_is_built_once_and_named_to_every_entry(tmp_path, monkeypatch):
    from harness import env_vars
    from harness.stack.environments import harness_source

    monkeypatch.setenv(env_vars.WHEEL, "/stale/from/the/shell.whl")
    builds, told = [], []
    monkeypatch.setattr(harness_source, "wheel_for_entries", lambda ws: builds.append(1) or Path("/cache/built.whl"))

    def run_entries(ws, entries, seed, **kw):
        told.append(entry_runs.told(ws, seed).wheel)  # in each entry's job (harness.model.entry_job)

    monkeypatch.setattr(upgrade, "run_entries", run_entries)
    upgrade.upgrade(_checkout(tmp_path), [])
    assert builds == [1] and told and set(told) == {Path("/cache/built.whl")}

    monkeypatch.setattr(harness_source, "wheel_for_entries", lambda ws: None)  # from a checkout: -e, no wheel
    told.clear()
    upgrade.upgrade(_checkout(tmp_path), [])
    assert told and set(told) == {None}


def test_a_harness_wheel_that_cannot_be_built_stops_the_upgrade_with_the_reason(tmp_path, monkeypatch, capsys):
    from harness.stack.environments import harness_source

    def fail(ws):
        raise HarnessError("building the harness wheel for the entries failed (`uv build ...`): no hatchling")

    monkeypatch.setattr(harness_source, "wheel_for_entries", fail)
    monkeypatch.setattr(upgrade, "run_entries", lambda *a, **k: pytest.fail("entries ran without a harness to install"))
    assert upgrade.upgrade(_checkout(tmp_path), []) == 2
    assert "upgrade: building the harness wheel for the entries failed" in capsys.readouterr().err


def test_an_upgrade_reads_and_checks_its_project_once(tmp_path, monkeypatch):
    """Preflight, resolution, every lock path and the entries' start all read the project: from the workspace
    the command built, never again from disk (each child session is a command of its own)."""
    from harness.stack import project

    reads = []
    real = project._checkout
    monkeypatch.setattr(project, "_checkout", lambda root: reads.append(root) or real(root))
    monkeypatch.setattr(upgrade, "run_entries", lambda ws, *a, **k: (ws.reports / "baseline.log").write_text("boom\n"))
    assert upgrade.upgrade(_checkout(tmp_path), []) == 2  # the entries wrote no report: CANNOT JUDGE
    assert len(reads) == 1
    reads.clear()
    assert upgrade.upgrade(_checkout(tmp_path), ["--no-builtin", "--contracts", str(tmp_path)]) == 2
    assert len(reads) == 1  # a new command reads it again, under its own options
