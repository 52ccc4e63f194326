"""A golden recording is all or nothing (harness.stack.commands.golden_record): the entry's two pytest processes
(the main suite's and the multi-device family's, which writes its own golden file) and the checkpoints family's
folder write into a staged copy, moved into place only once the whole recording succeeded. Here the golden
session's own steps run (run_entry, its second process, the merge) on a fake nox session whose commands are
real pytest processes recording a made-up suite with the plugin: a family that passes beside a main run that
fails leaves nothing behind, in this checkout and in a team's project alike."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness import env_vars
from harness.stack import paths, project, staging
from harness.stack.commands import golden_record
from harness.stack.entry_side import entry as stack_entry
from harness.stack.pins.matrix import Entry
from harness.stack.workspace import Workspace
from unit.stack.entry_side.test_data_parallel_wiring import FakeSession, _Nothing

# The main process's suite: a family whose checks write the baseline's checkpoint as the checkpoints family does
# (into the golden store's own folder), and one that fails when MAIN_FAILS is set.
MAIN = '''
import os
import numpy as np
import pytest

pytestmark = pytest.mark.family("checkpoints")


def test_saved(check):
    folder = check.store.directory / "checkpoints" / "float32"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "writer.json").write_text('{"entry": "baseline"}')
    (folder / "checkpoint.bin").write_text("weights")
    check.golden("float32/saved/loss", np.float32(0.5))


def test_maybe_failing(check):
    check.golden("float32/resumed/loss", np.float32(0.25))
    if os.environ.get("MAIN_FAILS"):
        raise KeyError("a check that fails on this baseline")
'''
FAMILY = '''
import numpy as np
import pytest

pytestmark = pytest.mark.family("data_parallel")


def test_sharded(check):
    check.golden("sharded/loss", np.float32(0.125))
'''


def _suite(root: Path) -> Path:
    made = root.parent / f"{root.name}-suite"
    made.mkdir()
    (made / "conftest.py").write_text('pytest_plugins = ["harness.contract.plugin"]\n')
    (made / "test_main.py").write_text(MAIN)
    (made / "test_dp.py").write_text(FAMILY)
    return made


def _pytest(suite: Path, args: list[str], env: dict[str, str]) -> int:
    """One of the entry's pytest processes: the made-up suite's module for it, recorded as the session asked
    (its --harness-record-golden and --harness-accept-changes), into the golden folder its environment names."""
    module = suite / ("test_dp.py" if "--harness-multi-device" in args else "test_main.py")
    recording = [a for a in args if a in ("--harness-record-golden", "--harness-accept-changes")]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           str(module), *recording], cwd=suite, env={**os.environ, **env}, capture_output=True,
                          text=True, check=False)
    print(done.stdout, done.stderr)
    return done.returncode


def _checkout(tmp_path: Path) -> Workspace:
    root = tmp_path / "checkout"
    for folder in ("golden", "locks", "reports", "harness"):
        (root / folder).mkdir(parents=True)
    (root / paths.MATRIX_FILE).write_text('python = "3.12"\n')
    (root / "golden" / "checkpoints.json").write_text('{"format": 1, "values": {}}\n')  # recorded before
    return Workspace.checkout(root)


def _team(tmp_path: Path) -> Workspace:
    root = tmp_path / "team"
    for folder in ("contracts", "golden", "locks", "reports"):
        (root / folder).mkdir(parents=True)
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.upgrade-harness]
        baseline-from = "requirements.txt"
        contracts = ["contracts"]
        builtin = "judge"
    """))
    (root / "requirements.txt").write_text("optax==0.2.6\n")
    (root / "golden" / "checkpoints.json").write_text('{"format": 1, "values": {}}\n')
    return Workspace(root.resolve(), False, root.resolve() / "reports")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "reports" not in p.parts}


def _record(ws: Workspace, suite: Path, monkeypatch, said: list[str]) -> None:
    """The golden session's recording (golden_record.record around run_entry, whole: one process records every
    family but the multi-device one, as harness.stack.sessions runs it), on a fake session whose two commands run
    the made-up suite; what it says goes to `said`."""
    session = FakeSession(ws.root / "reports" / "venv", lambda args, env: _pytest(suite, args, env))
    session.name, session.chdir = "golden", lambda root: _Nothing()
    monkeypatch.setattr(stack_entry.envs, "mark_used", lambda *a: None)
    golden_record.record(ws, lambda staged: stack_entry.run_entry(
        session, staged, Entry("baseline", {}, "", python="3.12"), pytest_args=["--harness-record-golden"],
        report_name="golden-recording", install=False, rollback_reads=False, whole=True), said.append)
    # Both processes were told the staged golden folder, never the project's own.
    told = {env[env_vars.GOLDEN_DIR] for _, env in session.commands}
    assert len(session.commands) == 2 and told == {str(staging.Stage(ws.root).files / "golden")}, told


@pytest.mark.parametrize("where", [_checkout, _team], ids=["checkout", "team"])
def test_a_recording_that_fails_anywhere_writes_nothing_and_one_that_succeeds_writes_everything(
        where, tmp_path, monkeypatch):
    ws = where(tmp_path)
    suite = _suite(ws.root)
    before = _files(ws.root)
    monkeypatch.setenv("MAIN_FAILS", "1")
    said: list[str] = []
    with pytest.raises(Exception) as failed:
        _record(ws, suite, monkeypatch, said)
    assert getattr(failed.value, "return_code", None) == 1  # the main process's checks failed
    assert said == ["golden: NOT written: the recording did not succeed (see above); nothing it recorded was moved "
                    "into place, in either process: the project's golden values are as they were"]
    # The family's process passed and recorded, and the checkpoint was written: neither reached the project.
    assert _files(ws.root) == before
    assert not (ws.root / "golden" / "data_parallel.json").exists()
    assert not (ws.root / "golden" / "checkpoints").exists()
    assert not staging.Stage(ws.root).dir.exists()
    monkeypatch.delenv("MAIN_FAILS")
    said.clear()
    _record(ws, suite, monkeypatch, said)
    # A team's copies of built-in families have a folder of their own (harness.golden_layout).
    copies = "golden/builtin" if where is _team else "golden"
    moved = ([f"{copies}/checkpoints.json", f"{copies}/data_parallel.json", "golden/checkpoints/float32/ (2 files)"]
             if where is _team else  # in the order of their paths
             ["golden/checkpoints/float32/ (2 files)", "golden/checkpoints.json", "golden/data_parallel.json"])
    assert said == [f"golden: moved into place at once: {', '.join(moved)}"]
    assert (ws.root / "golden" / "checkpoints" / "float32" / "checkpoint.bin").read_text() == "weights"
    assert '"sharded/loss"' in (ws.root / copies / "data_parallel.json").read_text()
    assert not staging.Stage(ws.root).dir.exists()
    assert project.load(ws).golden == ws.root / "golden"  # the project's own again, after the staged run


def test_under_accept_the_recording_writes_into_accepts_stage_and_moves_nothing(tmp_path, monkeypatch):
    """accept stages the recording itself (HARNESS_STAGE) and moves it with the pins and locks: the recording
    neither stages again nor takes the staging lock accept holds."""
    ws = _checkout(tmp_path)
    before = _files(ws.root)
    stage = staging.create(ws.root, golden_record.mirrored(ws))
    said: list[str] = []
    with staging.exclusive(ws.root):  # held by accept, as while its recording runs
        _record(ws.staged(stage.files), _suite(ws.root), monkeypatch, said)
    assert said == [] and _files(ws.root) == before
    assert (stage.files / "golden" / "data_parallel.json").exists()
