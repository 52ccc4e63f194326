"""A bump judged from its diff: `--baseline-from` and `--candidate-from` read a pins file from the working
tree or from a git revision (`REV:PATH`), so a branch's bump of the team's pins is judged against the
default branch's. uv is replaced by test_resolve's table of releases; no stack is installed."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from unit.stack.pins.test_resolve import fake_compile

from harness import cli, env_vars
from harness.errors import HarnessError
from harness.stack.pins import locks, matrix, pins_from, plan
from harness.stack import pins_source
from harness.stack.commands import fanout
from harness.stack.workspace import Workspace
from unit.stack.pins.test_pins_from_git import PINS, REQUIREMENTS  # noqa: F401 (shared with it)

BUMPED = REQUIREMENTS.replace("optax==0.2.6", "optax==0.2.8")
TABLE = '[tool.upgrade-harness]\nbaseline-from = "requirements.txt"\ncontracts = ["contracts"]\nbuiltin = false\n'


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _team_repository(root: Path) -> Path:
    """A team's project in git: its pins committed on main, then a branch that bumps optax."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "contracts").mkdir()
    (root / "contracts" / "test_mine.py").write_text("def test_mine(check):\n    check.exact('x', 1, 1)\n")
    (root / "pyproject.toml").write_text(TABLE)
    (root / "requirements.txt").write_text(REQUIREMENTS)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "pins")
    _git(root, "checkout", "-q", "-b", "bump-optax")
    (root / "requirements.txt").write_text(BUMPED)
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "optax 0.2.8")
    return root


@pytest.fixture
def team(tmp_path, monkeypatch) -> Iterator[Path]:
    """The project, with uv replaced; the variables an upgrade sets for its children restored after."""
    with mock.patch.dict(os.environ):
        yield _project_in(_team_repository(tmp_path / "team"), monkeypatch)


def _project_in(root: Path, monkeypatch) -> Path:
    monkeypatch.setattr(locks, "uv_compile", fake_compile)
    monkeypatch.setattr(locks, "harness_requirements", lambda: ["pytest"])
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team's project
    for name in (env_vars.BASELINE_FROM, env_vars.CANDIDATE, env_vars.REPORTS_DIR, env_vars.PLAN):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(root)
    (root / "locks").mkdir(exist_ok=True)  # uv makes it for the baseline's first lock; the fake does not
    return root


def test_a_revisions_pins_are_read_from_the_revision_includes_too(tmp_path):
    root = _team_repository(tmp_path / "team")
    (root / "requirements.txt").write_text(BUMPED.replace("numpy==2.5.5\n", "-r base.txt\n"))
    (root / "base.txt").write_text("numpy==2.5.5\n")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "include")
    (root / "base.txt").write_text("numpy==2.4.0\n")  # the working tree's, not the revision's
    (root / "requirements.txt").write_text("jax==0.12.0.1\n")
    assert pins_from.read_source(pins_source.parse("HEAD:requirements.txt", root)) == dict(PINS, optax="0.2.8")
    assert pins_from.read_source(pins_source.parse("main:requirements.txt", root)) == PINS
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "broken")
    with pytest.raises(HarnessError, match=r"HEAD:requirements.txt does not pin jaxlib, optax, flax, numpy"):
        pins_from.read_source(pins_source.parse("HEAD:requirements.txt", root), side="candidate")


def test_a_revisions_range_is_named_at_its_revision_and_line(tmp_path):
    root = _team_repository(tmp_path / "team")
    (root / "requirements.txt").write_text(REQUIREMENTS.replace("optax==0.2.6", "optax>=0.2"))
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "range")
    with pytest.raises(HarnessError, match=r"HEAD:requirements.txt:3: optax is a range \(>=0.2\)"):
        pins_from.read_source(pins_source.parse("HEAD:requirements.txt", root))


@pytest.mark.parametrize("text, words", [
    ("origin/mian:requirements.txt", ["no revision 'origin/mian'", "git fetch", "git branch -a"]),
    ("main:requirements-dev.txt", ["main has no requirements-dev.txt", "git ls-tree --name-only main"]),
    ("main:contracts", ["main:contracts is a directory"]),
])
def test_a_bad_revision_or_path_is_refused_with_the_fix(tmp_path, text, words):
    root = _team_repository(tmp_path / "team")
    with pytest.raises(HarnessError) as raised:
        pins_from.read_source(pins_source.parse(text, root))
    for word in words:
        assert word in str(raised.value)


