"""The rollbacks of an upgrade in one baseline process (harness.contract.rollbacks): one pytest session per
writer, each writing its own report as a process of its own per writer did, the suite's modules imported
once; and the host's side: the upgrade's follow-ups start in waves, every rollback in one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import env_vars, run_options
from harness.contract import rollbacks
from harness.model import report_io
from harness.model.enums import Outcome
from harness.stack import paths
from harness.stack.pins import current, matrix
from harness.stack.run import followups
from harness.stack.entry_side import rollback as rollback_runs
from harness.stack.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]

# A contract module standing in for the checkpoints family: it counts its imports and passes only when the
# folder it is told to restore holds a checkpoint.
MODULE = '''
import os
from pathlib import Path

import pytest

from harness.contract import job

with open(os.environ["IMPORTS"], "a") as fh:
    fh.write("imported\\n")

pytestmark = pytest.mark.family("checkpoints")


def test_rollback_layout(request):
    (folder,) = job.options(request.config).rollback_from  # as the checkpoints family reads it
    assert (folder / "checkpoint").is_file(), f"no checkpoint in {folder}"
'''


def test_writers_and_pytests_arguments_are_read_apart():
    writers, arguments = rollbacks.parse(["--writer", "a", "ra.json", "ra.xml", "--writer", "b", "rb.json", "rb.xml",
                                          "--", "-q", "--writer"])
    assert writers == [rollbacks.Writer("a", "ra.json", "ra.xml"), rollbacks.Writer("b", "rb.json", "rb.xml")]
    assert arguments == ["-q", "--writer"]  # after `--`: pytest's, whatever they look like


@pytest.mark.parametrize(("codes", "worst"), [
    ([0, 0], 0), ([0, 1], 1), ([1, 0], 1), ([5, 0], 0), ([5, 5], 5), ([1, 2], 2), ([3, 1], 3), ([], 0)])
def test_the_exit_status_is_the_worst_sessions(codes, worst):
    assert rollbacks.worst(codes) == worst


def test_one_process_writes_each_writers_report_and_imports_the_suite_once(tmp_path, monkeypatch):
    from support import jobs

    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "test_rolls.py").write_text(MODULE)
    folders = {w: tmp_path / "checkpoints" / w for w in ("candidate", "jax-only", "optax-only")}
    for writer, folder in folders.items():
        folder.mkdir(parents=True)
        if writer != "jax-only":  # its writer saved none: its rollback fails, the others' pass
            (folder / "checkpoint").write_text("saved")
    named = []
    for writer, folder in folders.items():
        named += ["--writer", str(folder), str(tmp_path / f"rollback-{writer}.json"), str(tmp_path / f"{writer}.xml")]
    imports = tmp_path / "imports.txt"
    jobs.tell(monkeypatch, tmp_path, "baseline", rollback_from=tuple(folders.values()))  # the session's job: all three
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IMPORTS": str(imports), env_vars.ENTRY: "baseline",
           "JAX_PLATFORMS": "cpu", env_vars.ROLLBACK_FROM: str(tmp_path / "left-in-the-shell")}  # never read
    done = subprocess.run([sys.executable, "-m", "harness.contract.rollbacks", *named, "--", "-c",
                           str(paths.SUITE_INI), "--rootdir", str(tmp_path), "-p", "no:randomly",
                           "-p", "harness.contract.plugin", "-p", "no:cacheprovider", str(tmp_path / "contracts")],
                          env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr  # checks failed (jax-only's), none crashed
    assert imports.read_text().splitlines() == ["imported"]  # one process: the module imported once
    for writer in folders:
        report = report_io.load(tmp_path / f"rollback-{writer}.json")
        (check,) = report.checks
        assert check.id == "checkpoints/test_rollback_layout"  # the id a process of its own gave it
        assert check.outcome == (Outcome.FAILED if writer == "jax-only" else Outcome.PASSED), writer
        assert (tmp_path / f"{writer}.xml").is_file()
    assert "no checkpoint in" in report_io.load(tmp_path / "rollback-jax-only.json").checks[0].message


def _follow_ups(rollback: bool, attributed: bool) -> tuple[followups.FollowUps, list[matrix.Entry]]:
    entries = matrix.upgrade_plan(current.entries(Workspace.of(paths.SOURCE)))
    return followups.FollowUps(
        judged=True, examples={"accumulation/test_p": "blob"}, changed=("accumulation/test_p",) if attributed else (),
        attributed=tuple(entries[2:]) if attributed else (),
        rollback=(f"{rollback_runs.PREFIX}layout[float32]",) if rollback else ()), entries


def test_the_replay_and_the_attribution_start_together_then_one_process_restores_every_writer(tmp_path):
    follow, entries = _follow_ups(rollback=True, attributed=True)
    waves = follow.waves(entries[0], entries[1], tmp_path)
    assert [[r.name for r in wave] for wave in waves] == [["baseline-replay", "jax-only", "optax-only"],
                                                          ["baseline-rollback"]]
    (rolled,) = waves[1]
    assert rolled.entry.name == "baseline" and rolled.only == tmp_path / rollback_runs.SELECTION
    assert rolled.rollback == tuple(tmp_path / "checkpoints" / w for w in ("candidate", "jax-only", "optax-only"))
    assert rolled.reports == tuple(follow.rollbacks(entries[1]).values())  # a report each, as the verdict reads them
    baseline_processes = sum(r.entry.name == "baseline" for wave in waves for r in wave)
    assert baseline_processes == 2  # the replay and one rollback (four before: each rollback its own)
    told = rolled.job(_run(Workspace.of(paths.SOURCE, tmp_path)), 1).options  # what its session is told
    assert told.rollback_from == rolled.rollback
    assert told.report_name is None  # the session names each writer's report


def test_with_nothing_attributed_the_candidates_rollback_runs_beside_the_replay(tmp_path):
    follow, entries = _follow_ups(rollback=True, attributed=False)
    (wave,) = follow.waves(entries[0], entries[1], tmp_path)
    assert [r.name for r in wave] == ["baseline-replay", "baseline-rollback-candidate"]
    assert wave[1].rollback == (tmp_path / "checkpoints" / "candidate",)
    told = wave[1].job(_run(Workspace.of(paths.SOURCE, tmp_path)), 1).options
    assert told.report_name == "baseline-rollback-candidate"  # one writer: as a CI row runs it
    follow, entries = _follow_ups(rollback=False, attributed=True)
    assert [[r.name for r in w] for w in follow.waves(entries[0], entries[1], tmp_path)] == [
        ["baseline-replay", "jax-only", "optax-only"]]


def _run(ws, run_id: str = "20260101T000000-1-aaaaaa"):
    """`ws` with an upgrade's run options: its id, two entries at a time."""
    return ws.with_options(run_options.RunOptions(run_id=run_id, jobs=2))


