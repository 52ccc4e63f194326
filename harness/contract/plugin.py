"""The pytest plugin: gives contract tests the `check` fixture and writes the session's JSON report.

Loaded by tests/contracts/conftest.py. Options (each also an environment variable, so the nox
sessions only have to set the environment):

  --harness-report PATH      HARNESS_REPORT      where to write the report (no report when unset)
  --harness-entry NAME       HARNESS_ENTRY       the matrix entry name recorded in the report
  --harness-golden-dir DIR   HARNESS_GOLDEN_DIR  golden store (default: <rootdir>/golden)
  --harness-only FILE        HARNESS_ONLY        run only the check ids listed in FILE (one per line)
  --harness-record-golden                        record golden values instead of comparing
  --harness-accept-changes                       with --harness-record-golden: allow changed values

The report is written when the run starts (marked partial), after checks at most every three
seconds, and at the end (complete). An interrupted or crashed run therefore leaves a partial report.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from pathlib import Path

import pytest

from harness import __version__
from harness.contract import environment, hypothesis_profiles, tolerances
from harness.model import report
from harness.contract.checks import Check, ContractFailure
from harness.contract.golden import GoldenProblem, GoldenStore

hypothesis_profiles.register()

_KEY = pytest.StashKey["HarnessSession"]()
_PROGRESS_INTERVAL_S = 3.0  # how often a running suite refreshes its partial report


def pytest_addoption(parser):
    group = parser.getgroup("upgrade-harness")
    group.addoption("--harness-report", default=os.environ.get("HARNESS_REPORT"), help="report path")
    group.addoption("--harness-entry", default=os.environ.get("HARNESS_ENTRY", "local"), help="matrix entry name")
    group.addoption("--harness-golden-dir", default=os.environ.get("HARNESS_GOLDEN_DIR"), help="golden directory")
    group.addoption("--harness-only", default=os.environ.get("HARNESS_ONLY"),
                    help="file of check ids (family/test[params]) to run; the rest are deselected")
    group.addoption("--harness-record-golden", action="store_true", help="record golden values")
    group.addoption("--harness-accept-changes", action="store_true", help="allow changing recorded golden values")


def pytest_configure(config):
    # A module that no longer imports after a bump is one failed check, not the end of the run.
    config.option.continue_on_collection_errors = True
    session = HarnessSession(config)
    config.stash[_KEY] = session
    _ACTIVE.append(session)
    config.addinivalue_line("markers", "family(name): the contract family of the checks in a module")
    config.addinivalue_line("markers", "performance: a timing, reported under performance, not a contract")


def pytest_unconfigure(config):
    if _KEY in config.stash and config.stash[_KEY] in _ACTIVE:
        _ACTIVE.remove(config.stash[_KEY])


# pytest_warning_recorded has no config argument: the running session is found here.
_ACTIVE: list["HarnessSession"] = []


def _session(config) -> "HarnessSession":
    return config.stash[_KEY]


class HarnessSession:
    """Everything one pytest run of the contract suite knows about its checks."""

    def __init__(self, config):
        self.config = config
        self.started = time.perf_counter()
        self.started_at = report.now()
        self.report_path = config.getoption("--harness-report")
        root = Path(str(config.rootpath))
        self.store = GoldenStore(config.getoption("--harness-golden-dir") or root / "golden")
        self.recording = config.getoption("--harness-record-golden")
        self.checks: dict[str, dict] = {}
        self.performance: dict[str, dict] = {}
        self.warnings: dict[tuple, dict] = {}
        self.examples_run = 0
        self.last_write = 0.0
        self.exit_status = None
        self.hypothesis = hypothesis_profiles.activate(config)
        self.environment = None
        self.problem = None
        self.selection = _read_selection(config.getoption("--harness-only"))

    # -- report ------------------------------------------------------------------------------
    def document(self, status: str) -> dict:
        if self.environment is None:
            self.environment = {
                "versions": environment.versions(),
                "packages": environment.packages(),
                "machine": environment.machine(),
                "jax": environment.jax_platform(),
            }
        checks = list(self.checks.values())
        counts = {k: sum(c["outcome"] == k for c in checks) for k in ("passed", "failed", "error", "skipped")}
        by_family: dict[str, dict] = {}
        for c in checks:
            fam = by_family.setdefault(c["family"], {"passed": 0, "failed": 0, "error": 0, "skipped": 0})
            fam[c["outcome"]] += 1
        return {
            "schema_version": report.SCHEMA_VERSION,
            "harness_version": __version__,
            "entry": {
                "name": self.config.getoption("--harness-entry"),
                "python": os.environ.get("HARNESS_PYTHON", environment.versions()["python"]),
                "requested": json.loads(os.environ.get("HARNESS_REQUESTED", "{}")),
                "locked": os.environ.get("HARNESS_LOCKED", "0") == "1",
            },
            "status": status,
            "exit_status": self.exit_status,
            "started_at": self.started_at,
            "finished_at": report.now() if status == "complete" else None,
            "environment": self.environment,
            "hypothesis": dict(self.hypothesis, examples_run=self.examples_run),
            "tolerances": tolerances.table(),
            "checks": checks,
            "warnings": sorted(self.warnings.values(), key=lambda w: (w["origin"], w["message"])),
            "timings": {"total_s": round(time.perf_counter() - self.started, 3)},
            "performance": dict(sorted(self.performance.items())),
            "summary": dict(total=len(checks), **counts, by_family=by_family),
            "problem": self.problem,
            "selection": self.selection,
        }

    def write(self, status: str, force: bool = False) -> None:
        """Write the report; progress writes (at most every few seconds) skip schema validation,
        which costs ~0.3 s on a full report, and the final write validates."""
        if not self.report_path:
            return
        if not force and time.perf_counter() - self.last_write < _PROGRESS_INTERVAL_S:
            return
        doc = self.document(status)
        if force:
            report.validate(doc, "the report being written")
        report.write(self.report_path, doc)
        self.last_write = time.perf_counter()


def _read_selection(path: str | None) -> list[str] | None:
    if not path:
        return None
    try:
        return sorted({line.strip() for line in Path(path).read_text().splitlines() if line.strip()})
    except OSError as exc:
        raise pytest.UsageError(f"--harness-only: cannot read {path} ({exc.strerror or exc})") from None


def pytest_collection_modifyitems(config, items):
    """With --harness-only, run just the listed checks (attribution runs re-check what changed)."""
    selection = _session(config).selection
    if selection is None:
        return
    wanted = set(selection)
    keep = [item for item in items if _check_id(item) in wanted]
    config.hook.pytest_deselected(items=[item for item in items if _check_id(item) not in wanted])
    items[:] = keep


# -- fixtures -----------------------------------------------------------------------------------
def _family(item) -> str:
    marker = item.get_closest_marker("family")
    if marker:
        return marker.args[0]
    return Path(str(item.path)).stem.removeprefix("test_")


def _check_id(item) -> str:
    return f"{_family(item)}/{item.name}"


@pytest.fixture
def check(request) -> Check:
    """Record comparisons for this contract check (see harness.checks.Check)."""
    session = _session(request.config)
    recorder = Check(_check_id(request.node), _family(request.node), session.store, session.recording)
    request.node.stash[_CHECK] = recorder
    return recorder


@pytest.fixture
def timing(request):
    """record(name, fn, *args): compile and steady-state time of jax.jit(fn)(*args), into the report."""
    from harness.contract import timing as _timing

    session = _session(request.config)

    def record(name: str, fn, *args) -> dict:
        result = _timing.measure(fn, *args)
        session.performance[name] = result
        return result

    return record


_CHECK = pytest.StashKey[Check]()
_EXAMPLES = pytest.StashKey[list]()


# -- hooks --------------------------------------------------------------------------------------
def pytest_sessionstart(session):
    harness = _session(session.config)
    if harness.report_path:
        try:
            harness.write("partial", force=True)
        except report.ReportProblem as exc:
            raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Count Hypothesis examples by wrapping the documented, reassignable `inner_test`."""
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    if handle is None:
        return (yield)
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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    if call.when == "call" or (call.when == "setup" and rep.outcome != "passed"):
        _record(item, call, rep)
    return rep


