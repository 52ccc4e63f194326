"""A team's lock is the stack judged: every entry installs the team's whole locked set (chex, ml-dtypes, scipy,
its dev tools...), not only jax, jaxlib, optax, flax and numpy, with only the bumped packages changed and what
the bump forces said as a resolution note naming the package and why. What the entries cannot install is left
out by one rule (the project itself, packages from outside the index, a marker that excludes the platform), and
the baseline's committed lock (locks/baseline.txt) follows it: written from the whole set, refused when stale.
uv is test_resolve's table of releases; no stack is installed. This checkout's entries pin the five alone."""

from __future__ import annotations

import pytest

from harness import env_vars
from harness.errors import HarnessError
from harness.model import entry_job
from harness.run_options import RunOptions
from harness.stack import paths
from harness.stack.entry_side import entry_jobs
from harness.stack.pins import current, locks, matrix, pins_from, plan, resolve
from harness.stack.workspace import Workspace
from support.team_files import PINS, Locked, pyproject, stack, uv_lock
from unit.stack.pins.test_resolve import fake_compile

JAX_BUMP = {"jax": "0.12.0.1", "jaxlib": "0.12.0.1"}
TEAM = ("chex==0.1.92", 'colorama==0.4.6; sys_platform == "win32"', "ml-dtypes==0.5.1", "pytest==8.3.3",
        "ruff==0.6.0", "scipy==1.14.1")
TABLE = '\n[tool.upgrade-harness]\nbaseline-from = "uv.lock"\ncontracts = ["contracts"]\nbuiltin = false\n'


def team_lock(**versions: str) -> str:
    """A team's uv.lock: its project (editable) needs the stack and scipy; optax needs chex, jax ml-dtypes; its
    dev group has pytest (colorama on Windows only) and ruff."""
    v = {"chex": "0.1.92", "scipy": "1.14.1", **versions}
    return uv_lock([
        *stack({"optax": ('name = "chex"',), "jax": ('name = "ml-dtypes"',)}),
        Locked("chex", v["chex"], dependencies=('name = "jax"', 'name = "numpy"')),
        Locked("ml-dtypes", "0.5.1"), Locked("scipy", v["scipy"]), Locked("colorama", "0.4.6"), Locked("ruff", "0.6.0"),
        Locked("pytest", "8.3.3", dependencies=('name = "colorama", marker = "sys_platform == \'win32\'"',)),
        Locked("team", "0.1.0", source='{ editable = "." }',
               dependencies=tuple(f'name = "{n}"' for n in [*PINS, "scipy"]),
               groups={"dev": ('name = "pytest"', 'name = "ruff"')}),
    ])


@pytest.fixture(autouse=True)
def offline_uv(monkeypatch):
    monkeypatch.setattr(locks, "uv_compile", fake_compile)
    monkeypatch.setattr(locks, "harness_requirements", lambda: ["pytest"])


def _team(tmp_path, monkeypatch, lock: str | None = None) -> Workspace:
    (tmp_path / "contracts").mkdir(exist_ok=True)
    (tmp_path / "train.py").write_text("import optax\nfrom flax import nnx\n")
    (tmp_path / "pyproject.toml").write_text(
        pyproject([*(f"{n}=={v}" for n, v in PINS.items()), "scipy>=1.10"], table=TABLE,
                  more='\n[dependency-groups]\ndev = [\n    "pytest>=8",\n    "ruff",\n]\n'))
    (tmp_path / "uv.lock").write_text(lock or team_lock())
    monkeypatch.setenv(env_vars.PROJECT, str(tmp_path))  # a team's project
    return Workspace.from_environment()


def test_every_entry_carries_the_teams_whole_locked_set(tmp_path, monkeypatch):
    entries = current.entries(_team(tmp_path, monkeypatch))
    assert entries[matrix.BASELINE].pins == PINS and entries[matrix.BASELINE].locked_with == TEAM
    assert {name: e.locked_with for name, e in entries.items()} == {name: TEAM for name in entries}
    assert locks.lock_input(entries[matrix.BASELINE]).splitlines() == [
        *(f"{n}=={v}" for n, v in PINS.items()), *TEAM, "pytest"]


