"""A team's project: baseline pins read from its own files, its [tool.upgrade-harness] table, `init`,
and the `upgrade-harness` command's refusals. Each bad input gets one message naming the fix.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/test_project.py."""

import pytest

from harness import cli, env_vars
from harness.stack.project import load as project_load
from harness.stack.commands import init
from harness.stack.run import run_directory
from unit.stack.test_project import (  # noqa: F401 (fixtures and helpers shared with it)
    A_CONTRACT, PINS, REQUIREMENTS, _write,
)


TEAM_TEST = "def test_the_teams_own(): assert 1 + 1 == 2\n"


@pytest.mark.parametrize("plugin", ["absent", "installed"])
def test_the_teams_own_pytest_leaves_the_contracts_alone(pytester, plugin):
    """`pytest` at the team's root collects its tests, not contracts/ (which need the harness's fixture):
    with the tool in another environment (no plugin) and with it installed beside the team's tests."""
    (pytester.path / "requirements.txt").write_text(REQUIREMENTS)
    assert init.main([], pytester.path) == 0
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_team.py").write_text(TEAM_TEST)
    (pytester.path / "contracts" / "test_mine.py").write_text(A_CONTRACT)
    args = ["-p", "no:harness.contract.plugin"] if plugin == "absent" else []
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)
    assert "fixture 'check' not found" not in result.stdout.str()


def test_reports_dir_is_taken_from_the_shells_directory(tmp_path, monkeypatch, capsys):
    """`upgrade-harness upgrade --reports x` typed in a subdirectory writes to that subdirectory's x/,
    though nox runs in the project's root (here the candidate cannot resolve: its report says why)."""
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    assert init.main([], tmp_path) == 0
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    monkeypatch.delenv(env_vars.INVOKED_FROM, raising=False)
    monkeypatch.delenv(env_vars.REPORTS_DIR, raising=False)
    assert cli.main(["upgrade", "--reports", "x", "--offline", "--candidate", "optax==0.0.0.1"]) == 2
    [run] = run_directory.unfinished(tmp_path / "sub" / "x")  # a run that could not start is not published
    assert (run / "candidate.json").is_file()
    assert not (tmp_path / "x").exists() and not (tmp_path / "reports").exists()


def _team(tmp_path, monkeypatch, requirements: str = REQUIREMENTS):
    tmp_path.mkdir(exist_ok=True)
    _write(tmp_path / "requirements.txt", requirements)
    assert init.main([], tmp_path) == 0
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(env_vars.INVOKED_FROM, raising=False)


def test_golden_with_a_contracts_directory_that_does_not_exist_names_it_and_exits_2(tmp_path, monkeypatch, capfd):
    """The directory the user typed, as a path (not "under" the directory nox happened to run in), and
    bad input's status 2, not nox's 1 (the status of a changed contract)."""
    _team(tmp_path, monkeypatch)
    assert cli.main(["golden", "--contracts", "nosuchdir"]) == 2
    err = capfd.readouterr().err
    assert f"--contracts directory {tmp_path / 'nosuchdir'} (given with --contracts) does not exist;" in err, err
    assert "site-packages" not in err and "harness/stack" not in err


def test_lock_with_a_version_that_does_not_exist_says_so_without_a_traceback(tmp_path, monkeypatch, capfd):
    _team(tmp_path, monkeypatch, REQUIREMENTS.replace("optax==0.2.6", "optax==0.2.66"))
    monkeypatch.setenv("UV_OFFLINE", "1")  # no version of it anywhere: the index need not be asked
    assert cli.main(["lock"]) == 2
    err = capfd.readouterr().err
    assert "lock: cannot resolve matrix entry 'baseline'" in err and "optax==0.2.66" in err, err
    assert "Traceback" not in err and "raised exception" not in err


@pytest.mark.parametrize("reports, why", [
    ("", "is the project's root"), (".", "is the project's root"),
    ("golden", "is inside the project's golden directory"), ("golden/sub", "is inside the project's golden directory"),
    ("locks", "is inside the project's locks directory"),
    ("contracts", "would move or replace the project's contracts directory"),
])
def test_a_reports_directory_over_the_projects_own_files_is_refused_before_anything_moves(
        tmp_path, monkeypatch, capsys, reports, why):
    """A run moves the last run's files in its reports directory to previous/ and writes locks/ there:
    given the project's root (`--reports ""`, `--reports .`) it moved the committed locks/baseline.txt
    away. Refused (exit 2) with nothing written, moved or created."""
    project_dir = tmp_path / "team"
    _team(project_dir, monkeypatch)
    (project_dir / "contracts" / "test_mine.py").write_text(A_CONTRACT)
    _write(project_dir / "locks" / "baseline.txt", "# the committed lock\n")
    _write(project_dir / "golden" / "mine.json", "{}\n")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert cli.main(["upgrade", "--no-builtin", "--offline", "--reports", reports]) == 2
    err = capsys.readouterr().err
    assert f"reports directory {(project_dir / reports).resolve()} {why}" in err, err
    assert "give --reports a directory of its own" in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert (project_dir / "locks" / "baseline.txt").read_text() == "# the committed lock\n"


