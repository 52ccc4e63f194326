"""The pytest plugin: options, the `check` and `timing` fixtures, and the hooks that feed the report.

Registered as a pytest11 entry point, so it is there wherever the package is installed; the entries
also load it with `-p harness.contract.plugin`. A team's own pytest runs are left alone: importing this
module imports no NumPy, JAX or Hypothesis and registers no Hypothesis profile. The contract machinery
comes in only in a harness run (harness.contract.options.harness_run: a report, a recording or a
chosen harness profile) or when a test first asks for the `check` or `timing` fixture.

Options (.options; each also a variable the nox sessions set, or a field of the job HARNESS_JOB names: .job):

  --harness-report PATH      HARNESS_REPORT      where to write the report (no report when unset)
  --harness-entry NAME       HARNESS_ENTRY       the matrix entry name recorded in the report
  --harness-golden-dir DIR   HARNESS_GOLDEN_DIR  golden store (default: <rootdir>/golden)
  --harness-builtin-golden-dir DIR  HARNESS_BUILTIN_GOLDEN_DIR  where a family the golden store lacks is read
                                                 from: in a team's project, the tool's own built-in values
  --harness-only FILE        the job's `only`    run only the check ids listed in FILE (one per line)
  --harness-builtin-tests FILE  the job's `builtin_tests`  of the built-in families FILE names, run only the
                                                 tests (family/test) and checks (family/test[params]) it lists
  --harness-own-contracts DIRS                   the project's contract directories (os.pathsep-separated):
                                                 their families are listed as the project's own
  --harness-record-golden                        record golden values instead of comparing
  --harness-accept-changes                       with --harness-record-golden: allow changed values, departures
  --harness-profile NAME     HARNESS_PROFILE     the harness's Hypothesis profile: dev, ci or nightly
                                                 (harness.contract.hypothesis_profiles); Hypothesis's own
                                                 --hypothesis-profile is refused in a harness run

The work is done elsewhere: .session (the report), .progress (the job's progress file), .outcome (one check's
record), .warning_log, .golden_recording, .checks, .mismatches, .platform_needs (what a platform cannot run).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness import devices
from harness.contract import (
    collection, collector, families, job, options, platform_needs, project_devices, shared_compilation_cache,
    stack_lacks, workers,
)
from harness.contract.progress import ProgressWriter

if TYPE_CHECKING:
    from harness.contract.checks import Check
    from harness.contract.session import Recorder

_RECORDER = pytest.StashKey["Recorder"]()
_CHECK = pytest.StashKey["Check"]()
_EXAMPLES = pytest.StashKey[list]()
_PROGRESS = pytest.StashKey[ProgressWriter]()
_GC_THRESHOLDS = pytest.StashKey[tuple]()  # the collector thresholds a harness run replaced
# pytest_warning_recorded and pytest_collectreport get no config: the running recorder is found here.
_ACTIVE: list[Recorder] = []


def pytest_addoption(parser):
    options.add(parser)


def pytest_configure(config):
    # Under pytest-xdist the controller counts the checks its workers report (.workers): a worker writes none.
    config.stash[_PROGRESS] = ProgressWriter(None) if workers.is_worker(config) else ProgressWriter.of(config)
    told = job.of_entry(config)  # an upgrade's entry's: its phases written as data where its job says
    directory = told.phases_dir if told else None
    if config.getoption("--harness-phases") or directory:
        from harness.contract.phases import register

        register(config, lambda: _running(config), directory)
    config.addinivalue_line("markers", "family(name): the contract family of the checks in a module")
    config.addinivalue_line("markers", "performance: a timing, reported under performance, not a contract")
    config.addinivalue_line("markers", platform_needs.DESCRIPTION)
    project_devices.given(config)  # XLA_FLAGS before the project's modules are imported
    if options.harness_run(config):
        if config.getoption("--harness-record-golden") and workers.is_controller(config):
            raise pytest.UsageError("a recording runs in one process (each would write the golden files of the "
                                    "modules it ran): give it without pytest-xdist's -n")
        # A module that no longer imports after a bump is one failed check, not the end of the run.
        config.option.continue_on_collection_errors = True
        _recorder(config)
        config.stash[_GC_THRESHOLDS] = collector.relax(config)
        if not workers.is_worker(config):  # one process seeds and publishes for a spread run's workers
            try:
                shared_compilation_cache.before_run()
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None


def _recorder(config) -> Recorder:
    """The run's recorder, made when first needed: at the start of a harness run, else when a test first
    asks for the `check` or `timing` fixture (this is where NumPy and Hypothesis are imported)."""
    if _RECORDER not in config.stash:
        from harness.contract.session import Recorder

        config.stash[_RECORDER] = recorder = Recorder(config)
        # Made by a fixture: the contracts are collected already (JAX's platform may be asked: Recorder._environment).
        recorder.contracts_collected = not options.harness_run(config)
        _ACTIVE.append(recorder)
    return config.stash[_RECORDER]


def _running(config) -> Recorder | None:
    """The recorder if there is one yet: a team's run that uses neither fixture never makes one."""
    return config.stash.get(_RECORDER, None)


