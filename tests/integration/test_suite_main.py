"""The contract suite's process (harness.contract.suite_main) ends as soon as pytest returned: pytest's exit
status and output, the exit functions registered but JAX's clean-up (Python's teardown after them is
skipped with os._exit, which leaves nothing to observe)."""

import subprocess
import sys

import pytest

from harness.stack import paths

# A test module that leaves a trace of the exit functions that ran: a team's own, and a stand-in for JAX's
# (found where the suite's process looks for it).
PROBE = '''
import atexit
import pathlib
import sys
import types

OUT = pathlib.Path({out!r})


def _mark(name):
    (OUT / name).write_text("ran")


atexit.register(_mark, "team-exit-function")
api = types.ModuleType("jax._src.api")
api.clean_up = lambda: _mark("jax-clean-up")
atexit.register(api.clean_up)
sys.modules["jax._src.api"] = api


def test_probe():
    print("PROBE printed")
    assert {outcome}
'''


def _run(tmp_path, outcome: str, module: str = paths.SUITE_MAIN) -> tuple[subprocess.CompletedProcess, set[str]]:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "test_probe.py").write_text(PROBE.format(out=str(out), outcome=outcome))
    done = subprocess.run([sys.executable, "-m", module, "-q", "-s", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "test_probe.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return done, {p.name for p in out.iterdir()}


@pytest.mark.parametrize(("outcome", "status"), [("True", 0), ("False", 1)])
def test_the_suite_process_ends_with_pytests_status_and_output_without_the_teardown(tmp_path, outcome, status):
    done, marks = _run(tmp_path, outcome)
    assert done.returncode == status, done.stderr
    assert "PROBE printed" in done.stdout and ("1 passed" if status == 0 else "1 failed") in done.stdout
    assert marks == {"team-exit-function"}  # JAX's clean-up skipped
    # The harness package, imported before pytest starts, is not one pytest could still rewrite: it says so.
    assert "PytestAssertRewriteWarning" not in done.stdout
    # pytest's own entry point for programs (pytest.console_main is deprecated for them since pytest 9).
    assert "Warning" not in done.stderr, done.stderr


def test_pytests_own_command_line_runs_all_of_them(tmp_path):
    """The comparison: the same run through `python -m pytest` pays for JAX's clean-up."""
    done, marks = _run(tmp_path, "True", module="pytest")
    assert done.returncode == 0, done.stderr
    assert marks == {"team-exit-function", "jax-clean-up"}
