"""Fault injection: an upgrade's entries die with the run, whatever ends it, and hold the run lock until
they are gone, so a dead run never writes into reports/ beside a live one.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/e2e/test_run_lifeline.py."""

import signal

import pytest

from harness import env_vars
from harness.stack.run import lifeline


pytestmark = pytest.mark.skipif(not lifeline.dies_with_parent(), reason="the kernel's parent-death signal is Linux's")


def test_a_session_started_outside_an_upgrade_keeps_its_signals(monkeypatch):
    """`nox -s baseline` from a shell or a script: its SIGTERM must not kill the caller's process group."""
    monkeypatch.delenv(env_vars.RUN_PID, raising=False)
    before = signal.getsignal(signal.SIGTERM)
    lifeline.follow_run()
    assert signal.getsignal(signal.SIGTERM) is before


def test_importing_it_starts_no_process():
    """Every entry's session and every command imports it: loading libc must not ask ldconfig (a process per
    import, and a unit test that imports it first fails under the layer's no-process guard)."""
    import importlib

    reloaded = importlib.reload(lifeline)  # under the unit layer's guard: Popen raises
    assert reloaded.dies_with_parent()
