"""An entry's environment is synced with its lock and the harness in one `uv pip sync`: an environment
that already matches both is left untouched (no rebuild of the harness each run)."""

from pathlib import Path

import pytest

from harness.stack.entry_side import entry


def test_the_requirement_names_the_harness_by_absolute_uri(tmp_path):
    source = tmp_path / "a checkout"
    editable = entry.harness_requirement(["-e", str(source)], str(tmp_path)).read_text().splitlines()[-1]
    assert editable == f"-e {source.as_uri()}" and "%20" in editable
    wheel = tmp_path / "w" / "upgrade_harness-0.1.0-py3-none-any.whl"
    assert entry.harness_requirement([str(wheel)], str(tmp_path)).read_text().splitlines()[-1] == wheel.as_uri()


class _Session:
    """What run_entry uses of a nox session: the environment's location, chdir and run (recorded)."""

    name = "baseline"

    def __init__(self, venv: Path):
        self.virtualenv = type("Venv", (), {"location": str(venv)})()
        self.commands: list[tuple] = []

    def chdir(self, _where):
        import contextlib

        return contextlib.nullcontext()

    def run(self, *args, env=None, success_codes=None, stdout=None):
        self.commands.append(args)


def test_the_suites_temporary_files_are_in_the_entrys_environment(tmp_path, monkeypatch):
    """Not under the shared /tmp/pytest-of-<user>/, where pytest cleans up the numbered directories of
    every run, those of another entry running at the same time included."""
    from harness.stack import paths
    from harness.stack.pins import matrix

    from harness.stack.pins import current
    from harness.stack.workspace import Workspace

    from harness.stack.entry_side import multi_device

    session = _Session(tmp_path / "venv")
    (tmp_path / "venv").mkdir()
    monkeypatch.setattr(multi_device, "merge", lambda *args: None)  # the fake session writes no reports
    ws = Workspace.of(paths.SOURCE, tmp_path / "reports")
    entry.run_entry(session, ws, current.entries(ws)[matrix.BASELINE], install=False)
    # The contracts, and the data-parallel family's own process (started beside them: in either order).
    (family_process,), (command,) = ([c for c in session.commands if ("--harness-multi-device" in c) is family]
                                     for family in (True, False))
    assert f"--basetemp={tmp_path / 'venv' / 'pytest-tmp'}" in command
    (family_temp,) = [a for a in family_process if a.startswith("--basetemp=")]  # its own, in the environment
    assert family_temp.startswith(f"--basetemp={tmp_path / 'venv' / 'pytest-tmp'}") and family_temp not in command


class _StoppedSession:
    """What install_entry tells nox when it stops the session (nox writes "Session X failed: REASON.")."""

    def __init__(self):
        self.reasons = []

    def error(self, reason):
        self.reasons.append(reason)
        raise SystemExit(1)


def test_a_session_stopped_for_a_problem_gives_nox_its_reason_without_a_final_period(tmp_path):
    """nox ends the reason with its own period: "...`upgrade-harness lock`.." was printed."""
    from harness.stack import paths
    from harness.stack.pins import matrix
    from harness.stack.workspace import Workspace

    unresolved = matrix.Entry("candidate", {"optax": "0.2.88"}, "candidate", "3.12", locked=False,
                              problem="optax==0.2.88 does not exist; pick a released version.")
    session = _StoppedSession()
    with pytest.raises(SystemExit):
        entry.install_entry(session, Workspace.of(paths.SOURCE, tmp_path), unresolved)
    assert session.reasons == ["optax==0.2.88 does not exist; pick a released version"]
