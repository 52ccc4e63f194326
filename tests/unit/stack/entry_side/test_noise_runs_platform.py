"""A recording on an accelerator measures no CPU-host noise: the emulated hosts change OpenBLAS's kernel and XLA's
CPU code, which a chip's values never pass through (harness.stack.entry_side.noise_runs); on the CPU it does."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest

from harness.run_options import RunOptions
from harness.stack import paths
from harness.stack.entry_side import emulated, noise_runs
from harness.stack.pins import current, matrix
from harness.stack.workspace import Workspace


class Session:
    """What the noise runs ask of a nox session: its log, where its environment is, a folder to run in."""

    def __init__(self, tmp_path):
        self.said: list[str] = []
        self.virtualenv = type("Venv", (), {"location": str(tmp_path)})()
        self.went_to: list[Path] = []

    def log(self, message: str) -> None:
        self.said.append(message)

    def chdir(self, folder):
        self.went_to.append(folder)
        return contextlib.nullcontext()


def test_a_chips_recording_emulates_no_cpu_host(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(emulated, "applicable", lambda session: asked.append(session) or [])
    ws = Workspace.of(paths.SOURCE)
    entry = current.entries(ws)[matrix.BASELINE]
    session = Session(tmp_path)
    assert noise_runs.emulated_runs(session, ws.with_options(RunOptions(platform="tpu")), entry) == []
    assert asked == [] and "no host noise measured on tpu" in session.said[0]
    assert noise_runs.emulated_runs(session, ws.with_options(RunOptions(platform="cpu")), entry) == []
    assert asked == [session]  # the CPU's recording asks which hosts it can emulate


def test_a_teams_failing_contract_stops_the_recording_after_one_pass(tmp_path, monkeypatch):
    """A team's own contracts run once before any perturbed or emulated run: one that fails stops the recording
    there, with its log's tail, and nothing else runs; this checkout (no contracts of its own) runs no quick pass."""
    from harness import env_vars
    from harness.errors import HarnessError

    (tmp_path / "team" / "contracts").mkdir(parents=True)
    (tmp_path / "team" / "contracts" / "test_loss.py").write_text("def test_loss(check):\n    pass\n")
    (tmp_path / "team" / "requirements.txt").write_text(
        "jax==0.11.2\njaxlib==0.11.2\noptax==0.2.6\nflax==0.12.12\nnumpy==2.5.5\n")
    (tmp_path / "team" / "pyproject.toml").write_text(
        '[tool.upgrade-harness]\nbaseline-from = "requirements.txt"\ncontracts = ["contracts"]\n')
    monkeypatch.setenv(env_vars.PROJECT, str(tmp_path / "team"))
    ws = Workspace.from_environment()
    ran = []

    class Failing(Session):
        def chdir(self, folder):
            return contextlib.nullcontext()

        def run(self, *args, stdout=None, **kwargs):
            ran.append(args)
            stdout.write("contracts/test_loss.py F\nAssertionError: the loss went up\n")
            stdout.flush()
            raise RuntimeError("Returned code 1")

    with pytest.raises(HarnessError, match=r"(?s)your contracts do not all pass on the baseline \(Returned code 1; the "
                                           r"whole log: .*run.log\).*AssertionError: the loss went up"):
        noise_runs.quick_pass(Failing(tmp_path / "venv"), ws, current.entries(ws)[matrix.BASELINE])
    assert len(ran) == 1 and "--harness-record-golden" in ran[0]
    checkout = Workspace.of(paths.SOURCE)
    noise_runs.quick_pass(Failing(tmp_path / "venv"), checkout, current.entries(checkout)[matrix.BASELINE])
    assert len(ran) == 1