def _record(item, call, rep) -> None:
    harness = _session(item.config)
    if item.get_closest_marker("performance") and rep.passed:
        return  # timings go to report["performance"], not to the contract checks
    recorder: Check | None = item.stash.get(_CHECK, None)
    examples = item.stash.get(_EXAMPLES, None)
    outcome, message = rep.outcome, ""
    exception = type(call.excinfo.value).__name__ if call.excinfo is not None and not rep.skipped else None
    if call.excinfo is not None:
        exc = call.excinfo.value
        golden_problem, contract_failure = _find(exc, GoldenProblem), _find(exc, ContractFailure)
        if golden_problem is not None:
            outcome, message = "error", str(golden_problem)
        elif contract_failure is not None:
            outcome, message = "failed", str(contract_failure)
        elif rep.skipped:
            outcome, message = "skipped", _skip_reason(rep)
        elif call.when == "setup":
            outcome, message = "error", f"setup failed: {type(exc).__name__}: {exc}"
        else:
            outcome, message = "failed", f"{type(exc).__name__}: {str(exc).strip()[:2000]}"
    if outcome == "passed" and recorder is not None and not recorder.comparisons and not recorder.recording:
        outcome, message = "error", "the check compared nothing: a check that cannot fail is a defect"
    summary = recorder.summary() if recorder else {"comparisons": [], "max_abs_err": None, "max_rel_err": None,
                                                   "errors_observed": {}, "series": {}}
    is_property = examples is not None
    if is_property:
        harness.examples_run += examples[0]
    kinds = recorder.kinds if recorder else []
    kind = "property" if is_property else _main_kind(kinds)
    harness.checks[item.nodeid] = {
        "id": _check_id(item),
        "nodeid": item.nodeid,
        "family": _family(item),
        "kind": kind,
        "outcome": outcome if outcome in ("passed", "failed", "error", "skipped") else "failed",
        "exception": exception,
        "duration_s": round(rep.duration, 4),
        "message": message,
        "falsifying_example": _falsifying(rep) if outcome == "failed" and is_property else None,
        "examples": examples[0] if is_property else None,
        "max_abs_err": summary["max_abs_err"],
        "max_rel_err": summary["max_rel_err"],
        "comparisons": summary["comparisons"],
        "errors_observed": summary["errors_observed"],
        "series": summary["series"],
    }
    if outcome == "error" and rep.outcome == "passed":
        rep.outcome = "failed"
        rep.longrepr = message
    harness.write("partial")