def test_a_revision_outside_a_git_repository_is_refused_with_the_fix(tmp_path):
    (tmp_path / "requirements.txt").write_text(REQUIREMENTS)
    with pytest.raises(HarnessError, match="is not in a git repository") as raised:
        pins_from.read_source(pins_source.parse("origin/main:requirements.txt", tmp_path))
    assert "--baseline-from requirements.txt" in str(raised.value)


def test_candidate_and_candidate_from_together_are_refused(team, capsys):
    assert fanout.plan(Workspace.from_environment(), ["--candidate", "optax==0.2.8", "--candidate-from",
                                                      "requirements.txt"], str(team)) == 2
    err = capsys.readouterr().err
    assert "--candidate and --candidate-from" in err and "Traceback" not in err
    assert not (team / "reports" / plan.PLAN_FILE).exists()


def test_a_candidate_the_same_as_the_baseline_is_judged(team, capsys):
    """A pull request that changes only contracts or code still gets a verdict: the two sides install one
    stack (which runs once)."""
    argv = ["--baseline-from", "requirements.txt", "--candidate-from", "requirements.txt", "--offline"]
    assert fanout.plan(Workspace.from_environment(), argv, str(team)) == 0, capsys.readouterr().err
    found = plan.read(team / "reports" / plan.PLAN_FILE)
    assert found[matrix.CANDIDATE].pins == found[matrix.BASELINE].pins


def test_a_branchs_bump_is_judged_from_its_diff(team, capsys):
    """`upgrade --baseline-from main:requirements.txt --candidate-from requirements.txt` on a branch that
    bumped optax: the plan's baseline is main's pins, its candidate the branch's, and it says so."""
    argv = ["--baseline-from", "main:requirements.txt", "--candidate-from", "requirements.txt", "--offline"]
    assert fanout.plan(Workspace.from_environment(), argv, str(team)) == 0, capsys.readouterr().err
    entries = plan.read(team / "reports" / plan.PLAN_FILE)
    base, cand = entries[matrix.BASELINE], entries[matrix.CANDIDATE]
    assert base.pins == PINS and cand.pins == dict(PINS, optax="0.2.8")
    assert (base.pins_from, cand.pins_from) == ("main:requirements.txt", "requirements.txt")
    rows = json.loads((team / "reports" / plan.PLAN_FILE).read_text())
    assert [r["pins_from"] for r in rows[:2]] == ["main:requirements.txt", "requirements.txt"]
    out = capsys.readouterr().out
    assert "baseline's pins from main:requirements.txt; candidate's from requirements.txt" in out


def test_the_same_bump_from_two_revisions(team, capsys):
    """Both sides from git: HEAD~1 (main's commit) against HEAD (the branch's), whatever the working tree holds."""
    (team / "requirements.txt").write_text(REQUIREMENTS.replace("flax==0.12.12", "flax==0.12.6"))
    argv = ["--baseline-from", "HEAD~1:requirements.txt", "--candidate-from", "HEAD:requirements.txt", "--offline"]
    assert fanout.plan(Workspace.from_environment(), argv, str(team)) == 0, capsys.readouterr().err
    entries = plan.read(team / "reports" / plan.PLAN_FILE)
    assert entries[matrix.BASELINE].pins == PINS and entries[matrix.CANDIDATE].pins == dict(PINS, optax="0.2.8")


