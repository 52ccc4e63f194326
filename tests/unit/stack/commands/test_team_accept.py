"""`upgrade-harness accept` in a team's project: with its pins file still on the judged baseline, the
whole flow printed as one block and nothing changed (exit 2); once the file pins the judged candidate,
the lock and the team's golden values recorded all at once (exit 0); pins that are neither, refused.
Locking and recording are fakes writing into the staged copy (accept_child.Fakes).

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_team_accept.py."""

from __future__ import annotations

from harness import cli
from harness.stack.commands import options


def test_accept_is_a_command_of_the_installed_tool():
    assert "accept" in options.tool_commands()
