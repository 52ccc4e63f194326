"""A Poetry project's pins are read as Poetry writes them: `[tool.poetry.dependencies]` and its groups in Poetry's
syntax (exact versions read, a range refused at its line with the fix in that syntax), and poetry.lock as the
lock, whose every package is the stack judged. pyproject.toml and poetry.lock that disagree are refused both
ways, naming both lines and `poetry lock`.

tests/fixtures/poetry-team is a real Poetry project: its poetry.lock was written by Poetry 2.5.1 (`poetry lock`)
from its pyproject.toml. The expected versions are read from that lock with tomllib here, not by the code under
test."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.stack.pins import agreement, pins_from
from support.team_files import PINS, PoetryLocked, line_of, poetry_lock, poetry_pyproject

FIXTURE = Path(__file__).parents[3] / "fixtures" / "poetry-team"


@pytest.fixture
def team(tmp_path) -> Path:
    for name in ("pyproject.toml", "poetry.lock"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    return tmp_path


def _locked(lock: Path) -> dict[str, tuple[str, object]]:
    """name -> (version, markers) of every [[package]], as tomllib reads the lock."""
    return {p["name"]: (p["version"], p.get("markers")) for p in tomllib.loads(lock.read_text())["package"]}


def test_the_pins_and_the_set_are_the_locks_package_for_package(team):
    """Every package of the lock, at its version: the five as the stack, the rest (the dev group's pytest,
    transitive ones) as the team's set, a package locked for one platform with its marker."""
    locked = _locked(team / "poetry.lock")
    found = pins_from.read_all(team / "poetry.lock")
    assert found.pins == {name: locked[name][0] for name in PINS}
    assert found.pins == PINS  # what the fixture's pyproject.toml pins (numpy only locked)
    rest = {name: version for name, (version, _) in locked.items() if name not in PINS}
    assert {line.split("==")[0]: line.split("==")[1].split(";")[0] for line in found.locked_with} == rest
    assert rest["pytest"] == "8.4.2"  # the dev group's, as locked: not a newer resolution
    assert 'colorama==0.4.6; sys_platform == "win32"' in found.locked_with
    assert locked["colorama"][1] == 'sys_platform == "win32"'


def test_poetrys_exact_pins_are_read_from_pyproject_and_a_range_is_refused_at_its_line(tmp_path):
    pins = dict(PINS)
    (tmp_path / "pyproject.toml").write_text(poetry_pyproject(pins, dev={"pytest": "^8.4"}))
    found = pins_from.read_all(tmp_path / "pyproject.toml")
    assert found.pins == PINS and found.locked_with == ("pytest<9.0,>=8.4",)
    text = poetry_pyproject(dict(pins, optax="^0.2.6"))
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(HarnessError) as refused:
        pins_from.read_all(tmp_path / "pyproject.toml")
    said = str(refused.value)
    assert said.startswith(f"pyproject.toml:{line_of(text, 'optax = ')}: optax is a range (<0.3.0,>=0.2.6)")
    assert 'optax = "X.Y.Z"' in said and 'baseline-from = "poetry.lock"' in said


def test_a_dependency_table_and_a_git_source_are_read_as_poetry_reads_them(tmp_path):
    more = ('\n[tool.poetry.group.lint.dependencies]\nruff = {version = "0.6.0", markers = "sys_platform != '
            '\'win32\'"}\nmylib = {git = "https://e.invalid/mylib.git", rev = "abc"}\n')
    (tmp_path / "pyproject.toml").write_text(poetry_pyproject(PINS, more=more))
    with pytest.raises(HarnessError, match=r"mylib.*\[tool.poetry\] takes it from \{'git': "
                                           r"'https://e.invalid/mylib.git'\}"):
        pins_from.read_all(tmp_path / "pyproject.toml")
    assert pins_from.read_all(tmp_path / "pyproject.toml", "ignore").locked_with == (
        'ruff==0.6.0; sys_platform != "win32"',)


def test_a_pin_edited_without_re_locking_is_refused_both_ways(team):
    text = (team / "pyproject.toml").read_text().replace('optax = "0.2.6"', 'optax = "0.2.7"')
    (team / "pyproject.toml").write_text(text)
    lock_line = line_of((team / "poetry.lock").read_text(), 'version = "0.2.6"', after='name = "optax"')
    for pins_file in ("poetry.lock", "pyproject.toml"):
        with pytest.raises(agreement.Disagreement) as refused:
            pins_from.read_all(team / pins_file)
        assert (f'pyproject.toml:{line_of(text, "optax = ")}: optax = "0.2.7", but poetry.lock:{lock_line} locks '
                "optax 0.2.6: re-lock with `poetry lock`, or fix the pin") in str(refused.value)