def test_a_branch_whose_pins_differ_from_the_default_branch_is_told_the_command(team, capsys):
    from harness.stack.pins import branch_hint

    line = branch_hint.line(Workspace.from_environment(), team)
    assert line == ("this branch's requirements.txt bumps optax 0.2.6 → 0.2.8 over main's; to judge that bump: "
                    "upgrade-harness upgrade --baseline-from main:requirements.txt --candidate-from requirements.txt")
    _git(team, "checkout", "-q", "main")
    assert branch_hint.line(Workspace.from_environment(), team) is None  # the same pins: nothing to say
    _git(team, "update-ref", "refs/remotes/origin/main", "bump-optax")
    _git(team, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    assert "--baseline-from origin/main:requirements.txt" in branch_hint.line(Workspace.from_environment(), team)


def test_no_hint_outside_git_or_when_a_side_is_given(tmp_path, team, monkeypatch):
    from harness.stack.pins import branch_hint

    monkeypatch.setenv(env_vars.BASELINE_FROM, f"main:{team / 'requirements.txt'}")
    assert branch_hint.line(Workspace.from_environment(), team) is None
    monkeypatch.delenv(env_vars.BASELINE_FROM)
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in ("pyproject.toml", "requirements.txt"):
        (plain / name).write_text((team / name).read_text())
    (plain / "contracts").mkdir()
    monkeypatch.setenv(env_vars.PROJECT, str(plain))
    assert branch_hint.line(Workspace.from_environment(), plain) is None


def test_an_upgrade_without_options_in_a_bump_branch_judges_the_branchs_bump(team, capsys):
    """Plain `upgrade` in a branch that bumps the pins: the bump is what the team means to judge (the committed
    lock is the base branch's, or already the bump's after an accept), so it runs the pull-request comparison
    and says so; it never points at `lock`, which would make the bump the baseline and judge nothing."""
    assert fanout.plan(Workspace.from_environment(), ["--offline"], str(team)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    said = [line for line in out.splitlines() if "--candidate-from" in line]
    assert said == ["upgrade: this branch's requirements.txt bumps optax 0.2.6 → 0.2.8 over main's: judging that "
                    "bump, as the pull-request check does (upgrade-harness upgrade --baseline-from "
                    "main:requirements.txt --candidate-from requirements.txt); another candidate: --candidate PINS"]
    entries = plan.read(team / "reports" / plan.PLAN_FILE)
    base, cand = entries[matrix.BASELINE], entries[matrix.CANDIDATE]
    assert base.pins == PINS and cand.pins == dict(PINS, optax="0.2.8")
    assert (base.pins_from, cand.pins_from) == ("main:requirements.txt", "requirements.txt")
    assert "lock" not in out.replace("locks/", "").replace("uv.lock", "")


def test_an_upgrade_given_a_candidate_in_a_bump_branch_judges_that_candidate(team, capsys):
    argv = ["--offline", "--candidate", "jax==0.12.0.1 jaxlib==0.12.0.1"]
    assert fanout.plan(Workspace.from_environment(), argv, str(team)) == 0, capsys.readouterr().err
    entries = plan.read(team / "reports" / plan.PLAN_FILE)
    assert entries[matrix.BASELINE].pins_from == "requirements.txt"  # the table's file, as asked
    assert entries[matrix.CANDIDATE].pins["jax"] == "0.12.0.1"


@pytest.mark.parametrize("argv, words", [
    (["--candidate", "optax==0.2.8", "--candidate-from", "requirements.txt"], "--candidate and --candidate-from"),
    (["--baseline-from", "origin/mian:requirements.txt", "--candidate-from", "requirements.txt"],
     "no revision 'origin/mian'"),
    (["--baseline-from", "main:requirements.txt", "--candidate-from", "main:nowhere.txt"], "main has no nowhere.txt"),
])
def test_the_command_refuses_bad_input_in_one_message(team, capsys, argv, words):
    assert cli.main(["upgrade", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err
    assert not (team / "reports" / plan.PLAN_FILE).exists()


def test_a_baseline_from_given_to_the_command_is_said_as_the_plan_has_it(team, capsys):
    """`upgrade-harness` hands --baseline-from to the run in the environment, not in its arguments."""
    from harness.stack.commands import options as command_options

    options, rest = command_options.split(["--baseline-from", "main:requirements.txt", "--offline"])
    os.environ.update(command_options.environment(options, team))
    assert fanout.plan(Workspace.from_environment(), rest, str(team)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "baseline's pins from main:requirements.txt; candidate's from the harness's candidate" in out
    assert "--candidate-from requirements.txt" not in out  # no hint: a side was chosen


def test_the_hint_for_a_project_without_flax(tmp_path, monkeypatch):
    """A project whose code does not import flax pins none: the hint compares the packages it pins (a
    KeyError on flax stopped every upgrade of such a project run on its default branch)."""
    from harness.stack.pins import branch_hint

    root = tmp_path / "team"
    root.mkdir()
    (root / "contracts").mkdir()
    (root / "contracts" / "test_mine.py").write_text("def test_mine(check):\n    check.exact('x', 1, 1)\n")
    (root / "pyproject.toml").write_text(TABLE)
    without_flax = "".join(line + "\n" for line in REQUIREMENTS.splitlines() if not line.startswith("flax"))
    (root / "requirements.txt").write_text(without_flax)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "pins")
    with mock.patch.dict(os.environ):
        _project_in(root, monkeypatch)
        assert branch_hint.line(Workspace.from_environment(), root) is None  # on main: the same pins
        _git(root, "checkout", "-q", "-b", "bump")
        (root / "requirements.txt").write_text(without_flax.replace("optax==0.2.6", "optax==0.2.8"))
        assert "bumps optax 0.2.6 → 0.2.8 over main's" in branch_hint.line(Workspace.from_environment(), root)


REV_PATH_TOKENS = ["main", "HEAD", "HEAD~1", "HEAD~9", "origin/main", "bump-optax", "-", "--output=x", "-h", ":", "::",
                   "^{commit}", "@{u}", "..", "../", "/", "./", "requirements.txt", "uv.lock", "pyproject.toml",
                   "contracts", "nowhere.txt", "\x00", " ", "~", "^", "*", "é", "\\", "\n"]


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=st.lists(st.one_of(st.sampled_from(REV_PATH_TOKENS), st.text(max_size=3)), max_size=6).map("".join))
@example(text="requirements\x00.txt")
@example(text="main:requirements\x00.txt")
@example(text="ma\x00in:requirements.txt")
@example(text="--output=x:requirements.txt")
def test_any_rev_path_is_read_or_refused_in_words(tmp_path_factory, text):
    """`--baseline-from` and `--candidate-from` as typed: pins, or a HarnessError; never an exception from git,
    the file system or the readers (a NUL byte, a revision that looks like an option)."""
    root = tmp_path_factory.getbasetemp() / "rev-path-team"
    if not root.exists():
        _team_repository(root)
    for side in pins_from.SIDES:
        try:
            found = pins_from.read_source_all(pins_source.parse(text, root), side=side)
        except HarnessError:
            continue
        assert found.pins in (PINS, dict(PINS, optax="0.2.8"))


def test_a_malformed_line_at_a_revision_is_named_at_that_revision_and_line(tmp_path):
    root = _team_repository(tmp_path / "team")
    (root / "requirements.txt").write_text(BUMPED.replace("optax==0.2.8", "optax===0.2.x"))
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "damaged")
    (root / "requirements.txt").write_text(BUMPED)  # the working tree's is fine: the revision's is read
    with pytest.raises(HarnessError, match=re.escape("HEAD:requirements.txt:3: optax===0.2.x: '0.2.x' is not a "
                                                     "version")):
        pins_from.read_source(pins_source.parse("HEAD:requirements.txt", root))
    with pytest.raises(HarnessError, match=re.escape("HEAD:requirements.txt:3:")):
        pins_from.read_source(pins_source.parse("HEAD:requirements.txt", root), side="candidate")


UV_TABLE = '\n[tool.upgrade-harness]\nbaseline-from = "uv.lock"\ncontracts = ["contracts"]\nbuiltin = false\n'


def _commit(root: Path, message: str) -> None:
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)


def _uv_team(root: Path, main_optax: str = "0.2.6", branch_optax: str = "0.2.8",
             branch_lock_optax: str = "0.2.8") -> Path:
    """A team whose pins are its pyproject.toml's dependencies, locked by uv.lock: committed on main (its
    pyproject pinning `main_optax`, its lock 0.2.6), then a branch pinning `branch_optax`, locked at
    `branch_lock_optax` (a branch that did not run `uv lock` keeps 0.2.6)."""
    from unit.stack.pins.test_pins_agree import DECLARED, LOCK
    from support.team_files import pyproject

    root.mkdir(parents=True)
    (root / "contracts").mkdir()
    (root / "contracts" / "test_mine.py").write_text("def test_mine(check):\n    check.exact('x', 1, 1)\n")
    declared = lambda optax: [d.replace("optax==0.2.6", f"optax=={optax}") for d in DECLARED]  # noqa: E731
    (root / "pyproject.toml").write_text(pyproject(declared(main_optax), table=UV_TABLE))
    (root / "uv.lock").write_text(LOCK)
    _git(root, "init", "-q", "-b", "main")
    _commit(root, "pins")
    _git(root, "checkout", "-q", "-b", "bump-optax")
    (root / "pyproject.toml").write_text(pyproject(declared(branch_optax), table=UV_TABLE))
    (root / "uv.lock").write_text(LOCK.replace('name = "optax"\nversion = "0.2.6"',
                                               f'name = "optax"\nversion = "{branch_lock_optax}"'))
    _commit(root, f"optax {branch_optax}")
    return root


def _optax_line(root: Path) -> int:
    from support.team_files import line_of

    return line_of((root / "uv.lock").read_text(), "version = ", after='name = "optax"')


PR_CHECK = ["--baseline-from", "main:uv.lock", "--candidate-from", "uv.lock", "--offline"]


def test_a_pull_request_whose_pyproject_its_uv_lock_does_not_lock_is_refused(tmp_path, monkeypatch, capsys):
    """The reported case: optax==0.2.66 in the branch's pyproject.toml, uv.lock not re-locked. The PR check
    (`upgrade`) and the CI workflow's plan job (`plan`) stop before anything runs, naming both lines."""
    with mock.patch.dict(os.environ):
        root = _project_in(_uv_team(tmp_path / "team", branch_optax="0.2.66", branch_lock_optax="0.2.6"), monkeypatch)
        said = f"pyproject.toml:8: optax==0.2.66, but uv.lock:{_optax_line(root)} locks optax 0.2.6: re-lock with " \
               "`uv lock`, or fix the pin"
        assert cli.main(["upgrade", *PR_CHECK]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err
        assert fanout.plan(Workspace.from_environment(), PR_CHECK, str(root)) == 2
        assert said in capsys.readouterr().err
        assert not (root / "reports" / plan.PLAN_FILE).exists()


def test_the_baseline_sides_files_are_checked_at_its_revision(tmp_path, monkeypatch, capsys):
    """`main:uv.lock` means main's pyproject.toml too: main's pair disagreeing is named at main."""
    with mock.patch.dict(os.environ):
        root = _project_in(_uv_team(tmp_path / "team", main_optax="0.2.66"), monkeypatch)
        assert cli.main(["upgrade", *PR_CHECK]) == 2
        err = capsys.readouterr().err
        assert (f"main:pyproject.toml:8: optax==0.2.66, but main:uv.lock:{_optax_line(root)} locks optax 0.2.6: "
                "re-lock with `uv lock`, or fix the pin") in err, err


def test_files_that_agree_on_both_sides_are_judged(tmp_path, monkeypatch, capsys):
    with mock.patch.dict(os.environ):
        root = _project_in(_uv_team(tmp_path / "team"), monkeypatch)
        assert fanout.plan(Workspace.from_environment(), PR_CHECK, str(root)) == 0, capsys.readouterr().err
        entries = plan.read(root / "reports" / plan.PLAN_FILE)
        assert entries[matrix.BASELINE].pins == PINS and entries[matrix.CANDIDATE].pins == dict(PINS, optax="0.2.8")


@pytest.mark.parametrize("command", [["upgrade", "--offline"], ["golden", "--no-builtin"]])
def test_a_plain_upgrade_or_golden_refuses_files_that_disagree(tmp_path, monkeypatch, capfd, command):
    with mock.patch.dict(os.environ):
        root = _project_in(_uv_team(tmp_path / "team", branch_optax="0.2.66", branch_lock_optax="0.2.6"), monkeypatch)
        monkeypatch.delenv(env_vars.PROJECT)  # as a team's shell runs it
        assert cli.main(command) == 2
        err = capfd.readouterr().err
        assert f"pyproject.toml:8: optax==0.2.66, but uv.lock:{_optax_line(root)} locks optax 0.2.6" in err, err
        assert "Traceback" not in err


def test_a_malformed_version_in_uv_lock_stops_the_upgrade_with_its_line(tmp_path, monkeypatch, capsys):
    """The reported failure end to end: a `packaging` traceback (exit 1) before; exit 2 naming the line now."""
    with mock.patch.dict(os.environ):
        root = _project_in(_uv_team(tmp_path / "team"), monkeypatch)
        (root / "uv.lock").write_text((root / "uv.lock").read_text().replace('version = "0.2.8"', 'version = "0.2.x"'))
        assert cli.main(["upgrade", "--offline"]) == 2
        err = capsys.readouterr().err
        assert f"uv.lock:{_optax_line(root)}: optax's version '0.2.x' is not a version" in err, err
        assert "Traceback" not in err


def test_a_pull_requests_entries_install_each_sides_whole_lock(tmp_path, monkeypatch, capsys):
    """The PR check on a branch that bumped optax and, re-locking, scipy: the baseline installs main's whole
    uv.lock (resolved into the plan's locks before anything runs), the candidate the branch's; what the branch's
    lock changes besides the pins is said, since no single-package entry attributes it."""
    with mock.patch.dict(os.environ):
        root = _project_in(_uv_team(tmp_path / "team"), monkeypatch)
        (root / "uv.lock").write_text((root / "uv.lock").read_text().replace(
            'name = "chex"\nversion = "0.1.92"', 'name = "chex"\nversion = "0.1.93"'))
        _commit(root, "chex 0.1.93")
        assert fanout.plan(Workspace.from_environment(), PR_CHECK, str(root)) == 0, capsys.readouterr().err
        entries = plan.read(root / "reports" / plan.PLAN_FILE)
        base, cand = entries[matrix.BASELINE], entries[matrix.CANDIDATE]
        assert base.locked_with == ("chex==0.1.92",) and cand.locked_with == ("chex==0.1.93",)
        assert locks.parse_lock(Path(base.lock_file).read_text())["chex"] == "0.1.92"
        assert locks.parse_lock(Path(cand.lock_file).read_text())["chex"] == "0.1.93"
        assert cand.notes == ("chex 0.1.92 → 0.1.93: uv.lock locks it",)
        assert "upgrade: candidate: chex 0.1.92 → 0.1.93: uv.lock locks it" in capsys.readouterr().out


def test_a_baseline_from_a_revision_that_does_not_resolve_is_said_as_the_baselines(tmp_path, monkeypatch, capsys):
    """Resolved into the plan before anything runs: a main whose pins do not resolve is the baseline's problem,
    its report says why, and the run stops (it was the candidate's before, or a session's minutes later)."""
    root = _team_repository(tmp_path / "team")
    _git(root, "checkout", "-q", "main")
    (root / "requirements.txt").write_text(REQUIREMENTS.replace("optax==0.2.6", "optax==0.2.66"))
    _commit(root, "a pin no index has")
    _git(root, "checkout", "-q", "bump-optax")
    with mock.patch.dict(os.environ):
        _project_in(root, monkeypatch)
        argv = ["--baseline-from", "main:requirements.txt", "--candidate-from", "requirements.txt", "--offline"]
        assert fanout.plan(Workspace.from_environment(), argv, str(root)) == 2
        err = capsys.readouterr().err
        assert "the baseline's pins (main:requirements.txt) do not resolve" in err, err
        assert "there is no version of optax==0.2.66" in err and "CANNOT JUDGE: baseline is unresolvable" in err
        assert "optax==0.2.66" in (root / "reports" / "baseline.json").read_text()


def test_list_and_upgrade_name_the_same_pair_in_a_bump_branch(team, capsys):
    """One truth for what will run: in a branch that bumps the pins, `list` (and `nox -l`, `run NAME`, which read
    the same entries) names the pair `upgrade` judges, the default branch's pins against the branch's, not the
    branch's pins against the harness's own candidate."""
    assert cli.main(["list"]) == 0, capsys.readouterr().err
    listed = capsys.readouterr().out
    told = plan.told_entries(Workspace.from_environment())
    assert fanout.plan(Workspace.from_environment(), ["--offline"], str(team)) == 0, capsys.readouterr().err
    judged = plan.read(team / "reports" / plan.PLAN_FILE)
    assert list(told) == list(judged) == [matrix.BASELINE, matrix.CANDIDATE]
    for name in told:
        assert told[name].pins == judged[name].pins, name
        assert told[name].pin_text == judged[name].pin_text, name
        assert [line for line in listed.splitlines() if line.split()[:1] == [name]] == [
            f"  {name:9s}  {judged[name].pin_text}  ({told[name].description})"]
    assert judged[matrix.BASELINE].pins["optax"] == "0.2.6" and judged[matrix.CANDIDATE].pins["optax"] == "0.2.8"
    assert "this branch's requirements.txt bumps optax 0.2.6 → 0.2.8 over main's: the pair `upgrade` judges" in listed
