"""A suite that died before writing its report (a TPU another entry's process holds: JAX raises at import)
gets one from its session, saying why, as a report of the upgrade run it belongs to."""

import pytest

from harness.model import report_io
from harness.model.enums import Status
from harness.stack.entry_side import ending
from harness.stack.entry_side.entry import entry_info, explained
from harness.stack.pins import current
from harness.stack.workspace import Workspace


class _Died(Exception):
    return_code = 1  # nox's CommandFailed: pytest ended with a failure before writing anything


def _candidate():
    return current.entries(Workspace.from_environment())["candidate"]


def test_a_report_written_for_a_suite_that_left_none_is_the_runs(tmp_path):
    report = tmp_path / "candidate.json"
    assert ending.record(report, entry_info(_candidate()), "its suite ended before it started", "2026-01-01T00:00:00+00:00",
                         run_id="20260101T000000-1-abcdef")
    said = report_io.load(report)
    assert said.run_id == "20260101T000000-1-abcdef"
    assert said.status == Status.PARTIAL and said.problem == "its suite ended before it started"


def test_the_entry_session_tells_its_run_id_to_the_report_it_writes(tmp_path):
    report = tmp_path / "candidate.json"
    with pytest.raises(_Died), explained(_candidate(), report, run_id="20260101T000000-1-abcdef"):
        raise _Died()
    said = report_io.load(report)
    assert said.run_id == "20260101T000000-1-abcdef" and said.status == Status.PARTIAL and said.problem
