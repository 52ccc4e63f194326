"""Progress of `nox -s upgrade`: the entry side writes its phase and checks done, the host side reads
them (whatever state the file is in) and shows them, as plain lines in logs and live rows on a terminal."""

import io
import json
import sys
from types import SimpleNamespace

import pytest

from harness import env_vars
from harness.contract.progress import ProgressWriter
from harness.model import progress as progress_file
from harness.model.progress import Phase, Progress
from harness.stack.run import entry_runs


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_writer_counts_checks_into_the_file(tmp_path):
    file, clock = tmp_path / "candidate.json", Clock()
    writer = ProgressWriter(str(file), clock=clock)
    writer.collecting()
    assert progress_file.read(file) == Progress(Phase.COLLECTING, 0, None)
    writer.running(340)
    for _ in range(12):
        clock.now += 1.0  # slower than the write interval: every check is written
        writer.check_finished()
    assert json.loads(file.read_text()) == {"phase": "running", "done": 12, "total": 340}
    writer.reporting()
    assert progress_file.read(file) == Progress(Phase.REPORTING, 12, 340)


def test_writer_batches_fast_checks_but_writes_the_last(tmp_path):
    file = tmp_path / "baseline.json"
    writer = ProgressWriter(str(file), clock=Clock())  # the clock never moves: every check is "fast"
    writer.running(3)
    writer.check_finished()
    writer.check_finished()
    assert progress_file.read(file) == Progress(Phase.RUNNING, 0, 3)
    writer.check_finished()
    assert progress_file.read(file) == Progress(Phase.RUNNING, 3, 3)


def test_writer_without_a_file_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(env_vars.JOB, raising=False)  # a run by hand: no job, so no progress file
    monkeypatch.chdir(tmp_path)
    writer = ProgressWriter.of(SimpleNamespace(getoption=lambda name, default=None: default))
    writer.running(5)
    writer.check_finished()
    assert list(tmp_path.iterdir()) == []


def test_nothing_is_written_once_the_directory_is_gone(tmp_path):
    gone = tmp_path / "harness-progress-x"
    progress_file.write(gone / "candidate.json", Progress(Phase.RUNNING, 1, 2))
    assert not gone.exists()


@pytest.mark.parametrize("content", [
    "", '{"phase": "runn', '{"phase": "running", "done": 12, "tot', "[1, 2]", '"running"', "\x00\xff garbage",
    '{"phase": "sleeping", "done": 1, "total": 2}', '{"phase": "running", "done": -1, "total": 2}',
    '{"phase": "running", "done": "12", "total": 340}', '{"phase": "running", "done": 1, "total": true}',
])
def test_reader_given_a_half_written_or_garbled_file_returns_none(tmp_path, content):
    file = tmp_path / "candidate.json"
    file.write_text(content)
    assert progress_file.read(file) is None


def test_reader_given_no_file_returns_none(tmp_path):
    assert progress_file.read(tmp_path / "missing.json") is None


def test_plain_display_prints_a_line_per_running_entry_every_interval(tmp_path):
    out, clock = io.StringIO(), Clock()
    shown = entry_runs.PlainDisplay(out, interval=15.0, clock=clock)
    cand, base = tmp_path / "candidate.json", tmp_path / "baseline.json"
    cand.write_text('{"phase": "running", "done": 12, "total": 340}\n')
    base.write_text('{"phase": "installing", "done": 0, "total": null}\n')
    shown.started("baseline", base, "  baseline     started   jax==0.11.2")
    shown.started("candidate", cand, "  candidate    started   jax==0.12.0.1")
    clock.now += 14.0
    shown.refresh()
    assert out.getvalue().splitlines() == ["  baseline     started   jax==0.11.2", "  candidate    started   jax==0.12.0.1"]
    clock.now += 31.0
    shown.refresh()
    assert out.getvalue().splitlines()[2:] == ["  baseline     installing  45s", "  candidate    running 12/340 checks  45s"]


def test_plain_display_keeps_the_last_progress_through_a_garbled_read(tmp_path):
    out, clock = io.StringIO(), Clock()
    shown = entry_runs.PlainDisplay(out, interval=15.0, clock=clock)
    cand = tmp_path / "candidate.json"
    shown.started("candidate", cand, "  candidate    started")
    clock.now += 15.0
    shown.refresh()  # no file yet: the entry's environment is being made
    cand.write_text('{"phase": "running", "done": 120, "total": 340}')
    clock.now += 15.0
    shown.refresh()
    cand.write_text('{"phase": "running", "do')
    clock.now += 15.0
    shown.refresh()
    shown.finished("candidate", "  candidate    finished  in  50.0s")
    clock.now += 15.0
    shown.refresh()  # nothing runs: nothing to say
    assert out.getvalue().splitlines()[1:] == [
        "  candidate    starting  15s", "  candidate    running 120/340 checks  30s",
        "  candidate    running 120/340 checks  45s", "  candidate    finished  in  50.0s"]


def test_live_display_shows_rows_and_stops_cleanly(tmp_path):
    from rich.console import Console

    out = io.StringIO()
    cand = tmp_path / "candidate.json"
    cand.write_text('{"phase": "running", "done": 12, "total": 340}')
    shown = entry_runs.LiveDisplay(Console(file=out, force_terminal=True, width=100))
    shown.started("candidate", cand, "  candidate    started   jax==0.12.0.1")
    shown.refresh()
    shown.rows.refresh()
    shown.finished("candidate", "  candidate    finished  in  50.0s")
    shown.close()
    text = out.getvalue()
    assert "running 12/340 checks" in text and "candidate    finished  in  50.0s" in text
    assert "running 12/340" not in text[text.index("finished"):]  # its row is not drawn again below the line
    assert not shown.rows.live.is_started and text.rstrip("\r").endswith("\x1b[?25h")  # cursor shown again


def test_display_is_live_on_a_terminal_and_stopped_by_ctrl_c(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    out = Tty()
    with pytest.raises(KeyboardInterrupt):
        with entry_runs.display(out) as shown:
            assert isinstance(shown, entry_runs.LiveDisplay)
            raise KeyboardInterrupt
    assert not shown.rows.live.is_started


def test_display_is_plain_in_a_log_or_without_rich(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    with entry_runs.display(io.StringIO()) as shown:
        assert isinstance(shown, entry_runs.PlainDisplay)
    monkeypatch.setitem(sys.modules, "rich.console", None)  # import fails, as in an old runner venv
    with entry_runs.display(Tty()) as shown:
        assert isinstance(shown, entry_runs.PlainDisplay)


def test_writer_names_the_check_as_it_starts_and_not_once_it_is_done(tmp_path):
    file = tmp_path / "candidate.json"
    writer = ProgressWriter(str(file), clock=Clock())  # the clock never moves: only forced writes land
    writer.running(3)
    writer.check_started("clipping/test_x")
    assert progress_file.read(file) == Progress(Phase.RUNNING, 0, 3, "clipping/test_x")
    writer.check_finished()
    writer.check_started("clipping/test_y")
    assert progress_file.read(file) == Progress(Phase.RUNNING, 1, 3, "clipping/test_y")
    writer.check_finished()
    writer.check_finished()
    assert progress_file.read(file) == Progress(Phase.RUNNING, 3, 3)


def test_reader_refuses_a_current_check_that_is_not_a_name(tmp_path):
    file = tmp_path / "candidate.json"
    file.write_text('{"phase": "running", "done": 1, "total": 2, "current": 7}')
    assert progress_file.read(file) is None