def pytest_unconfigure(config):
    if options.harness_run(config) and not workers.is_worker(config):
        try:
            shared_compilation_cache.after_run()
        except ValueError:  # said at the run's start
            pass
    if _RECORDER in config.stash and config.stash[_RECORDER] in _ACTIVE:
        _ACTIVE.remove(config.stash[_RECORDER])
    if _GC_THRESHOLDS in config.stash:
        collector.restore(config.stash[_GC_THRESHOLDS])


_MULTI_DEVICE_MODULE = Path(__file__).resolve().parents[1] / "builtin" / devices.FILE


def pytest_ignore_collect(collection_path, config):
    """The multi-device family runs only in its own process (--harness-multi-device, with its devices): the
    entry's main run, and any other, leave its module out, so their single-device results stay as they are."""
    if collection_path.name == devices.FILE and not config.getoption("--harness-multi-device"):
        if collection_path.resolve() == _MULTI_DEVICE_MODULE:
            return True
    return None


def pytest_collection_modifyitems(config, items):
    """Tell the project's own families from the built-in ones; keep what the run selects (harness.contract.
    collection: a team's selection of built-in tests, an attribution's or a replay's checks)."""
    recorder = _running(config)
    if recorder is not None:
        # Every contract module imported, JAX's backend not started: its XLA_FLAGS are final now (the project's
        # training module may have set its device count: harness.contract.project_devices).
        project_devices.keep_given(config)
        recorder.collected(items)
    collection.keep_selected(config, items, recorder)
    platform_needs.refuse(items)  # after the selection: JAX's backend is asked only when a kept check needs it
    if recorder is not None:
        project_devices.refuse_builtin(items)  # never judged on a device count their values were not recorded on


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A built-in check refused for its devices errors before its fixtures run (harness.contract.project_devices)."""
    project_devices.refuse_at_setup(item)


@pytest.fixture
def check(request) -> Check:
    """Record comparisons for this contract check (see harness.contract.checks.Check)."""
    from harness.contract.checks import Check

    recorder = _recorder(request.config)
    kept = families.of_item(request.node, recorder.own_contracts)
    made = request.node.stash[_CHECK] = Check(families.check_id(request.node), kept.name, recorder.store,
                                              recorder.recording, own=kept.own, accepting=recorder.accepting)
    return made


@pytest.fixture
def timing(request):
    """record(name, fn, *args): compile and steady-state time of jax.jit(fn)(*args), into the report."""
    from harness.contract import timing as _timing
    from harness.model.report import PerformanceRecord

    recorder = _recorder(request.config)

    def record(name: str, fn, *args):
        result = _timing.measure(fn, *args)
        recorder.performance[name] = PerformanceRecord(**result)
        return result

    return record


def pytest_sessionstart(session):
    session.config.stash[_PROGRESS].collecting()
    recorder = _running(session.config)
    if recorder is None:
        return
    from harness.model.enums import Status
    from harness.model.report_io import ReportProblem

    try:
        recorder.write(Status.PARTIAL, force=True)
    except ReportProblem as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_collection_finish(session):
    session.config.stash[_PROGRESS].running(len(session.items))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """Under pytest-xdist, the controller's count: every worker collects the whole run."""
    node.config.stash[_PROGRESS].running(len(ids))