def pytest_collectreport(report):
    """A module that fails to import (an API gone after a bump) is recorded as a failed check."""
    if not report.failed or not _ACTIVE or not str(report.nodeid).endswith(".py"):
        return
    harness = _ACTIVE[-1]
    family = Path(report.nodeid).stem.removeprefix("test_")
    text = str(report.longrepr)
    lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
    harness.checks[report.nodeid] = {
        "id": f"{family}/collection", "nodeid": report.nodeid, "family": family, "kind": "collection",
        "outcome": "failed", "duration_s": 0.0, "exception": _exception_name(text),
        "message": f"{report.nodeid} could not be collected: " + (" ".join(ln[2:].strip() for ln in lines[-3:]) or text[-500:]),
        "falsifying_example": None, "examples": None, "max_abs_err": None, "max_rel_err": None,
        "comparisons": [], "errors_observed": {}, "series": {},
    }


def _exception_name(longrepr: str) -> str | None:
    """The exception type in a collection error's text ("E   ModuleNotFoundError: ...")."""
    found = re.findall(r"^E\s+([A-Za-z_][\w.]*(?:Error|Exception))\b", longrepr, flags=re.M)
    return found[-1].rsplit(".", 1)[-1] if found else None


def _main_kind(kinds: list[str]) -> str:
    for kind in ("error-contract", "golden", "reference", "exact"):
        if kind in kinds:
            return kind
    return "exact" if "bound" in kinds else "golden"


