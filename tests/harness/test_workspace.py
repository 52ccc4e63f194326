"""The workspace a command is handed: which project, where its reports go, and a run's own directory
while it runs, without repointing anything shared."""

from pathlib import Path

import pytest

from harness import env_vars
from harness.stack import paths
from harness.stack.workspace import Workspace


def test_a_teams_project_keeps_its_reports_and_environments_in_its_root(tmp_path):
    ws = Workspace.of(tmp_path)
    assert (ws.root, ws.is_checkout, ws.reports, ws.home) == (tmp_path.resolve(), False, tmp_path.resolve() / "reports",
                                                              None)
    assert ws.envdir == tmp_path.resolve() / ".nox"
    assert Workspace.of(paths.SOURCE).is_checkout


def test_another_reports_directory_has_environments_of_its_own(tmp_path):
    ws = Workspace.of(tmp_path / "project").with_reports(tmp_path / "elsewhere")
    assert ws.envdir == tmp_path / "elsewhere" / ".nox"


def test_a_run_writes_into_its_directory_and_keeps_what_outlives_it_in_the_reports_directory(tmp_path):
    ws = Workspace.of(tmp_path)
    run = ws.running(ws.reports / ".runs" / "run-A")
    assert run.reports == ws.reports / ".runs" / "run-A" and run.published == ws.reports == run.home
    assert run.envdir == ws.envdir == tmp_path.resolve() / ".nox"  # environments outlive runs
    assert ws.reports == tmp_path.resolve() / "reports" and ws.home is None  # the command's own is untouched


def test_an_entry_is_told_its_run_directory_through_the_environment(tmp_path):
    told = Workspace.from_environment({env_vars.REPORTS_DIR: str(tmp_path / "run")})
    assert told.reports == tmp_path / "run"
    assert Workspace.from_environment({}).reports == Path(told.root) / "reports"


def test_upgrade_harness_upgrade_runs_the_command_in_its_own_process_told_what_its_session_was(tmp_path,
                                                                                                 monkeypatch):
    import os

    import upgrade_reports
    from harness import cli
    from harness.stack.commands import init, upgrade

    project = tmp_path / "team"
    (project / "sub").mkdir(parents=True)
    pins = upgrade_reports.load("baseline")["entry"]["requested"]
    (project / "requirements.txt").write_text("".join(f"{k}=={v}\n" for k, v in pins.items()))
    assert init.main([], project) == 0
    monkeypatch.chdir(project / "sub")
    monkeypatch.delenv(env_vars.PROJECT, raising=False)
    monkeypatch.delenv(env_vars.INVOKED_FROM, raising=False)
    monkeypatch.setattr(cli.subprocess, "run", lambda *a, **k: pytest.fail(f"started {a[0]}"))
    called = []

    def command(ws, argv, invoked_from=None):
        called.append((ws, argv, invoked_from, os.environ.get(env_vars.PROJECT), os.environ.get(env_vars.BUILTIN)))
        return 1

    monkeypatch.setattr(upgrade, "upgrade", command)
    assert cli.main(["upgrade", "--no-builtin", "--candidate", "jax==0.12.0.1"]) == 1  # its exit status, as is
    [(ws, argv, typed_in, told_project, told_builtin)] = called
    root = project.resolve()
    assert (ws.root, ws.is_checkout, ws.reports, ws.home) == (root, False, root / "reports", None)
    assert argv == ["--candidate", "jax==0.12.0.1"] and typed_in == str(project / "sub")
    assert (told_project, told_builtin) == (str(root), "off")
    assert env_vars.PROJECT not in os.environ and paths.ROOT == paths.SOURCE.resolve()  # nothing left behind
