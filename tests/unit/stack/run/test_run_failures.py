"""Fault injection: a plan that cannot run is refused in seconds with last run's reports untouched, and a
run that could not judge says why (a killed entry: which signal, after how many checks)."""

import json
import re
import signal
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.model import report_io
from harness.model.enums import Status
from harness.model.progress import Phase, Progress
from harness.stack.workspace import Workspace
from harness.stack.environments import host_libraries
from harness.stack.environments import uv_program
from harness.stack.pins import current, locks
from harness.stack.entry_side import ending
from harness.stack.run import entry_runs

from support import upgrade_reports

ROOT = Path(__file__).resolve().parents[4]


def _metadata_without(monkeypatch, missing: set[str], requires: list[str] | None = None) -> None:
    """importlib.metadata as an interpreter without the distributions `missing` sees it (nothing uninstalled);
    `requires`: the installed tool's declared dependencies."""
    real = host_libraries.metadata.version

    def version(name: str) -> str:
        if name.lower() in missing:
            raise host_libraries.metadata.PackageNotFoundError(name)
        try:
            return real(name)
        except host_libraries.metadata.PackageNotFoundError:
            return "1.0"  # what this test environment lacks beside the point (uv's wheel)

    monkeypatch.setattr(host_libraries.metadata, "version", version)
    if requires is not None:
        monkeypatch.setattr(host_libraries.metadata, "requires",
                            lambda name: requires if name == host_libraries.DISTRIBUTION else pytest.fail(name))


def test_the_libraries_checked_are_the_runner_locks(monkeypatch):
    """Every library locks/runner.txt pins, none named by hand: with none installed, all are said."""
    pinned = re.findall(r"^([A-Za-z0-9._-]+)==", (ROOT / "locks" / "runner.txt").read_text(), re.MULTILINE)
    _metadata_without(monkeypatch, {name.lower() for name in pinned})
    monkeypatch.setattr(uv_program, "uv", lambda: None)  # nor a uv on PATH
    assert len(pinned) >= 5
    problem = host_libraries.problem()
    assert problem is not None and f"{', '.join(sorted(pinned))} are not installed" in problem


def test_an_installed_tool_checks_its_declared_dependencies(monkeypatch, tmp_path):
    """A team's tool has no locks/runner.txt: the package's own dependencies (its extras not) are checked,
    and the fix installs just those into the tool's interpreter."""
    monkeypatch.setattr(host_libraries, "RUNNER_LOCK", tmp_path / "no-runner.txt")
    _metadata_without(monkeypatch, {"griffe", "numpy"}, ["nox>=2024.10.9", "griffe>=2.4",
                                                        'numpy; extra == "contract"'])
    problem = host_libraries.problem()
    assert problem is not None and "griffe is not installed" in problem and "numpy" not in problem
    assert "-m pip install 'griffe>=2.4'" in problem
    _metadata_without(monkeypatch, set(), ["nox>=2024.10.9", "griffe>=2.4"])
    assert host_libraries.problem() is None


def test_uv_on_path_serves_as_the_runners_own(monkeypatch):
    """The harness runs uv as a program, the runner's own or one on PATH (uv_program.uv): either will do."""
    _metadata_without(monkeypatch, {"uv"})
    monkeypatch.setattr(uv_program, "uv", lambda: "/usr/local/bin/uv")
    assert host_libraries.problem() is None
    monkeypatch.setattr(uv_program, "uv", lambda: None)
    assert "uv is not installed" in host_libraries.problem()


def test_a_lock_reads_pins_markers_and_notes_and_names_a_bad_line():
    text = "# header\nnumpy==2.0.0\n    # via jax\ncolorama==0.4.6 ; sys_platform == 'win32'\nml_dtypes==0.6.0\n"
    assert locks.parse_lock(text) == {"numpy": "2.0.0", "colorama": "0.4.6", "ml-dtypes": "0.6.0"}
    with pytest.raises(HarnessError, match=r"^x.txt, line 3: `optax 0.2.6` is not a requirement"):
        locks.parse_lock(text.replace("    # via jax", "optax 0.2.6"), "x.txt")


@pytest.mark.parametrize("code, state, said", [
    (-signal.SIGKILL, Progress(Phase.RUNNING, 212, 345),
     "was killed by SIGKILL after 212 of 345 checks (often out of memory)"),
    (-signal.SIGSEGV, Progress(Phase.COLLECTING), "crashed with SIGSEGV while collecting its checks"),
    (-signal.SIGTERM, Progress(Phase.RUNNING, 3, 10),
     "was killed by SIGTERM after 3 of 10 checks (a stop request: a job's time limit or a shutdown)"),
    (2, Progress(Phase.RUNNING, 40, 345), "was interrupted after 40 of 345 checks"),
    (-signal.SIGKILL, None, "was killed by SIGKILL before its suite started (often out of memory)"),
    (-signal.SIGABRT, Progress(Phase.RUNNING, 47, 771, "clipping/test_complex128_with_x64"),
     "crashed with SIGABRT in clipping/test_complex128_with_x64, after 47 of 771 checks"),
])
def test_why_a_suite_ended_early_is_worded_to_follow_the_entry_name(code, state, said):
    assert ending.explain(code, state) == said


def test_a_killed_nox_session_is_explained_by_the_host(tmp_path, monkeypatch):
    """nox itself killed (its entry session could not say why): the host reads nox's return code and the
    progress file and sets the partial report's problem."""
    from harness.model import progress

    partial = upgrade_reports.load("candidate")
    partial.update(status=Status.PARTIAL.value, finished_at=None, problem=None)
    (tmp_path / "candidate.json").write_text(json.dumps(partial))
    progress.write(tmp_path / "progress.json", Progress(Phase.RUNNING, 212, 345))
    entry = current.entries(Workspace.from_environment())["candidate"]
    entry_runs.explain_ending(tmp_path, entry, -signal.SIGKILL, tmp_path / "progress.json", None)
    said = report_io.load(tmp_path / "candidate.json")
    assert said.problem == "was killed by SIGKILL after 212 of 345 checks (often out of memory)"
    assert said.status == Status.PARTIAL and len(said.checks) == len(partial["checks"])
    entry_runs.explain_ending(tmp_path, entry, 1, tmp_path / "progress.json", None)  # a reason given is kept
    assert report_io.load(tmp_path / "candidate.json").problem == said.problem
