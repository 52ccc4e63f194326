"""accept's fake steps for tests/integration/test_accept.py, and a child process that runs accept with them and
is ended at one step: `python accept_child.py CHECKOUT STEP before|after` exits KILLED there (os._exit, which
runs no cleanup, as SIGKILL would). A separate process, never a fork of pytest's (JAX's threads live there)."""

import datetime as dt
import json
import os
import sys
from pathlib import Path

from harness.model import departure
from harness.model.enums import ComparisonKind
from harness.stack.commands import accept
from harness.stack.workspace import Workspace

WHEN = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.timezone.utc)
# A statement the new baseline breaks, as the golden session records it (harness.contract.departures).
DEPARTURE = departure.Departure(
    check="demo/test_update", statement="reference:half the gradient", kind=ComparisonKind.REFERENCE,
    recorded_on={"python": "3.12.1", "jax": "0.12.0.1", "optax": "0.2.8"},
    size=departure.DepartureSize(outside=3, elements=4, allowed="64 ulp", max_abs_err=0.25, max_ulps=4.19e6))
DEPARTURE_KEY = departure.key(DEPARTURE.check, DEPARTURE.statement)


class Fakes:
    """Locking and recording that write small files into accept's staged copy (never the checkout's
    own), noting what they were asked; recording changes a golden file."""

    def __init__(self, golden_status: int = 0, departs: bool = False):
        self.locked, self.recorded, self.golden_status, self.departs = [], [], golden_status, departs

    def steps(self) -> accept.Steps:
        return accept.Steps(lock=self.lock, record_golden=self.record, clock=lambda: WHEN)

    def lock(self, stage, entries) -> None:
        self.locked.extend(entries)
        for entry in entries:
            path = stage.copy_of(stage.root / "locks" / f"{entry.name}.txt")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# lock of {entry.name}\n{entry.pin_text}\n")

    def record(self, stage, reason=None) -> int:
        self.recorded.append(stage.root)
        if self.golden_status:  # as the golden session says it when a check fails on the new baseline
            (stage.root / "reports" / "golden-recording.log").write_text(
                "....F. [100%]golden: NOT written: 1 checks did not pass while recording: demo/test_exact\n"
                "golden:   demo/test_exact: KeyError: 'x'\n"
                "1 failed, 5 passed\n")
        else:
            values = {"a": 2}
            if self.departs:  # the recording found a statement the new baseline breaks
                observed = {"dtype": "float32", "shape": [4], "values": [0.75, 1.25, 0.25, 2.25]}
                values[DEPARTURE_KEY] = departure.entry(DEPARTURE, observed)
            stage.copy_of(stage.root / "golden" / "demo.json").write_text(json.dumps({"values": values}) + "\n")
        return self.golden_status


KILLED = 137  # the child's exit status when a Killing fake ends it


class Killing(Fakes):
    """The fakes, with every step accept takes through its Steps (git, locking, recording, the clock, each
    file moved into place) counted; `at` = (step number, "before"|"after") ends the process there with
    os._exit, which runs no cleanup, as SIGKILL would."""

    def __init__(self, at: tuple[int, str] | None = None):
        super().__init__()
        self.at, self.calls, self.names = at, 0, []

    def _seam(self, name, step):
        def counted(*args):
            self.calls += 1
            self.names.append(name)
            if self.at == (self.calls, "before"):
                os._exit(KILLED)
            out = step(*args)
            if self.at == (self.calls, "after"):
                os._exit(KILLED)
            return out
        return counted

    def steps(self) -> accept.Steps:
        plain = super().steps()
        return accept.Steps(**{f: self._seam(f, getattr(plain, f)) for f in ("lock", "record_golden", "git", "clock",
                                                                              "replace")})


if __name__ == "__main__":
    root, step, when = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    sys.exit(accept.accept(Workspace.checkout(root), [], steps=Killing((step, when)).steps()))