# A fake baseline session: counts its processes (the folders each restores) and writes, for each folder, the
# baseline's real report as that writer's rollback report, as harness.contract.rollbacks does.
FAKE_NOXFILE = '''
import json, os
from pathlib import Path
import nox
from harness.stack.workspace import Workspace


@nox.session(python=False)
def baseline(session):
    told = Workspace.from_environment().options  # from the session's job, as a real session reads it
    folders = told.rollback_from
    with open("@COUNT@", "a") as fh:
        fh.write(" ".join(f.name for f in folders) + "\\n")
    doc = json.loads(Path("@REPORT@").read_text())
    doc.update(run_id=told.run_id)
    for folder in folders:
        print(f"restored {folder.name}")
        Path(told.reports_dir, f"baseline-rollback-{folder.name}.json").write_text(json.dumps(doc))
'''


def test_one_session_restores_the_writers_whose_reports_it_cannot_reuse_and_logs_each(tmp_path):
    import dataclasses

    from support import upgrade_reports
    from harness.stack.run import entry_runs

    (tmp_path / "baseline.json").write_text(json.dumps(upgrade_reports.load("baseline")))
    count = tmp_path / "processes.txt"
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(FAKE_NOXFILE.replace("@COUNT@", str(count)).replace("@REPORT@", str(tmp_path / "baseline.json")))
    ws = dataclasses.replace(Workspace.of(paths.SOURCE, tmp_path / "reports"), noxfile=noxfile)
    ws.reports.mkdir()
    writers = ("candidate", "jax-only", "optax-only")
    for writer in writers:
        (ws.reports / "checkpoints" / writer).mkdir(parents=True)
        (ws.reports / "checkpoints" / writer / "checkpoint").write_text(f"{writer}'s")
    (ws.reports / rollback_runs.SELECTION).write_text(f"{rollback_runs.PREFIX}layout[float32]\n")
    base = current.entries(ws)[matrix.BASELINE]
    run = entry_runs.Run(base, ws.reports / rollback_runs.SELECTION,
                         rollback=tuple(ws.reports / "checkpoints" / w for w in writers))

    codes = entry_runs.run_sessions(_run(ws, "20260101T000000-1-aaaaaa"), [run], seed=1)
    assert codes == {"baseline-rollback": 0}
    assert count.read_text().splitlines() == [" ".join(writers)]  # one process for the three
    for writer in writers:
        assert report_io.load(ws.reports / f"baseline-rollback-{writer}.json").run_id == "20260101T000000-1-aaaaaa"
        log = (ws.reports / f"baseline-rollback-{writer}.log").read_text()
        assert log.startswith("one baseline process restored the checkpoints of baseline-rollback-candidate, ")
        assert "restored optax-only" in log
    assert not (ws.reports / "baseline-rollback.log").exists()

    # The next run: jax-only's checkpoints changed; the others' rollback reports are reused, one process runs it.
    (ws.reports / "checkpoints" / "jax-only" / "checkpoint").write_text("another")
    codes = entry_runs.run_sessions(_run(ws, "20260101T000001-1-bbbbbb"), [run], seed=1)
    assert count.read_text().splitlines() == [" ".join(writers), "jax-only"]
    assert codes == {"baseline-rollback": 0}
    reused = {w: report_io.load(ws.reports / f"baseline-rollback-{w}.json").reused for w in writers}
    assert reused["jax-only"] is None and reused["candidate"] is not None and reused["optax-only"] is not None
    assert "restored jax-only" in (ws.reports / "baseline-rollback-jax-only.log").read_text()  # its own log
    assert not (ws.reports / "baseline-rollback.log").exists()


