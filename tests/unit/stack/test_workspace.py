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

    from support import upgrade_reports
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
    # Told through the workspace, not this process's environment (89059e5: no os.environ patched).
    assert ws.options.builtin == "off" and (told_project, told_builtin) == (None, None)
    assert env_vars.PROJECT not in os.environ and paths.project_root(os.environ) == paths.SOURCE.resolve()  # nothing left behind


def test_what_follows_from_the_project_is_the_workspaces_own(tmp_path):
    team, checkout = Workspace.of(tmp_path / "team"), Workspace.checkout(tmp_path / "copy")
    root = (tmp_path / "team").resolve()
    assert (team.adhoc_locks, team.wheel_cache) == (root / ".nox" / "adhoc-locks", root / ".nox" / "harness-wheel")
    assert team.noxfile == paths.PACKAGE / "stack" / "sessions.py"  # a project's entries load the package's sessions
    assert team.matrix == paths.DEFAULT_MATRIX  # the harness's pins: a project's default candidate
    copy = (tmp_path / "copy").resolve()
    assert checkout.is_checkout and checkout.noxfile == copy / "noxfile.py"
    assert checkout.matrix == copy / "harness" / "matrix.toml" and checkout.reports == copy / "reports"
    assert Workspace.of(paths.SOURCE).matrix == paths.SOURCE / "harness" / "matrix.toml"
    kept = Workspace.of(tmp_path / "team", tmp_path / "r").running(tmp_path / "run")  # a run keeps its project's
    assert (kept.noxfile, kept.matrix, kept.wheel_cache) == (team.noxfile, team.matrix, team.wheel_cache)


def test_two_projects_are_read_in_one_process_each_from_its_own_workspace(tmp_path, monkeypatch):
    from harness.errors import HarnessError
    from harness.stack import project
    from harness.stack.pins import current, locks, matrix

    monkeypatch.delenv(env_vars.PROJECT, raising=False)  # the environment names neither
    for name, golden in (("a", "golden-a"), ("b", "golden-b")):
        (tmp_path / name / "contracts").mkdir(parents=True)
        (tmp_path / name / "pyproject.toml").write_text(
            f'[tool.upgrade-harness]\nbaseline-from = "requirements.txt"\ncontracts = ["contracts"]\ngolden = "{golden}"\n')
    a, b = Workspace.of(tmp_path / "a"), Workspace.of(tmp_path / "b")
    assert project.load(a).golden == a.root / "golden-a" and project.load(b).golden == b.root / "golden-b"
    assert project.load(Workspace.of(paths.SOURCE)).golden == paths.SOURCE / "golden"
    with pytest.raises(HarnessError, match="requirements.txt"):  # a's baseline file is missing: a's error
        current.pins(a)
    adhoc = matrix.Entry("candidate", {}, "", locked=False)
    assert locks.lock_path(a, adhoc) == a.root / ".nox" / "adhoc-locks" / "candidate.txt"
    assert (locks.lock_command(a), locks.lock_command(Workspace.of(paths.SOURCE))) == ("upgrade-harness lock",
                                                                                       "nox -s lock")
