"""Checkpoints across versions, host and contract side without JAX: how a checkpoint's leaves differ from
what the restoring stack expects (a dtype cast, a missing leaf, a dropped one, a shape), said by leaf with
what to do; the rollback's checks judged as the candidate's; each entry's checkpoints written beside its
report in the run's directory (never the project's own folders) and kept with its report for reuse.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/run/test_checkpoint_restore.py."""

from __future__ import annotations


import pytest

from harness import env_vars
from harness.stack import paths
from harness.stack.entry_side import entry as stack_entry, noise_runs
from harness.stack.pins.matrix import Entry


def test_golden_recording_and_the_tests_baseline_keep_no_checkpoints_in_reports(monkeypatch):
    """`nox -s golden` writes the baseline's checkpoints into golden/; its own, and those of `nox -s tests`'
    baseline run, no rollback reads: nothing is left under reports/checkpoints/."""
    import os
    from types import SimpleNamespace
    from unittest import mock

    import nox

    from harness.stack import sessions

    calls = []
    monkeypatch.setattr(stack_entry, "run_entry", lambda *args, **kwargs: calls.append(kwargs))
    monkeypatch.setattr(stack_entry, "install_entry", lambda *args, **kwargs: None)  # installed before the noise runs
    monkeypatch.setattr(noise_runs, "emulated_runs", lambda *args, **kwargs: [])  # no emulated host recorded here
    monkeypatch.setattr(sessions, "require_python", lambda session: None)
    monkeypatch.delenv(env_vars.BUILTIN, raising=False)
    session = SimpleNamespace(posargs=[], invoked_from=str(paths.SOURCE), error=pytest.fail)
    with mock.patch.dict(os.environ):  # the session sets the project's options in its environment
        nox.registry.get()["golden"](session)  # the session the golden command declares
    assert calls and calls[0]["report_name"] == "golden-recording" and calls[0]["rollback_reads"] is False
    noxfile = (paths.SOURCE / "noxfile.py").read_text()
    assert 'report_name="tests-baseline", install=False,\n                          rollback_reads=False,' in noxfile
    env = stack_entry.suite_environment(Entry("baseline", {}, ""), "r/golden-recording.json", "v", paths.SOURCE, True,
                                        rollback_reads=False)
    assert env_vars.CHECKPOINTS not in env