def test_each_emulated_host_records_what_the_map_takes_and_leaves_the_rest_out(tmp_path, monkeypatch):
    """With a report of the baseline's last judging run, each emulated host's recording leaves out (--harness-except,
    the list in its folder) the checks its dimension never moved, but this commit's share; without one, none."""
    import json

    from harness import host_emulation
    from harness.host_emulation import LEFT_OUT
    from harness.model.enums import CheckKind, ComparisonKind, Outcome
    from harness.model.report import CheckRecord, Comparison, Tolerance

    def check(check_id, *labels):
        return CheckRecord(id=check_id, nodeid=f"{check_id}.py::x", family=check_id.split("/")[0],
                           kind=CheckKind.GOLDEN,
                           outcome=Outcome.PASSED, duration_s=0.0, exception=None, message="", falsifying_example=None,
                           examples=None, max_abs_err=None, max_rel_err=None, errors_observed={}, series={},
                           comparisons=[Comparison(label, ComparisonKind.GOLDEN, True, Tolerance(4), "float32", [1])
                                        for label in labels])

    golden = tmp_path / "golden"
    golden.mkdir()
    values = {"moved": {"dtype": "float32", "shape": [1], "values": [0.5], "host_noise": {"blas": 1e-8}},
              **{f"still/{i}": {"dtype": "float32", "shape": [1], "values": [0.25]} for i in range(40)}}
    (golden / "masks.json").write_text(json.dumps({"format": 1, "family": "masks", "values": values}))
    checks = [check("masks/test_moved", "golden:moved")] + [check(f"masks/test_still_{i}", f"golden:still/{i}")
                                                            for i in range(40)]
    checks.append(check("data_parallel/test_pmean", "golden:pmean"))  # its process is not emulated: none of the map's
    project = type("Project", (), {"golden": golden, "root": tmp_path})()
    blas = next(e for e in host_emulation.EMULATIONS if e.dimension.value == "blas")
    monkeypatch.setattr(emulated, "applicable", lambda session: [blas])
    monkeypatch.setattr(emulated, "environment", lambda *args: {})
    monkeypatch.setattr(noise_runs.project, "load", lambda ws: project)
    monkeypatch.setattr(noise_runs.host_map, "turn", lambda root: 0)  # git's count of commits, a process
    recorded = []
    monkeypatch.setattr(noise_runs, "_record", lambda session, found, folder, env, label, *flags:
                        recorded.append(flags) or True)
    ws = Workspace.of(paths.SOURCE)
    entry = current.entries(ws)[matrix.BASELINE]
    monkeypatch.setattr(noise_runs, "_judged", lambda ws, entry: type("Report", (), {"checks": checks})())
    session = Session(tmp_path)
    assert noise_runs.record(session, noise_runs.emulated_runs(session, ws, entry), 1) == [
        f"--harness-host-noise-from=blas={tmp_path}/{noise_runs.HOST_FOLDER}/{blas.name}"]
    (flag,) = recorded[0]
    left = (tmp_path / noise_runs.HOST_FOLDER / blas.name / LEFT_OUT).read_text().splitlines()
    assert flag == f"--harness-except={tmp_path / noise_runs.HOST_FOLDER / blas.name / LEFT_OUT}"
    assert "masks/test_moved" not in left and 30 <= len(left) < 40  # the moved one and this turn's share run
    assert not any(c.startswith("data_parallel/") for c in left)
    monkeypatch.setattr(noise_runs, "_judged", lambda ws, entry: None)
    noise_runs.record(session, noise_runs.emulated_runs(session, ws, entry), 1)
    assert recorded[1] == ()  # no report to take the map from: every check runs there


def test_a_host_whose_map_left_every_check_out_records_nothing_and_says_so(tmp_path, monkeypatch):
    """pytest's "no tests" (exit 5) is no failure for a run that leaves checks out by the map: nothing to record
    there, said as such; a run of every check still fails on it."""
    from harness.host_emulation import LEFT_OUT

    asked = []

    class Runs(Session):
        def chdir(self, folder):
            return contextlib.nullcontext()

        def run(self, *args, success_codes=(0,), **kwargs):
            asked.append(list(success_codes))

    folder = tmp_path / "blas-haswell"
    folder.mkdir()
    (folder / LEFT_OUT).write_text("masks/test_still\n")
    session = Runs(tmp_path)
    found = type("Project", (), {"root": tmp_path})()
    monkeypatch.setattr(noise_runs.stack_entry, "suite_arguments", lambda found: [])
    assert noise_runs._record(session, found, folder, {}, "on blas-haswell", f"--harness-except={folder / LEFT_OUT}") \
        is False
    noise_runs._record(session, found, tmp_path, {}, "on no-fma")
    assert asked == [[0, 5], [0]]
    assert any("nothing to record, the measured map left every check out" in said for said in session.said)


def _runs(tmp_path, count):
    found = type("Project", (), {"root": tmp_path})()
    return [noise_runs.NoiseRun(f"run {i}", found, tmp_path / str(i), {}, (), f"--from={i}") for i in range(count)]


