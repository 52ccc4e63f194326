"""The pytest plugin: options, the `check` and `timing` fixtures, and the hooks that feed the report.

Registered as a pytest11 entry point, so it is there wherever the package is installed; the entries
also load it with `-p harness.contract.plugin`. Options (each also an environment variable, so the
nox sessions only have to set the environment):

  --harness-report PATH      HARNESS_REPORT      where to write the report (no report when unset)
  --harness-entry NAME       HARNESS_ENTRY       the matrix entry name recorded in the report
  --harness-golden-dir DIR   HARNESS_GOLDEN_DIR  golden store (default: <rootdir>/golden)
  --harness-only FILE        HARNESS_ONLY        run only the check ids listed in FILE (one per line)
  --harness-own-contracts DIRS                   the project's contract directories (os.pathsep-separated):
                                                 their families are listed as the project's own
  --harness-record-golden                        record golden values instead of comparing
  --harness-accept-changes                       with --harness-record-golden: allow changed values

With HARNESS_PROGRESS set (by `nox -s upgrade`), the checks collected and done go to that file
(harness.contract.progress) for the upgrade's progress display.

The work is done elsewhere: harness.contract.session (the report), .outcome (one check's record),
.warning_log, .golden_recording and .checks (the `check` API).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from harness import env_vars
from harness.contract import families, golden_recording, hypothesis_profiles, outcome, replay
from harness.contract.checks import Check
from harness.contract.progress import ProgressWriter
from harness.contract.session import Recorder
from harness.model.enums import Outcome, Status
from harness.model.report import PerformanceRecord
from harness.model.report_io import ReportProblem

hypothesis_profiles.register()

_RECORDER = pytest.StashKey[Recorder]()
_CHECK = pytest.StashKey[Check]()
_EXAMPLES = pytest.StashKey[list]()
_PROGRESS = pytest.StashKey[ProgressWriter]()
# pytest_warning_recorded and pytest_collectreport get no config: the running recorder is found here.
_ACTIVE: list[Recorder] = []


def pytest_addoption(parser):
    group = parser.getgroup("upgrade-harness")
    group.addoption("--harness-report", default=os.environ.get(env_vars.REPORT), help="report path")
    group.addoption("--harness-entry", default=os.environ.get(env_vars.ENTRY, "local"), help="matrix entry name")
    group.addoption("--harness-golden-dir", default=os.environ.get(env_vars.GOLDEN_DIR), help="golden directory")
    group.addoption("--harness-builtin-golden-dir", default=os.environ.get(env_vars.BUILTIN_GOLDEN_DIR),
                    help="where a family missing from the golden directory is read from (the tool's own values)")
    group.addoption("--harness-only", default=os.environ.get(env_vars.ONLY),
                    help="file of check ids (family/test[params]) to run; the rest are deselected")
    group.addoption("--harness-own-contracts", default=None,
                    help="the project's own contract directories (their families are the project's own)")
    group.addoption("--harness-record-golden", action="store_true", help="record golden values")
    group.addoption("--harness-accept-changes", action="store_true", help="allow changing recorded golden values")


def pytest_configure(config):
    recorder = Recorder(config)
    if recorder.harness_run:
        # A module that no longer imports after a bump is one failed check, not the end of the run.
        config.option.continue_on_collection_errors = True
    config.stash[_RECORDER] = recorder
    _ACTIVE.append(recorder)
    config.stash[_PROGRESS] = ProgressWriter.from_environment()
    config.addinivalue_line("markers", "family(name): the contract family of the checks in a module")
    config.addinivalue_line("markers", "performance: a timing, reported under performance, not a contract")


def pytest_unconfigure(config):
    if _RECORDER in config.stash and config.stash[_RECORDER] in _ACTIVE:
        _ACTIVE.remove(config.stash[_RECORDER])


def pytest_collection_modifyitems(config, items):
    """Tell the project's own families from the built-in ones; with --harness-only, run just the listed
    checks (attribution and replay runs)."""
    recorder = config.stash[_RECORDER]
    recorder.own_families |= families.own(items, recorder.own_contracts)
    selection = recorder.selection
    if selection is None:
        return
    wanted = set(selection)
    config.hook.pytest_deselected(items=[item for item in items if outcome.check_id(item) not in wanted])
    items[:] = [item for item in items if outcome.check_id(item) in wanted]


@pytest.fixture
def check(request) -> Check:
    """Record comparisons for this contract check (see harness.contract.checks.Check)."""
    recorder = request.config.stash[_RECORDER]
    made = Check(outcome.check_id(request.node), outcome.family(request.node), recorder.store, recorder.recording)
    request.node.stash[_CHECK] = made
    return made


@pytest.fixture
def timing(request):
    """record(name, fn, *args): compile and steady-state time of jax.jit(fn)(*args), into the report."""
    from harness.contract import timing as _timing

    recorder = request.config.stash[_RECORDER]

    def record(name: str, fn, *args):
        result = _timing.measure(fn, *args)
        recorder.performance[name] = PerformanceRecord(**result)
        return result

    return record


def pytest_sessionstart(session):
    session.config.stash[_PROGRESS].collecting()
    try:
        session.config.stash[_RECORDER].write(Status.PARTIAL, force=True)
    except ReportProblem as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_collection_finish(session):
    session.config.stash[_PROGRESS].running(len(session.items))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """One more check done (setup, call and teardown), for `nox -s upgrade`'s progress display."""
    try:
        return (yield)
    finally:
        item.config.stash[_PROGRESS].check_finished()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Count Hypothesis examples by wrapping the documented, reassignable `inner_test`; replay an
    entry's falsifying example when asked (harness.contract.replay)."""
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    if handle is None:
        return (yield)
    example = item.config.stash[_RECORDER].replay.get(outcome.check_id(item))
    with replay.replaying(item.obj, example):
        return (yield from _counting(item, handle))


