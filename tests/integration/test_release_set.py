"""The nightly's release set: an unchanged set is not judged twice, any change (or no record, or a garbled
one) is judged, and the CLI resolves the newest releases against the baseline without any network here.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/pins/test_release_set.py."""

import os
import subprocess
import sys
from pathlib import Path

from unit.stack.pins.test_release_set import (  # noqa: F401 (fixtures and helpers shared with it)
    TONIGHT, TONIGHT_LABEL, _report,
)


ROOT = Path(__file__).resolve().parents[4]


def test_the_cli_runs_as_a_module(tmp_path):
    report = _report(tmp_path / "candidate.json", {**TONIGHT, "python": "3.12.1"})
    done = subprocess.run([sys.executable, "-m", "harness.stack.commands.latest_cli", "record", "--report", str(report),
                           "--out", str(tmp_path / "s.json")], cwd=ROOT, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "GITHUB_OUTPUT"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Judged release set: {TONIGHT_LABEL}"
