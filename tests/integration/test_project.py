"""A team's project: baseline pins read from its own files, its [tool.upgrade-harness] table, `init`,
and the `upgrade-harness` command's refusals. Each bad input gets one message naming the fix.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/test_project.py."""

import pytest

from harness import cli, env_vars
from harness.stack.commands import init
from harness.stack.run import run_dir
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
    [run] = run_dir.unfinished(tmp_path / "sub" / "x")  # a run that could not start is not published
    assert (run / "candidate.json").is_file()
    assert not (tmp_path / "x").exists() and not (tmp_path / "reports").exists()
