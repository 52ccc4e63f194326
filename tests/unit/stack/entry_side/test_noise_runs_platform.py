"""A recording on an accelerator measures no CPU-host noise: the emulated hosts change OpenBLAS's kernel and XLA's
CPU code, which a chip's values never pass through (harness.stack.entry_side.noise_runs); on the CPU it does."""

from __future__ import annotations

from harness.run_options import RunOptions
from harness.stack import paths
from harness.stack.entry_side import emulated, noise_runs
from harness.stack.pins import current, matrix
from harness.stack.workspace import Workspace


class Session:
    """What record_emulated asks of a nox session: its log, and where its environment is."""

    def __init__(self, tmp_path):
        self.said: list[str] = []
        self.virtualenv = type("Venv", (), {"location": str(tmp_path)})()

    def log(self, message: str) -> None:
        self.said.append(message)


def test_a_chips_recording_emulates_no_cpu_host(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(emulated, "applicable", lambda session: asked.append(session) or [])
    ws = Workspace.of(paths.SOURCE)
    entry = current.entries(ws)[matrix.BASELINE]
    session = Session(tmp_path)
    assert noise_runs.record_emulated(session, ws.with_options(RunOptions(platform="tpu")), entry) == []
    assert asked == [] and "no host noise measured on tpu" in session.said[0]
    assert noise_runs.record_emulated(session, ws.with_options(RunOptions(platform="cpu")), entry) == []
    assert asked == [session]  # the CPU's recording asks which hosts it can emulate
