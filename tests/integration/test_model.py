"""The typed model and the published JSON Schema describe the same file, and real reports survive
the round trip JSON -> model -> JSON unchanged.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/model/test_model.py."""

from harness.model import report_io
from harness.model.codec import to_json


def test_report_written_by_the_plugin_round_trips(recorded_suite):
    _, doc = recorded_suite()
    assert to_json(report_io.parse(doc)) == doc
