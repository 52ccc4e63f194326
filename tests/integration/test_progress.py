"""Progress of `nox -s upgrade`: the entry side writes its phase and checks done, the host side reads
them (whatever state the file is in) and shows them, as plain lines in logs and live rows on a terminal.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/run/test_progress.py."""

import subprocess
import sys

from harness.model import progress as progress_file
from harness.model.progress import Phase, Progress
from support import jobs


def test_the_plugin_writes_the_runs_progress(recorded_suite, tmp_path, monkeypatch):
    file = tmp_path / "progress.json"
    jobs.tell(monkeypatch, tmp_path, progress=file)  # as an upgrade's entry is told it
    result, _ = recorded_suite()
    assert result.ret == 0
    assert progress_file.read(file) == Progress(Phase.REPORTING, 6, 6)  # the synthetic suite's six checks


def test_the_entry_side_does_not_import_rich():
    code = ("import sys, harness.contract.progress, harness.contract.plugin, harness.model.progress; "
            "sys.exit('rich' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


ABORTING_SUITE = '''
import os
import pytest

pytestmark = pytest.mark.family("demo")


def test_first(check):
    check.exact("one", 1, 1)


def test_abort(check):
    os.abort()  # as XLA's compiler aborts on a platform without the check's dtype


def test_never_reached(check):
    check.exact("two", 2, 2)
'''


def test_a_process_that_dies_inside_a_check_leaves_the_check_named(pytester, tmp_path, monkeypatch):
    from harness.stack.entry_side import ending

    file = tmp_path / "progress.json"
    jobs.tell(monkeypatch, tmp_path, progress=file)  # as an upgrade's entry is told it
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_demo=ABORTING_SUITE)
    pytester.mkdir("golden")
    result = pytester.runpytest_subprocess("-q", "-p", "no:randomly", "-p", "no:faulthandler",
                                           "--harness-report=report.json", "--harness-golden-dir=golden")
    assert result.ret == -6, result.stdout.str()  # SIGABRT
    state = progress_file.read(file)
    assert state == Progress(Phase.RUNNING, 1, 3, "demo/test_abort")
    assert ending.explain(result.ret, state) == "crashed with SIGABRT in demo/test_abort, after 1 of 3 checks"