@pytest.mark.parametrize("blocked, said", [
    ("golden", "the golden store {path} is not a directory; move the file away"),
    ("reports", "reports directory {path} is not writable: {path} is a file, not a directory; move it away"),
])
def test_golden_refuses_a_file_where_its_directories_go_before_recording(tmp_path, monkeypatch, capfd, blocked, said):
    """A file where golden/ or reports/ goes: a traceback after every value was recorded (golden/), or a
    message pointing at a pytest option golden does not take (reports/). Said first, exit 2."""
    _team(tmp_path, monkeypatch)
    (tmp_path / "contracts" / "test_mine.py").write_text(A_CONTRACT)
    (tmp_path / blocked).write_text("a file\n")
    assert cli.main(["golden", "--no-builtin"]) == 2
    err = capfd.readouterr().err
    assert said.format(path=tmp_path / blocked) in err, err
    assert "Traceback" not in err and "--harness-report" not in err
    assert (tmp_path / blocked).read_text() == "a file\n"


def test_lock_help_prints_its_usage_and_writes_nothing(tmp_path, monkeypatch, capfd):
    """`lock --help` ran lock (rewriting locks/baseline.txt); an unknown argument was ignored."""
    _team(tmp_path, monkeypatch)
    assert cli.main(["lock", "--help"]) == 0
    out = capfd.readouterr().out
    assert "usage: upgrade-harness lock" in out, out
    assert not (tmp_path / "locks").exists()
    assert cli.main(["lock", "--frobnicate"]) == 2
    assert "lock: upgrade-harness lock: bad arguments ['--frobnicate']" in capfd.readouterr().err
    assert not (tmp_path / "locks").exists()


@pytest.mark.parametrize("command, said", [
    ("golden", "usage: upgrade-harness golden"), ("accept", "usage: upgrade-harness accept"),
    ("lock", "usage: upgrade-harness lock"), ("plan", "usage: upgrade-harness plan"),
    ("followups", "usage: upgrade-harness followups"), ("run", "usage: upgrade-harness run"),
])
def test_a_commands_help_prints_its_usage_and_starts_no_session(tmp_path, monkeypatch, capfd, command, said):
    """Found: `golden --help` and `accept --help` in a team's project started their nox session (a
    virtualenv made in .nox/golden, "Session golden was successful") to print their usage."""
    _team(tmp_path, monkeypatch)
    assert cli.main([command, "--help"]) == 0
    out, err = capfd.readouterr()
    assert said in out, out + err
    assert "nox >" not in out + err and not (tmp_path / ".nox").exists()


def test_a_reports_directory_whose_locks_folder_is_the_projects_is_refused(tmp_path, monkeypatch, capsys):
    """locks = "ci/locks" and --reports ci: the run would replace ci/locks/ with its plan's locks."""
    _team(tmp_path, monkeypatch)
    table = tmp_path / "pyproject.toml"
    assert table.read_text().count('locks = "locks"') == 1
    table.write_text(table.read_text().replace('locks = "locks"', 'locks = "ci/locks"'))
    _write(tmp_path / "ci" / "locks" / "baseline.txt", "# the committed lock\n")
    assert cli.main(["upgrade", "--no-builtin", "--offline", "--reports", "ci"]) == 2
    err = capsys.readouterr().err
    assert f"would move or replace the project's locks directory {tmp_path / 'ci' / 'locks'}" in err, err
    assert sorted(p.name for p in (tmp_path / "ci").iterdir()) == ["locks"]


def test_the_default_reports_directory_passes_when_the_contracts_are_the_projects_root(tmp_path, monkeypatch):
    """contracts = ["."]: a run writes nothing into its contracts, and reports/ replaces none of them."""
    from harness.stack.run import run_directory
    from harness.stack.workspace import Workspace

    _team(tmp_path, monkeypatch)
    monkeypatch.setenv(env_vars.PROJECT, str(tmp_path))
    monkeypatch.setenv(env_vars.CONTRACT_DIRS, str(tmp_path))
    (tmp_path / "test_mine.py").write_text(A_CONTRACT)
    ws = Workspace.from_environment()
    assert tmp_path in project_load(ws).own_contracts
    run_directory.check(ws)  # no refusal
