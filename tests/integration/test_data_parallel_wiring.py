"""The multi-device family's wiring: each entry runs it in a second pytest process told to simulate 4 CPU
devices (after any XLA_FLAGS of the user's), its results join the entry's one report with that process's
device count, a process that cannot start leaves an error check (never a silent gap), the report key
follows its platform, and the verdict shows where each process ran.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/entry_side/test_data_parallel_wiring.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness import devices, env_vars




def test_the_baseline_report_holds_the_family_on_four_devices():
    """The baseline entry `nox -s tests` ran: the family's checks, all passed, on 4 devices beside one."""
    given = os.environ.get(env_vars.BASELINE_REPORT)
    if not given:
        pytest.skip("needs the baseline report `nox -s tests` makes (HARNESS_BASELINE_REPORT)")
    doc = json.loads(Path(given).read_text())
    family = doc["summary"]["by_family"][devices.FAMILY]
    assert family["passed"] >= 10 and family["failed"] == family["error"] == 0
    assert doc["environment"]["jax"]["device_count"] == 1
    assert doc["environment"]["family_platforms"][devices.FAMILY]["device_count"] == devices.COUNT
