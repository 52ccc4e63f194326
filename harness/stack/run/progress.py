"""What `nox -s upgrade` shows while its entries run, read from each entry's progress file
(harness.model.progress), so minutes of running checks are not minutes of silence.

On a terminal: one live row per running entry (rich: name, bar, phase and checks, elapsed), the
started/finished lines printed above the rows, the rows removed when the entries are done. Elsewhere
(CI logs, `| tee`) escape codes would garble the log: a plain line per running entry every
PLAIN_INTERVAL_S instead. An old runner venv without rich gets the plain lines too.
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.model import progress
from harness.model.progress import Phase, Progress

PLAIN_INTERVAL_S = 15.0  # how often the plain display reports the running entries


def describe(state: Progress | None) -> str:
    """What an entry is doing, in the words both displays use: "running 120/340 checks"."""
    if state is None:
        return Phase.STARTING.value
    if state.phase == Phase.RUNNING:
        return f"running {state.done}/{state.total} checks" if state.total is not None else "running checks"
    if state.phase == Phase.COLLECTING:
        return "collecting checks"
    return state.phase.value


def status_line(name: str, state: Progress | None, elapsed: float) -> str:
    return f"  {name:12s} {describe(state)}  {elapsed:.0f}s"


@dataclass
class Watched:
    """One running entry: its progress file, when it started, the last progress read from it."""

    file: Path
    started: float
    state: Progress | None = None

    def poll(self) -> Progress | None:
        """The file's progress; the last one read while the file is missing or unreadable."""
        self.state = progress.read(self.file) or self.state
        return self.state


class PlainDisplay:
    """Started/finished lines, and every `interval` seconds one line per running entry."""

    def __init__(self, stream, interval: float = PLAIN_INTERVAL_S, clock=time.monotonic):
        self.stream, self.interval, self.clock = stream, interval, clock
        self.watched: dict[str, Watched] = {}
        self.last_report = clock()

    def started(self, name: str, file: Path, line: str) -> None:
        self.watched[name] = Watched(Path(file), self.clock())
        self._print(line)

    def finished(self, name: str, line: str) -> None:
        self.watched.pop(name, None)
        self._print(line)

    def refresh(self) -> None:
        now = self.clock()
        if now - self.last_report < self.interval:
            return
        self.last_report = now
        for name, watched in self.watched.items():
            self._print(status_line(name, watched.poll(), now - watched.started))

    def close(self) -> None:
        pass

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)


class LiveDisplay:
    """rich's progress rows, one per running entry; the started/finished lines printed above them."""

    def __init__(self, console, clock=time.monotonic):
        from rich.progress import BarColumn, Progress as Rows, TextColumn, TimeElapsedColumn

        self.console, self.clock = console, clock
        self.rows = Rows(TextColumn("  {task.fields[name]:12s}", markup=False), BarColumn(bar_width=30),
                         TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                         console=console, transient=True)
        self.watched: dict[str, Watched] = {}
        self.tasks: dict[str, object] = {}
        self.rows.start()

    def started(self, name: str, file: Path, line: str) -> None:
        self._print(line)
        self.watched[name] = Watched(Path(file), self.clock())
        self.tasks[name] = self.rows.add_task(describe(None), total=None, name=name)

    def finished(self, name: str, line: str) -> None:
        self.watched.pop(name, None)
        if name in self.tasks:
            self.rows.remove_task(self.tasks.pop(name))
            self.rows.refresh()  # else the line is printed above the rows as last drawn, the entry's still in
        self._print(line)

    def refresh(self) -> None:
        for name, watched in self.watched.items():
            state = watched.poll()
            counts = {} if state is None or state.total is None else {"total": state.total, "completed": state.done}
            self.rows.update(self.tasks[name], description=describe(state), **counts)

    def close(self) -> None:
        self.rows.stop()

    def _print(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)


def _live(stream) -> LiveDisplay | None:
    """The live display when `stream` is a terminal that can take it and rich is installed."""
    if not getattr(stream, "isatty", lambda: False)():
        return None
    try:
        from rich.console import Console
    except ImportError:  # a runner venv made before locks/runner.txt had rich
        return None
    console = Console(file=stream)
    if not console.is_terminal or console.is_dumb_terminal:
        return None
    return LiveDisplay(console)


@contextlib.contextmanager
def display(stream=None):
    """The display for `stream` (stdout by default), stopped however the block ends (Ctrl-C too)."""
    stream = stream if stream is not None else sys.stdout
    shown = _live(stream) or PlainDisplay(stream)
    try:
        yield shown
    finally:
        shown.close()
