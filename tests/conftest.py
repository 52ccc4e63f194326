"""Fixtures for the harness's own tests: synthetic contract suites run through the real plugin, and the
harness installed as a team installs it (from a read-only copy of this checkout)."""

import hashlib
import json
import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import hypothesis  # noqa: F401
import numpy  # noqa: F401  imported once here: in-process pytester runs must not re-import C extensions
import pytest

import harness.contract.plugin  # noqa: F401
# The plugin imports its heavy side (NumPy, Hypothesis, the report) only in a harness run: import it here, once,
# or every in-process pytester run would import fresh copies (pytester forgets the modules a run imported).
import harness.contract.golden_recording  # noqa: F401
import harness.contract.outcome  # noqa: F401
import harness.contract.session  # noqa: F401
from harness import env_vars
from harness.contract import shared_compilation_cache as shared_compilation_cache_module
from harness.errors import HarnessError
from harness.model import report_io
from harness.model.enums import BuiltinMode
from harness.stack.api import sources
from harness.stack.environments import uv_program
from harness.verdict import compare
from support import checkout_files, team_run


pytest_plugins = ["pytester"]


def _no_index(project_root, entry, versions, offline=False):  # noqa: ANN001, ANN202 - sources.fetch's signature
    raise HarnessError("no package index in the harness's tests")


@pytest.fixture(autouse=True)
def no_package_index(monkeypatch):
    """An upgrade run in a test reads the API diff's libraries from wheels when their environments are not
    here: never fetched from a real index (tests that want libraries give made-up ones, fake_libraries)."""
    monkeypatch.setattr(sources, "fetch", _no_index)