def pytest_runtest_logreport(report):
    """Under pytest-xdist, the controller counts each check its workers finished (in one process the protocol's
    wrapper does)."""
    if report.when == "teardown" and _ACTIVE and workers.is_controller(_ACTIVE[-1].config):
        _ACTIVE[-1].config.stash[_PROGRESS].check_finished()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """A worker ended: its checks, counts and environment into the controller's report (.workers)."""
    recorder = _running(node.config)
    part = workers.received(node)
    if recorder is not None and part is not None:
        recorder.merge(part)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each check named as it starts (a process may die inside it), counted once done, in the progress file."""
    item.config.stash[_PROGRESS].check_started(families.check_id(item))
    try:
        return (yield)
    finally:
        item.config.stash[_PROGRESS].check_finished()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Count Hypothesis examples by wrapping the documented, reassignable `inner_test`; replay an
    entry's falsifying example when asked (harness.contract.replay). In a plain test, keep the golden
    values that differ and fail with all of them at the end (harness.contract.mismatches)."""
    recorder = _running(item.config)
    if recorder is None:  # a team's own test in a run that never used the harness: nothing to do
        return (yield)
    check = item.stash.get(_CHECK, None)
    builtin = check is not None and not check.family.own  # the check knows whose family it is
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    try:
        if handle is None:
            result = yield from _golden_at_the_end(item)
        else:
            from harness.contract import replay

            example = recorder.replay.get(families.check_id(item))
            with replay.replaying(item.obj, example):
                return (yield from _counting(item, handle))
    except Exception as exc:  # a built-in check calling what this stack lacks: not applicable here (what it
        if builtin:  # recorded before stays: the baseline computed it); one raising inside a library: its departure?
            stack_lacks.skip_if_lacking(exc, check)
            if handle is None:  # a property's raise is never a fact to record
                from harness.contract import raised

                if raised.departs(check, exc):
                    return None  # as the baseline's recorded departure: the report notes it
        raise
    if builtin:
        from harness.contract import raised

        raised.holds_again(check)
    return result


def _golden_at_the_end(item):
    __tracebackhide__ = True
    check = item.stash.get(_CHECK, None)
    if check is None:
        return (yield)
    check.defer_golden = True
    try:
        result = yield
    except (KeyboardInterrupt, SystemExit, pytest.exit.Exception):
        raise
    except BaseException as exc:  # an error, a failed contract, even a skip: the differing values come first
        check.raise_mismatches(after=exc)
        raise
    finally:
        check.defer_golden = False
    check.raise_mismatches()
    return result


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
        recorder = _running(item.config)
        check = item.stash.get(_CHECK, None)
        if recorder is None or (not recorder.harness_run and check is None):
            return rep  # a team's own test, in a run without a report: nothing to record
        from harness.contract import outcome
        from harness.model.enums import Outcome

        if check is not None and check.mismatches and call.when == "call" and rep.failed:
            _show_mismatches(item, call, rep, check)
        examples = item.stash.get(_EXAMPLES, None)
        record = outcome.record(item, call, rep, check, examples[0] if examples else None, recorder.own_contracts)
        if record.outcome == Outcome.ERROR and rep.outcome == "passed":
            rep.outcome, rep.longrepr = "failed", record.message  # not judged is not a pass
        recorder.add(record)
    return rep


def _show_mismatches(item, call, rep, check) -> None:
    """The failure's text: each differing golden value at its contract line, then what ended the test."""
    from harness.contract import mismatches
    from harness.contract.checks import ContractFailure

    if call.excinfo is None or not isinstance(call.excinfo.value, ContractFailure):
        return  # not the mismatches' failure (pytest's own, say): pytest's text stands
    after = call.excinfo.value.__cause__
    rendered = None if after is None else str(item.repr_failure(pytest.ExceptionInfo.from_exception(after)))
    note = mismatches.host_note(check.store, check.family, any(m.in_ulps for m in check.mismatches))
    rep.longrepr = mismatches.display(check.mismatches, rendered, note)


def pytest_collectreport(report):
    """A module that fails to import (an API gone after a bump): a failed check; one its platform refuses: skipped."""
    if (report.failed or platform_needs.module_refused(report)) and _ACTIVE and str(report.nodeid).endswith(".py"):
        from harness.contract import outcome
        recorder = _ACTIVE[-1]
        made = outcome.collection_failure if report.failed else outcome.collection_refused
        record = recorder.checks[report.nodeid] = made(report, recorder.own_contracts, recorder.root)
        if record.own:
            recorder.own_families.add(record.family)


def pytest_warning_recorded(warning_message, when, nodeid, location):
    if _ACTIVE:
        _ACTIVE[-1].warnings.add(warning_message, nodeid)


def pytest_sessionfinish(session, exitstatus):
    session.config.stash[_PROGRESS].reporting()
    recorder = _running(session.config)
    if recorder is None:
        return
    from harness.model.enums import Status

    if workers.is_worker(session.config):  # its part goes to the controller, which writes the report
        workers.send(session.config, recorder.part())
        return
    if recorder.recording:
        from harness.contract import golden_recording

        golden_recording.finish(session, recorder)  # may turn the run into a failure (values not written)
    recorder.exit_status = int(session.exitstatus)
    interrupted = int(exitstatus) in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
    recorder.write(Status.PARTIAL if interrupted else recorder.ended(), force=True)