def _find(exc, cls):
    """exc itself, or the first exception of type cls in its group members, cause or context."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, cls):
            return exc
        seen.add(id(exc))
        inner = getattr(exc, "exceptions", None)  # ExceptionGroup from Hypothesis
        if inner:
            for sub in inner:
                found = _find(sub, cls)
                if found is not None:
                    return found
        exc = exc.__cause__ or exc.__context__
    return None


def _skip_reason(rep) -> str:
    if isinstance(rep.longrepr, tuple) and len(rep.longrepr) == 3:
        return str(rep.longrepr[2])
    return str(rep.longrepr)


def _falsifying(rep) -> str | None:
    text = rep.longreprtext or ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "Falsifying example" in line or "Failing test case" in line:
            block = [line.strip()]
            for follow in lines[i + 1:]:
                if not follow.strip() or follow.startswith(("E ", "-", "+")) and "Falsifying" in follow:
                    break
                block.append(follow.rstrip())
                if follow.strip() == ")":
                    break
            return "\n".join(block)[:4000]
    return None


def pytest_warning_recorded(warning_message, when, nodeid, location):
    """Deprecations from jax/optax/flax are upgrade signals: keep each distinct one with its checks."""
    if not _ACTIVE:
        return
    harness = _ACTIVE[-1]
    filename = str(getattr(warning_message, "filename", ""))
    origin = _origin(filename)
    key = (warning_message.category.__name__, str(warning_message.message)[:500], origin)
    row = harness.warnings.setdefault(key, {
        "category": key[0], "message": key[1], "origin": origin, "filename": filename,
        "lineno": int(getattr(warning_message, "lineno", 0) or 0), "count": 0, "checks": [],
    })
    row["count"] += 1
    if nodeid and nodeid not in row["checks"] and len(row["checks"]) < 20:
        row["checks"].append(nodeid)


def _origin(filename: str) -> str:
    parts = Path(filename).parts
    for package in ("optax", "flax", "jax", "jaxlib", "orbax", "numpy", "hypothesis"):
        if package in parts:
            return package
    return "other"


def pytest_sessionfinish(session, exitstatus):
    harness = _session(session.config)
    if harness.recording:
        _finish_recording(session, harness)  # may turn the run into a failure (values not written)
    harness.exit_status = int(session.exitstatus)
    interrupted = int(exitstatus) in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
    harness.write("partial" if interrupted else "complete", force=True)


def _finish_recording(session, harness: HarnessSession) -> None:
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    say = terminal.write_line if terminal else print
    failed = [c["id"] for c in harness.checks.values() if c["outcome"] != "passed"]
    if failed:
        say(f"golden: NOT written: {len(failed)} checks did not pass while recording: {', '.join(failed[:10])}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    changes = harness.store.changes()
    changed = [c for c in changes if c[2] == "changed"]
    for family, key, what, old, new in changes:
        say(f"golden: {what:7s} {family}/{key}" + (f": {_short(old)} -> {_short(new)}" if old else ""))
    if changed and not session.config.getoption("--harness-accept-changes"):
        say(f"golden: NOT written: {len(changed)} recorded values would change. Review them above; "
            "to accept, run `nox -s golden -- --accept-changes`.")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    versions = environment.versions()
    provenance = {
        "entry": session.config.getoption("--harness-entry"),
        "versions": {k: versions[k] for k in ("python", "jax", "jaxlib", "optax", "flax", "numpy")},
        "backend": environment.jax_platform().get("backend"),
    }
    written = harness.store.write(provenance)
    say(f"golden: {len(changes)} values added or changed; wrote {', '.join(map(str, written)) or 'nothing'}")


def _short(entry) -> str:
    text = json.dumps(entry.get("values", entry) if isinstance(entry, dict) else entry)
    return text if len(text) < 120 else text[:117] + "..."