@pytest.fixture(scope="session", autouse=True)
def shared_compilation_cache(tmp_path_factory):
    """One compilation cache for the session's team projects (support.team_run), shared by pytest-xdist's
    workers: `nox -s tests`' own (which its contract runs filled with the baseline stack's programs), else a new
    one each session (their temporary folders' parent)."""
    base = tmp_path_factory.getbasetemp()
    told = os.environ.get(shared_compilation_cache_module.VARIABLE)
    shared_by_workers = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = Path(told) if told else shared_by_workers / "shared-compilation-cache"
    team_run.SHARED_COMPILATION_CACHE[:] = [folder]
    yield folder
    team_run.SHARED_COMPILATION_CACHE.clear()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long-running tests first, longest first: `nox -s tests` hands whole files to its workers in
    collection order (pytest-xdist's `--dist loadfile`), so the long files start at once, spread over the
    workers, instead of one of them ending the run alone. Each marks its seconds as `--durations` measured
    them on 2 workers of a 2-core machine."""
    def seconds(item: pytest.Item) -> float:
        marker = item.get_closest_marker("long_running")
        return marker.args[0] if marker else 0.0

    items.sort(key=seconds, reverse=True)  # a stable sort: files and their tests stay in order

# A tiny contract suite that needs no JAX: every outcome the report must represent.
SYNTHETIC_SUITE = '''
import warnings
import numpy as np
import pytest
from hypothesis import given, strategies as st

pytestmark = pytest.mark.family("demo")


def test_golden_value(check):
    check.golden("value", np.array([0.1, 0.2], np.float32))


def test_golden_counter(check):
    check.golden_exact("counter", np.array([0, 1], np.int32))


def test_reference(check):
    check.reference("third", np.float32(1.0) / np.float32(3.0), 1.0 / 3.0)


@given(x=st.floats(-10, 10, width=32).filter(lambda v: v == 0 or abs(v) > 1e-15))  # no float32 underflow
def test_property(check, x):
    check.reference("square", np.float32(x) * np.float32(x), float(x) ** 2)


def test_error(check):
    check.error_contract("bad", lambda: np.ones(2) + np.ones(3))


def test_deprecation(check):
    warnings.warn("old API", DeprecationWarning)
    check.exact("two", 1 + 1, 2)
'''


@pytest.fixture
def suite(pytester):
    """Write the synthetic suite and a conftest loading the plugin; returns a runner."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_demo=SYNTHETIC_SUITE)
    pytester.mkdir("golden")

    def run(*args, report="report.json", subprocess=False):
        runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest_inprocess
        result = runner("-q", "-p", "no:randomly", f"--harness-report={report}", "--harness-golden-dir=golden", *args)
        path = pytester.path / report
        return result, (json.loads(path.read_text()) if path.exists() else None)

    return run


@pytest.fixture
def recorded_suite(suite, pytester):
    """The synthetic suite with its golden values recorded."""
    result, _ = suite("--harness-record-golden", report="recording.json")
    assert result.ret == 0, result.stdout.str()
    return suite


@pytest.fixture
def judge():
    """judge(base, *others, builtin=BuiltinMode.JUDGE): the verdict on report documents (JSON dicts, as a
    session writes them)."""
    def run(base: dict, *others: dict, builtin: BuiltinMode = BuiltinMode.JUDGE):
        return compare.judge(report_io.parse(base, "baseline"), [report_io.parse(o, "other") for o in others],
                             builtin=builtin)

    return run


ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ReadOnlyCopy:
    """A copy of this checkout with its write bits off, and a hash of everything in it when made. We run
    as root, whom missing write bits do not stop, so `assert_unchanged` compares the hashes again."""
    path: Path
    made: dict[str, str]  # relative path -> sha256 of the file ("dir" for a directory)

    def assert_unchanged(self) -> None:
        now = _snapshot(self.path)
        new = sorted(set(now) - set(self.made))
        removed = sorted(set(self.made) - set(now))
        changed = sorted(k for k in set(now) & set(self.made) if now[k] != self.made[k])
        assert not (new or removed or changed), f"the checkout copy was written into: new {new[:10]}, " \
                                                f"removed {removed[:10]}, changed {changed[:10]}"


def _snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*")}


@pytest.fixture(scope="session")
def checkout_copy(tmp_path_factory) -> ReadOnlyCopy:
    """This checkout's files in a directory of their own, read-only: what a team installs the tool from."""
    copy = checkout_files.copy_to(tmp_path_factory.mktemp("checkout") / "upgrade-harness")
    for path in [*copy.rglob("*"), copy]:
        path.chmod(stat.S_IMODE(path.stat().st_mode) & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return ReadOnlyCopy(copy, _snapshot(copy))


@pytest.fixture(scope="session")
def uv_bin() -> str:
    """The uv binary: the runner's (`nox -s tests` passes it in HARNESS_TEST_UV), else the harness's own finding."""
    found = os.environ.get(env_vars.TEST_UV) or uv_program.uv()
    if not found:
        pytest.skip("no uv binary: run through `nox -s tests`, which hands the runner's uv to the tests")
    return found


@pytest.fixture(scope="session")
def tool(checkout_copy, uv_bin, tmp_path_factory) -> Path:
    """The `upgrade-harness` command, installed (not editable) from the read-only checkout copy into a tool
    environment of its own. Tests using it end with `checkout_copy.assert_unchanged()`."""
    venv = tmp_path_factory.mktemp("tool") / "venv"
    subprocess.run([uv_bin, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    subprocess.run([uv_bin, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                    "-c", str(checkout_copy.path / "locks" / "runner.txt"), str(checkout_copy.path)], check=True)
    return venv / "bin" / "upgrade-harness"


def pytest_terminal_summary(terminalreporter) -> None:
    """Lines a test recorded for the run's summary (record_property("sequence_summary", ...)): printed with
    or without -s, from xdist's workers too (their reports carry the properties)."""
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, value in getattr(report, "user_properties", ()):
                if name == "sequence_summary" and getattr(report, "when", "call") == "call":
                    terminalreporter.write_line(value)
