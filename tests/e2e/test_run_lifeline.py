"""Fault injection: an upgrade's entries die with the run, whatever ends it, and hold the run lock until
they are gone, so a dead run never writes into reports/ beside a live one.

A run of two fake entries (fixtures/fake-run: nox sessions whose child records its pids, sleeps, then
writes reports/<entry>.json) is started in its own session, as a terminal starts a job, and signalled.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import env_vars
from harness.errors import HarnessError
from harness.stack.run import lifeline, run_directory

FAKE = Path(__file__).resolve().parents[1] / "fixtures" / "fake-run"
ENTRIES = ("baseline", "candidate")
PREVIOUS = '{"written by": "the last finished run"}\n'
DEATH_LIMIT_S = 2.0
ENTRY_SLEEP_S = 2.0  # then a surviving entry would write its report

pytestmark = pytest.mark.skipif(not lifeline.dies_with_parent(), reason="the kernel's parent-death signal is Linux's")


def _alive(pid: int) -> bool:
    """Running, not a zombie (an exited child whose parent has not collected it yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class Run:
    def __init__(self, tmp_path: Path, **extra_env: str):
        self.reports, self.pids = tmp_path / "reports", tmp_path / "pids"
        self.reports.mkdir()
        self.pids.mkdir()
        (self.reports / "baseline.json").write_text(PREVIOUS)
        env = {k: v for k, v in os.environ.items()
               if k not in (env_vars.REPORTS_DIR, env_vars.RUN_ID, env_vars.RUN_PID)}
        env.update(FAKE_RUN_PIDS=str(self.pids), FAKE_RUN_SLEEP=str(ENTRY_SLEEP_S), **extra_env)
        self.driver = subprocess.Popen([sys.executable, str(FAKE / "driver.py"), str(self.reports),
                                        str(FAKE / "noxfile.py")], env=env, start_new_session=True,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.entries = self._wait_for_entries()

    def _wait_for_entries(self) -> dict[str, tuple[int, int]]:
        """Each entry's (nox session, its child) once both entries' children are running."""
        deadline = time.monotonic() + 60
        while not all((self.pids / name).exists() for name in ENTRIES):
            if self.driver.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the fake run did not start its entries: {self.driver.stderr.read().decode()}")
            time.sleep(0.05)
        self.started = time.monotonic()
        return {name: tuple(int(p) for p in (self.pids / name).read_text().split()) for name in ENTRIES}

    @property
    def processes(self) -> list[int]:
        return [pid for pair in self.entries.values() for pid in pair]

    def survivors_after(self, limit: float) -> tuple[list[int], float]:
        """The entry processes still alive after `limit` seconds (or none, as soon as they are gone)."""
        t0 = time.monotonic()
        while any(_alive(p) for p in self.processes) and time.monotonic() - t0 < limit:
            time.sleep(0.01)
        return [p for p in self.processes if _alive(p)], time.monotonic() - t0

    def lock_is_free(self) -> bool:
        try:
            with run_directory.hold(self.reports, ["test"]):
                return True
        except HarnessError:
            return False

    def assert_no_report_written(self) -> None:
        """After the entries' sleep has passed, reports/ holds what it held before the run."""
        time.sleep(max(0.0, self.started + ENTRY_SLEEP_S + 0.5 - time.monotonic()))
        assert (self.reports / "baseline.json").read_text() == PREVIOUS
        assert sorted(p.name for p in self.reports.glob("*.json")) == ["baseline.json"]

    def stop(self) -> None:
        for pid in [self.driver.pid, *getattr(self, "processes", [])]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.driver.wait()


@pytest.fixture
def run(tmp_path):
    started = Run(tmp_path)
    yield started
    started.stop()


@pytest.mark.parametrize("sig, whole_group", [
    (signal.SIGKILL, False),  # the out-of-memory killer: the driver alone, no clean-up of its own
    (signal.SIGKILL, True),
    (signal.SIGTERM, True),
    (signal.SIGINT, True),  # Ctrl-C: the terminal signals the foreground process group
], ids=["SIGKILL-driver", "SIGKILL-group", "SIGTERM-group", "SIGINT-group"])
def test_entries_die_with_the_run_and_write_nothing(run, sig, whole_group):
    assert all(_alive(p) for p in run.processes) and not run.lock_is_free()
    if whole_group:
        os.killpg(run.driver.pid, sig)
    else:
        os.kill(run.driver.pid, sig)
    survivors, took = run.survivors_after(DEATH_LIMIT_S)
    assert not survivors, f"entry processes {survivors} outlived the run by {DEATH_LIMIT_S}s"
    print(f"{signal.Signals(sig).name}: the entries were gone {took * 1000:.0f} ms after the signal")
    assert run.driver.wait(timeout=15) != 0
    assert run.lock_is_free()
    run.assert_no_report_written()


def test_the_lock_is_held_until_the_last_entry_has_exited(tmp_path):
    """An entry that takes a while to stop keeps the lock: a new run refuses, saying why, until it is gone."""
    run = Run(tmp_path, FAKE_RUN_SLOW_DEATH="baseline", FAKE_RUN_SLOW_DEATH_S="1.0")
    try:
        os.kill(run.driver.pid, signal.SIGKILL)
        run.driver.wait()
        candidate = list(run.entries["candidate"])
        t0 = time.monotonic()
        while any(_alive(p) for p in candidate) and time.monotonic() - t0 < DEATH_LIMIT_S:
            time.sleep(0.01)
        assert not any(_alive(p) for p in candidate)
        assert _alive(run.entries["baseline"][0])  # still stopping
        with pytest.raises(HarnessError) as refused:
            with run_directory.hold(run.reports, ["nox", "-s", "upgrade"]):
                pass
        assert "another upgrade is writing" in str(refused.value)
        assert "has ended but entries it started still hold the lock" in str(refused.value)
        survivors, _ = run.survivors_after(DEATH_LIMIT_S)
        assert not survivors
        assert run.lock_is_free()
        run.assert_no_report_written()
    finally:
        run.stop()


def test_a_session_whose_run_died_before_it_asked_ends_at_once(tmp_path):
    """The run died between starting the session and the session's request: its parent is not the run."""
    marker = tmp_path / "went-on"
    code = f"from harness.stack.run import lifeline; lifeline.follow_run(); open({str(marker)!r}, 'w')"
    dead_run = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    proc = subprocess.run([sys.executable, "-c", code], start_new_session=True, timeout=30,
                          env={**os.environ, env_vars.RUN_PID: dead_run.stdout.strip()})
    assert proc.returncode == -signal.SIGKILL and not marker.exists()
    alive = subprocess.run([sys.executable, "-c", code], start_new_session=True, timeout=30,
                           env={**os.environ, env_vars.RUN_PID: str(os.getpid())})
    assert alive.returncode == 0 and marker.exists()  # its parent is the run: it goes on