def _counting(item, handle):
    counter = [0]
    item.stash[_EXAMPLES] = counter
    inner = handle.inner_test

    @functools.wraps(inner)
    def counted(*args, **kwargs):
        counter[0] += 1
        return inner(*args, **kwargs)

    handle.inner_test = counted
    try:
        return (yield)
    finally:
        handle.inner_test = inner


# Outermost (tryfirst), so the report is read after Hypothesis's own wrapper has added its section (the
# replayed failing case): the plugin is an entry point now, and entry points load in no fixed order.
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    if call.when == "call" or (call.when == "setup" and rep.outcome != "passed"):
        if item.get_closest_marker("performance") and rep.passed:
            return rep  # timings go to the report's performance section, not to the contract checks
        examples = item.stash.get(_EXAMPLES, None)
        record = outcome.record(item, call, rep, item.stash.get(_CHECK, None), examples[0] if examples else None)
        if record.outcome == Outcome.ERROR and rep.outcome == "passed":
            rep.outcome, rep.longrepr = "failed", record.message  # not judged is not a pass
        item.config.stash[_RECORDER].add(record)
    return rep


def pytest_collectreport(report):
    """A module that fails to import (an API gone after a bump) is recorded as a failed check."""
    if report.failed and _ACTIVE and str(report.nodeid).endswith(".py"):
        recorder = _ACTIVE[-1]
        record = recorder.checks[report.nodeid] = outcome.collection_failure(report)
        # One of the project's own modules (it has no items to tell by): its family is the project's.
        if families.is_own(Path(str(recorder.config.rootpath)) / report.nodeid, recorder.own_contracts):
            recorder.own_families.add(record.family)


def pytest_warning_recorded(warning_message, when, nodeid, location):
    if _ACTIVE:
        _ACTIVE[-1].warnings.add(warning_message, nodeid)


def pytest_sessionfinish(session, exitstatus):
    session.config.stash[_PROGRESS].reporting()
    recorder = session.config.stash[_RECORDER]
    if recorder.recording:
        golden_recording.finish(session, recorder)  # may turn the run into a failure (values not written)
    recorder.exit_status = int(session.exitstatus)
    interrupted = int(exitstatus) in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
    recorder.write(Status.PARTIAL if interrupted else Status.COMPLETE, force=True)