def test_a_rollback_process_killed_midway_says_so_in_each_report_it_did_not_finish(tmp_path):
    """As each process of its own did: the writers it had not restored get a partial report with the reason,
    the one it finished keeps its own."""
    import dataclasses

    from support import upgrade_reports
    from harness.model.enums import Status
    from harness.stack.run import entry_runs

    (tmp_path / "baseline.json").write_text(json.dumps(upgrade_reports.load("baseline")))
    noxfile = tmp_path / "noxfile.py"
    killed = FAKE_NOXFILE.replace('''        print(f"restored {folder.name}")''', '''        if folder.name == "jax-only":
            import signal
            os.kill(os.getpid(), signal.SIGKILL)''')
    noxfile.write_text(killed.replace("@COUNT@", str(tmp_path / "n.txt")).replace("@REPORT@", str(tmp_path / "baseline.json")))
    ws = dataclasses.replace(Workspace.of(paths.SOURCE, tmp_path / "reports"), noxfile=noxfile)
    ws.reports.mkdir()
    writers = ("candidate", "jax-only", "optax-only")
    for writer in writers:
        (ws.reports / "checkpoints" / writer).mkdir(parents=True)
    (ws.reports / rollback_runs.SELECTION).write_text(f"{rollback_runs.PREFIX}layout[float32]\n")
    run = entry_runs.Run(current.entries(ws)[matrix.BASELINE], ws.reports / rollback_runs.SELECTION,
                         rollback=tuple(ws.reports / "checkpoints" / w for w in writers))
    codes = entry_runs.run_sessions(_run(ws, "20260101T000000-1-aaaaaa"), [run], seed=1)
    assert codes["baseline-rollback"] != 0
    assert report_io.load(ws.reports / "baseline-rollback-candidate.json").problem is None
    for writer in ("jax-only", "optax-only"):
        report = report_io.load(ws.reports / f"baseline-rollback-{writer}.json")
        assert report.status == Status.PARTIAL and "killed" in report.problem, report.problem