def test_a_dependency_added_and_not_locked_is_refused(team):
    text = (team / "pyproject.toml").read_text().replace('pytest = "^8.4"', 'pytest = "^8.4"\nrequests = "^2.32"')
    (team / "pyproject.toml").write_text(text)
    with pytest.raises(agreement.Disagreement, match=rf'pyproject.toml:{line_of(text, "requests = ")}: requests = '
                                                     r'"\^2.32", but poetry.lock locks no requests: re-lock with '
                                                     r"`poetry lock`"):
        pins_from.read_all(team / "poetry.lock")


def test_a_lock_of_poetry_1_and_a_damaged_lock_are_refused_naming_the_fix(tmp_path):
    packages = [PoetryLocked(name, version) for name, version in PINS.items()]
    (tmp_path / "poetry.lock").write_text(poetry_lock(packages, lock_version="2.0"))
    with pytest.raises(HarnessError, match=r"poetry.lock:\d+: lock-version 2.0 was written by Poetry 1.*re-lock with "
                                           r"Poetry 2 \(`poetry lock`\)"):
        pins_from.read_all(tmp_path / "poetry.lock")
    text = poetry_lock(packages).replace('version = "0.2.6"', 'version = "0.2.x"')
    (tmp_path / "poetry.lock").write_text(text)
    with pytest.raises(HarnessError, match=rf"poetry.lock:{line_of(text, '0.2.x')}: optax's version '0.2.x' is not a "
                                           r"version.*re-lock with `poetry lock`"):
        pins_from.read_all(tmp_path / "poetry.lock")


def test_markers_by_group_and_sources_outside_the_index(tmp_path):
    """A package in two groups is installed where either group's marker holds (a group without one: everywhere);
    an extra's marker holds, as every extra is installed; another index is outside it, refused unless ignored."""
    packages = [PoetryLocked(name, version) for name, version in PINS.items()] + [
        PoetryLocked("colorama", "0.4.6", ("main", "dev"), {"main": 'sys_platform == "win32"',
                                                             "dev": 'platform_system == "Windows"'}),
        PoetryLocked("pywin32", "306", ("main", "dev"), {"main": 'sys_platform == "win32"'}),
        PoetryLocked("zipp", "3.0", markers='extra == "epath"'),
        PoetryLocked("internal", "2.0", source='type = "legacy"\nurl = "https://pypi.internal.example/simple"\n'
                                               'reference = "internal"'),
    ]
    (tmp_path / "poetry.lock").write_text(poetry_lock(packages))
    with pytest.raises(HarnessError, match=r"'internal 2.0': another package index "
                                           r"\(https://pypi.internal.example/simple\)"):
        pins_from.read_all(tmp_path / "poetry.lock")
    assert pins_from.read_all(tmp_path / "poetry.lock", "ignore").locked_with == (
        'colorama==0.4.6; sys_platform == "win32" or platform_system == "Windows"', "internal==2.0",
        "pywin32==306", "zipp==3.0")


def test_one_of_the_five_from_git_is_refused(tmp_path):
    packages = [PoetryLocked(name, version) for name, version in PINS.items() if name != "optax"]
    packages.append(PoetryLocked("optax", "0.2.6", source='type = "git"\nurl = "https://e.invalid/optax.git"'))
    (tmp_path / "poetry.lock").write_text(poetry_lock(packages))
    with pytest.raises(HarnessError, match=r"optax is locked from \{'git': 'https://e.invalid/optax.git'\}, not the "
                                           "package index"):
        pins_from.read_all(tmp_path / "poetry.lock", "ignore")


def test_its_companions_are_the_pyproject_and_the_lock(team):
    """What a pull-request workflow's paths list beside the pins file."""
    files = pins_from.pin_files.WorkingTree()
    assert agreement.companions(team / "poetry.lock", files) == [team / "pyproject.toml"]
    assert agreement.companions(team / "pyproject.toml", files) == [team / "poetry.lock"]