def test_the_noise_runs_go_side_by_side_up_to_the_cores_and_keep_their_order(tmp_path, monkeypatch):
    """Each perturbed and emulated run is a process of its own writing its own folder: `record` starts them
    `at_once` at a time (two are seen running together here: a barrier only two at once pass), from the
    project's root entered once, and names those that recorded in the runs' order, whichever ended first."""
    together = threading.Barrier(2, timeout=30)
    running, most = [], []

    def record_one(session, found, folder, env, label, *flags):
        running.append(label)
        most.append(len(running))
        together.wait()  # a run alone here (one at a time) would wait 30 s and break the barrier
        running.remove(label)
        return label != "run 2"  # the third recorded nothing (it failed before any value)

    monkeypatch.setattr(noise_runs, "_record", record_one)
    session = Session(tmp_path)
    assert noise_runs.record(session, _runs(tmp_path, 4), 2) == ["--from=0", "--from=1", "--from=3"]
    assert max(most) == 2 and session.went_to == [tmp_path]
    assert "the 4 noise runs 2 at a time" in session.said[0]


def test_one_at_a_time_the_runs_never_overlap(tmp_path, monkeypatch):
    """At one at a time each run waits alone at a barrier for two: were another running beside it, the barrier
    would let both through instead of breaking."""
    alone = threading.Barrier(2, timeout=0.2)
    broke = []

    def record_one(session, found, folder, env, label, *flags):
        try:
            alone.wait()
        except threading.BrokenBarrierError:
            broke.append(label)
            alone.reset()
        return True

    monkeypatch.setattr(noise_runs, "_record", record_one)
    assert noise_runs.record(Session(tmp_path), _runs(tmp_path, 3), 1) == ["--from=0", "--from=1", "--from=2"]
    assert broke == ["run 0", "run 1", "run 2"]


@pytest.mark.parametrize(("platform", "environ", "one"), [
    ("tpu", {}, True),  # the chip's runs: one process at a time holds it
    ("cpu", {"TPU_ACCELERATOR_TYPE": "v5litepod-1"}, False),  # a TPU host's CPU side: its cores
    (None, {"TPU_ACCELERATOR_TYPE": "v5litepod-1"}, True),  # a TPU host, JAX free to take the chip
    (None, {"TPU_ACCELERATOR_TYPE": "v5litepod-1", "JAX_PLATFORMS": "cpu"}, False),
    (None, {}, False),
])
def test_the_runs_side_by_side_are_one_a_core_off_a_chip(platform, environ, one, monkeypatch):
    for name in ("JAX_PLATFORMS", "TPU_ACCELERATOR_TYPE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(noise_runs.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    ws = Workspace.of(paths.SOURCE).with_options(RunOptions(platform=platform))
    assert noise_runs.side_by_side(ws) == (1 if one else 3)


def test_the_runs_that_compile_anew_start_first_the_larger_first_and_the_blas_kernels_in_turn(tmp_path, monkeypatch):
    """The longest start first (XLA's flags changed: each program compiled anew; the larger selection first), so
    the last to end is not a long run started late; the BLAS kernels' runs, which share the native run's
    compiled programs (and cache files), one after another in one chain, never beside each other. The arguments
    keep the plan's order."""
    found = type("Project", (), {"root": tmp_path})()
    plan = [noise_runs.NoiseRun("on blas-haswell", found, tmp_path, {}, (), "haswell", compiles=False, size=235),
            noise_runs.NoiseRun("under opt0", found, tmp_path, {}, (), "opt0"),  # the project's own contracts
            noise_runs.NoiseRun("on blas-prescott", found, tmp_path, {}, (), "prescott", compiles=False, size=235),
            noise_runs.NoiseRun("on vector-avx2", found, tmp_path, {}, (), "avx2", size=228),
            noise_runs.NoiseRun("on no-fma", found, tmp_path, {}, (), "fma", size=425)]
    began, running, beside = [], set(), []
    lock = threading.Lock()

    def record_one(session, found, folder, env, label, *flags):
        with lock:
            began.append(label)
            running.add(label)
            beside.append(set(running))
        threading.Event().wait(0.05)  # time for a run started beside it to be seen
        with lock:
            running.discard(label)
        return label != "under opt0"

    monkeypatch.setattr(noise_runs, "_record", record_one)
    assert noise_runs.record(Session(tmp_path), plan, 1) == ["haswell", "prescott", "avx2", "fma"]
    assert began == ["on no-fma", "on vector-avx2", "under opt0", "on blas-haswell", "on blas-prescott"]
    began.clear()
    noise_runs.record(Session(tmp_path), plan, 4)
    assert not any({"on blas-haswell", "on blas-prescott"} <= seen for seen in beside)
    assert began.index("on blas-haswell") < began.index("on blas-prescott")
