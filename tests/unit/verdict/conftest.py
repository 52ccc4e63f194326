"""The committed fixture reports of an upgrade (tests/fixtures, read through support.upgrade_reports), typed, and
their verdict: what the verdict's unit tests read and render."""

import pytest

from harness.model import report_io
from harness.verdict import compare

from support import upgrade_reports


@pytest.fixture(scope="module")
def reports():
    return {name: report_io.parse(upgrade_reports.load(name), name)
            for name in (*upgrade_reports.ENTRIES, "candidate-optax-0.2.7")}


@pytest.fixture(scope="module")
def verdict(reports):
    return compare.judge(reports["baseline"], [reports[n] for n in upgrade_reports.ENTRIES[1:]])