def test_init_recognises_a_poetry_project_and_its_workflow_runs_when_the_lock_changes(team, capsys, monkeypatch):
    """The first pins file init finds is Poetry's lock (numpy is not pinned in pyproject.toml, only locked); it
    says so, with what it read; the pull-request workflow runs when poetry.lock or pyproject.toml changes."""
    import yaml

    from harness.stack import project
    from harness.stack.ci import github_workflows, init_ci
    from harness.stack.commands import init

    monkeypatch.setattr(init_ci, "default_branch", lambda root: "main")  # no git here
    (team / "train.py").write_text("import optax\nfrom flax import nnx\n")
    tool = "upgrade-harness @ git+https://github.com/example/upgrade-harness@" + "0123456789abcdef" * 2 + "01234567"
    assert init.main(["--ci", "github", "--tool-from", tool], team) == 0
    said = capsys.readouterr().out
    assert ("baseline from poetry.lock (Poetry's lock): jax 0.11.2, jaxlib 0.11.2, optax 0.2.6, flax 0.12.12, numpy "
            f"2.5.5; and {len(_locked(team / 'poetry.lock')) - len(PINS)} other packages it locks") in said
    assert project.read_toml(team / "pyproject.toml")["tool"]["upgrade-harness"]["baseline-from"] == "poetry.lock"
    workflow = yaml.safe_load((team / github_workflows.PR_FILE).read_text())
    triggers = workflow[True]["pull_request"]["paths"]  # YAML 1.1 reads the key `on` as True
    assert "poetry.lock" in triggers and "pyproject.toml" in triggers


def test_accepts_flow_for_a_lock_says_where_to_pin_and_the_tool_that_re_locks():
    """A lock is not edited by hand: the flow says to pin in pyproject.toml and re-lock with the lock's own tool."""
    from harness.stack.commands import accept

    wanted = {"jax": "0.11.2", "optax": "0.2.8", "numpy": "2.5.5"}
    said = accept.flow("poetry.lock", wanted, "CHANGED", {"jax": "0.11.2", "optax": "0.2.6", "numpy": "2.5.5"})
    assert '1. in pyproject.toml, pin optax = "0.2.8" and re-lock (`poetry lock`)' in said  # what moves, Poetry's way
    wanted = {"optax": "0.2.8"}
    assert "3. commit pyproject.toml, poetry.lock, the lock and golden/ together" in said
    assert "pin optax==0.2.8 and re-lock (`uv lock`)" in accept.flow("sub/uv.lock", wanted, "CHANGED")
    assert "1. in requirements.txt, pin optax==0.2.8 (or merge" in accept.flow("requirements.txt", wanted, "CHANGED")


def test_sources_poetry_names_pypi_a_private_index_or_on_a_project_dependency(tmp_path):
    """`source = "pypi"` is the package index itself; another named source is another index, refused unless
    ignored, also when it only adds a source to a PEP 621 dependency (Poetry 2's way to say where it comes from)."""
    more = '\n[tool.poetry.group.dev.dependencies]\npytest = {version = "8.4.2", source = "PyPI"}\n'
    (tmp_path / "pyproject.toml").write_text(poetry_pyproject(PINS, more=more))
    assert pins_from.read_all(tmp_path / "pyproject.toml").locked_with == ("pytest==8.4.2",)
    text = ('[project]\nname = "team"\nversion = "0.1.0"\ndependencies = [\n'
            + "".join(f'    "{n}=={v}",\n' for n, v in PINS.items()) + '    "internal==2.0",\n]\n\n'
            '[tool.poetry.dependencies]\ninternal = {source = "private"}\n')
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(HarnessError, match=rf"pyproject.toml:{line_of(text, 'internal==2.0')}: 'internal==2.0': "
                                           r"another package index \(\[tool.poetry\]\)"):
        pins_from.read_all(tmp_path / "pyproject.toml")
    assert pins_from.read_all(tmp_path / "pyproject.toml", "ignore").locked_with == ("internal==2.0",)


def test_a_tool_that_is_not_a_table_is_said_at_its_line(tmp_path):
    text = 'tool = 1\n[project]\nname = "team"\ndependencies = ["jax==0.11.2"]\n'
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(HarnessError, match=r"pyproject.toml:\d+: \[tool\] is not a table"):
        pins_from.read_all(tmp_path / "pyproject.toml")