def test_the_bump_keeps_the_teams_packages_and_says_what_it_forces(tmp_path, monkeypatch):
    """jax 0.12 cannot run with chex 0.1.92 (it needs jax<0.12): chex moves, and only chex, and the note says
    so; scipy, ml-dtypes, pytest and ruff stay at the team's versions."""
    ws = _team(tmp_path, monkeypatch)
    found = resolve.resolve(ws, JAX_BUMP, PINS, "3.12", held=TEAM)
    assert found.pins == dict(PINS, **JAX_BUMP)
    assert found.notes == ["chex 0.1.92 → 0.1.93: 0.1.92 does not resolve with jax==0.12.0.1 jaxlib==0.12.0.1 "
                           "(it needs jax<0.12)"]
    locked = locks.parse_lock(found.lock)
    assert {p: locked.get(p) for p in ("chex", "scipy", "ml-dtypes", "pytest", "ruff", "colorama")} == {
        "chex": "0.1.93", "scipy": "1.14.1", "ml-dtypes": "0.5.1", "pytest": "8.3.3", "ruff": "0.6.0",
        "colorama": None}  # Windows only: not on this machine
    assert resolve.resolve(ws, {"optax": "0.2.8"}, PINS, "3.12", held=TEAM).notes == []  # nothing forced


def test_the_plans_entries_install_the_set_and_the_notes_name_the_forced_package(tmp_path, monkeypatch):
    ws = _team(tmp_path, monkeypatch)
    entries = {e.name: e for e in plan.build(ws, None, tmp_path / "plan-locks")}  # the harness's candidate
    candidate = locks.parse_lock((tmp_path / "plan-locks" / "candidate.txt").read_text())
    assert candidate["chex"] == "0.1.93" and candidate["scipy"] == "1.14.1" and candidate["optax"] == "0.2.8"
    assert entries["candidate"].notes == ("chex 0.1.92 → 0.1.93: 0.1.92 does not resolve with jax==0.12.0.1 "
                                          "jaxlib==0.12.0.1 optax==0.2.8 (it needs jax<0.12)",)
    optax_only = locks.parse_lock((tmp_path / "plan-locks" / "optax-only.txt").read_text())
    assert optax_only["chex"] == "0.1.92" and entries["optax-only"].notes == ()
    assert entries["jax-only"].notes[0].startswith("chex 0.1.92 → 0.1.93")
    baseline = locks.parse_lock((tmp_path / "locks" / "baseline.txt").read_text())  # written on first use
    assert {p: baseline.get(p) for p in ("chex", "scipy", "ruff")} == {"chex": "0.1.92", "scipy": "1.14.1",
                                                                       "ruff": "0.6.0"}
    assert 'colorama==0.4.6 ; sys_platform == "win32"' in (tmp_path / "locks" / "baseline.txt").read_text()


def test_the_committed_baseline_lock_is_stale_when_the_teams_set_moved(tmp_path, monkeypatch):
    ws = _team(tmp_path, monkeypatch)
    baseline = current.entries(ws)[matrix.BASELINE]
    lock = locks.write_if_missing(ws, baseline)
    locks.check_current(ws, baseline, lock)  # as written
    (tmp_path / "uv.lock").write_text(team_lock(scipy="1.15.0"))  # re-locked by the team, not by the harness
    moved = current.entries(ws)[matrix.BASELINE]
    with pytest.raises(HarnessError, match=r"no longer matches the baseline pins: scipy==1.15.0 \(the lock has "
                                           r"1.14.1\); re-lock with `upgrade-harness lock`"):
        locks.check_current(ws, moved, lock)
    lock.write_text(lock.read_text().replace("ruff==0.6.0\n", ""))  # an older harness's lock: the five alone
    with pytest.raises(HarnessError, match=r"ruff==0.6.0 \(the lock has none\)"):
        locks.check_current(ws, baseline, lock)


def test_what_the_entries_cannot_install_is_left_out_by_one_rule(tmp_path):
    """The project itself and its workspace members: never (the contracts import them from pythonpath); a git,
    path or URL source: refused unless pins-outside-index = "ignore", then not installed; another registry's
    package: installed from the index uv uses when ignored; a marker for another platform: kept with its marker
    (uv leaves it out here); dev tools: installed, as `uv sync` installs them."""
    lock = uv_lock([
        *stack(), Locked("scipy", "1.14.1"), Locked("ruff", "0.6.0"), Locked("mylib", "1.0", source=(
            '{ git = "https://e.invalid/mylib?rev=abc#abc" }')),
        Locked("internal", "2.0", source='{ registry = "https://pypi.internal.example/simple" }'),
        Locked("colorama", "0.4.6"), Locked("helpers", "0.1.0", source='{ editable = "packages/helpers" }'),
        Locked("team", None, source='{ virtual = "." }', dependencies=(
            *(f'name = "{n}"' for n in PINS), 'name = "scipy"', 'name = "mylib"', 'name = "internal"',
            'name = "helpers"', 'name = "colorama", marker = "sys_platform == \'win32\'"'),
            groups={"lint": ('name = "ruff"',)}),
    ])
    (tmp_path / "uv.lock").write_text(lock)
    with pytest.raises(HarnessError) as refused:
        pins_from.read_all(tmp_path / "uv.lock")
    assert "'mylib from git https://e.invalid/mylib?rev=abc#abc': a git source, not the package index" in \
        str(refused.value)
    assert "'internal 2.0': another package index (https://pypi.internal.example/simple)" in str(refused.value)
    assert pins_from.read_all(tmp_path / "uv.lock", "ignore").locked_with == (
        'colorama==0.4.6; sys_platform == "win32"', "internal==2.0", "ruff==0.6.0", "scipy==1.14.1")


def test_a_requirements_file_and_a_pyproject_give_their_other_lines(tmp_path):
    """A requirements file: every other requirement (a constraint folded into the line it constrains; one
    nothing requires installs nothing, as in pip; `-e .` refused unless ignored, then not installed). A
    pyproject.toml: its other requirements, ranges as written, less the project itself and a [tool.uv.sources]
    workspace member."""
    (tmp_path / "constraints.txt").write_text("chex==0.1.92\nabsl-py==2.1.0\n")
    (tmp_path / "requirements.txt").write_text("".join(f"{n}=={v}\n" for n, v in PINS.items())
                                               + "-c constraints.txt\nchex\nscipy>=1.10\n-e .\n")
    assert pins_from.read_all(tmp_path / "requirements.txt", "ignore").locked_with == ("chex==0.1.92", "scipy>=1.10")
    with pytest.raises(HarnessError, match=r"requirements.txt:9: '-e .': an editable install"):
        pins_from.read_all(tmp_path / "requirements.txt")
    (tmp_path / "pyproject.toml").write_text(pyproject(
        [*(f"{n}=={v}" for n, v in PINS.items()), "scipy>=1.10", "helpers"],
        more='\n[dependency-groups]\ndev = ["team[test]", "ruff"]\n\n[tool.uv.sources]\nhelpers = { workspace = '
             'true }\n'))
    assert pins_from.read_all(tmp_path / "pyproject.toml").locked_with == ("ruff", "scipy>=1.10")


def test_this_checkouts_entries_pin_the_five_alone():
    ws = Workspace.of(paths.SOURCE)
    entries = current.entries(ws)
    assert all(e.locked_with == () for e in entries.values())
    assert locks.lock_input(entries[matrix.BASELINE]).splitlines() == [*entries[matrix.BASELINE].requirements,
                                                                      "pytest"]


def test_the_set_travels_with_the_plan_and_the_entrys_job(tmp_path):
    entry = matrix.Entry("baseline", dict(PINS), "the baseline", locked_with=TEAM, pins_from="main:uv.lock")
    plan.write([entry], tmp_path / "plan.json")
    assert plan.read(tmp_path / "plan.json")["baseline"] == entry
    entry_job.write(tmp_path / "jobs" / "baseline.json", entry_jobs.job_of(entry, RunOptions()))
    assert entry_jobs.entry_of(entry_job.read(tmp_path / "jobs" / "baseline.json")) == entry
