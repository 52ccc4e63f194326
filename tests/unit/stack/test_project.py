"""A team's project: baseline pins read from its own files, its [tool.upgrade-harness] table, `init`,
and the `upgrade-harness` command's refusals. Each bad input gets one message naming the fix."""

import re
import textwrap

import pytest

from harness import builtin_families as families
from harness import cli, env_vars
from harness.errors import HarnessError
from harness.model.enums import BuiltinMode
from harness.stack import paths, project
from harness.stack.commands import options as command_options
from harness.stack.commands import init
from harness.stack.pins import current, pins_from
from harness.stack.workspace import Workspace

PINS = {"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.12", "numpy": "2.5.5"}
REQUIREMENTS = "".join(f"{name}=={version}\n" for name, version in PINS.items())


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_requirements_with_comments_markers_and_includes(tmp_path):
    _write(tmp_path / "base.txt", "numpy==2.5.5  # pinned by the data team\nflax==0.12.12\n")
    path = _write(tmp_path / "requirements.txt", """\
        # training stack
        -r base.txt
        --index-url https://example.invalid/simple
        jax[cpu]==0.11.2
        jaxlib==0.11.2 ; sys_platform == "linux"
        Optax==0.2.6
        requests>=2
        ./vendored/thing
        """)
    with pytest.raises(HarnessError) as refused:  # changed on purpose: these lines were skipped silently
        pins_from.read(path)
    assert ("requirements.txt:3: '--index-url https://example.invalid/simple': another package index" in str(refused.value)
            and "requirements.txt:8: './vendored/thing': a local path or a URL" in str(refused.value))
    assert 'pins-outside-index = "ignore"' in str(refused.value)
    assert pins_from.read(path, "ignore") == PINS


def test_pyproject_dependencies_and_dependency_groups(tmp_path):
    path = _write(tmp_path / "pyproject.toml", """\
        [project]
        name = "team"
        dependencies = ["jax==0.11.2", "jaxlib==0.11.2", "requests"]
        [project.optional-dependencies]
        train = ["optax==0.2.6"]
        [dependency-groups]
        ml = ["flax==0.12.12", "numpy==2.5.5", {include-group = "other"}]
        other = []
        """)
    assert pins_from.read(path) == PINS


def test_uv_lock(tmp_path):
    packages = "".join(f'[[package]]\nname = "{n}"\nversion = "{v}"\n\n' for n, v in PINS.items())
    path = _write(tmp_path / "uv.lock", 'version = 1\n\n' + packages + '[[package]]\nname = "chex"\nversion = "0.1.9"\n')
    assert pins_from.read(path) == PINS


@pytest.mark.parametrize("line, words", [
    ("optax>=0.2.6", "optax is a range (>=0.2.6), not an exact version"),
    ("optax", "optax is a range (any version)"),
    ("optax==0.2.*", "optax is a range (==0.2.*)"),
    ("optax~=0.2.6", "pin it exactly, e.g. optax==X.Y.Z"),
])
def test_a_range_is_refused_with_the_fix(tmp_path, line, words):
    path = _write(tmp_path / "requirements.txt", REQUIREMENTS.replace("optax==0.2.6", line))
    with pytest.raises(HarnessError, match="requirements.txt:3") as raised:
        pins_from.read(path)
    assert words in str(raised.value)


def test_missing_pins_twice_pinned_and_missing_files_are_named(tmp_path):
    with pytest.raises(HarnessError, match="does not pin flax, numpy"):
        pins_from.read(_write(tmp_path / "a.txt", "jax==0.11.2\njaxlib==0.11.2\noptax==0.2.6\n"))
    with pytest.raises(HarnessError, match=r"pins optax twice, 0.2.6 \(b.txt:3\) and 0.2.8 \(b.txt:6\)"):
        pins_from.read(_write(tmp_path / "b.txt", REQUIREMENTS + "optax==0.2.8\n"))
    with pytest.raises(HarnessError, match="does not exist"):
        pins_from.read(tmp_path / "nowhere.txt")
    with pytest.raises(HarnessError, match="cannot be read as TOML"):
        pins_from.read(_write(tmp_path / "pyproject.toml", "[project\n"))


def test_a_lock_that_forks_a_package_is_refused(tmp_path):
    text = "".join(f'[[package]]\nname = "{n}"\nversion = "{v}"\n\n' for n, v in PINS.items())
    path = _write(tmp_path / "uv.lock", text + '[[package]]\nname = "numpy"\nversion = "2.4.0"\n')
    with pytest.raises(HarnessError, match="locks numpy at 2 versions"):
        pins_from.read(path)


TRAIN = """\
    import optax
    from flax import nnx


    def optimizer(model):
        return nnx.Optimizer(model, optax.MultiSteps(optax.adamw(1e-3), every_k_schedule=2), wrt=nnx.Param)
    """


def _project(tmp_path, table: str, code: str = TRAIN):
    """A team's project: exact pins, a contracts directory, its table, and training code (Flax NNX and
    Optax's MultiSteps over adamw unless `code` says otherwise)."""
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    _write(tmp_path / "train.py", code)
    (tmp_path / "contracts").mkdir(exist_ok=True)
    _write(tmp_path / "pyproject.toml", "[tool.upgrade-harness]\n" + textwrap.dedent(table))
    return tmp_path


@pytest.mark.parametrize("table, words", [
    ('contracts = ["contracts"]\n', "needs baseline-from"),
    ('baseline-from = "requirements.txt"\ncontract = ["contracts"]\n', "unknown key(s) contract"),
    ('baseline-from = "requirements.txt"\ncontracts = ["nowhere"]\n', "/nowhere ("),
    # Was "builtin must be true or false": builtin now also takes "judge", "report" and "all".
    ('baseline-from = "requirements.txt"\nbuiltin = "no"\n', 'builtin must be "judge", "report", "all" or false'),
    ('baseline-from = "requirements.txt"\nbuiltin = 1\n', '(not 1)'),
    ('baseline-from = "requirements.txt"\ncontracts = [1]\n', "must be a path or a list of paths"),
    ('baseline-from = "requirements.txt"\nbuiltin = false\n', "there are no contracts to run"),
])
def test_a_bad_table_is_refused_with_the_fix(tmp_path, monkeypatch, table, words):
    root = _project(tmp_path, table)
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team\'s project
    with pytest.raises(HarnessError) as raised:
        project.load(Workspace.from_environment())
    assert words in str(raised.value)
    if "nowhere" in table:  # the directory as a path, whatever directory the command runs in
        assert f"{root / 'nowhere'} ({root / 'pyproject.toml'}) does not exist;" in str(raised.value)


def test_the_table_and_this_runs_options(tmp_path, monkeypatch):
    root = _project(tmp_path, 'baseline-from = "requirements.txt"\ncontracts = "contracts"\n')
    (root / "more").mkdir()
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team\'s project
    found = project.load(Workspace.from_environment())
    assert found.own_contracts == (root / "contracts",) and found.builtin and found.golden == root / "golden"
    assert found.suite == ["--pyargs", "harness.builtin", str(root / "contracts")]
    options, rest = command_options.split(["--contracts", "more", "--no-builtin", "--jobs", "1"])
    assert rest == ["--jobs", "1"]
    for name, value in command_options.environment(options, root).items():
        monkeypatch.setenv(name, value)
    found = project.load(Workspace.from_environment())
    assert found.suite == [str(root / "contracts"), str(root / "more")]
    assert project.find_root(root / "contracts") == root


@pytest.mark.parametrize("value, mode", [
    ("true", BuiltinMode.JUDGE),  # tables written before "judge" and "report" existed
    ('"judge"', BuiltinMode.JUDGE),
    ('"report"', BuiltinMode.REPORT),
    ("false", BuiltinMode.OFF),
])
def test_the_builtin_key_says_what_the_builtin_contracts_count_for(tmp_path, monkeypatch, value, mode):
    root = _project(tmp_path, f'baseline-from = "requirements.txt"\ncontracts = "contracts"\nbuiltin = {value}\n')
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team\'s project
    found = project.load(Workspace.from_environment())
    assert found.builtin == mode
    assert any(a.startswith("harness.builtin") for a in found.suite) == (mode != BuiltinMode.OFF)
    assert ("harness.builtin" in found.suite) == (mode == BuiltinMode.JUDGE)  # the whole package: every family


def test_without_the_key_the_builtin_contracts_are_judged(tmp_path, monkeypatch):
    root = _project(tmp_path, 'baseline-from = "requirements.txt"\ncontracts = "contracts"\n')
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team\'s project
    assert project.load(Workspace.from_environment()).builtin == BuiltinMode.JUDGE


def test_this_checkout_judges_the_builtin_contracts(monkeypatch):
    monkeypatch.delenv(env_vars.PROJECT, raising=False)  # this checkout
    assert project.load(Workspace.from_environment()).builtin == BuiltinMode.JUDGE


@pytest.mark.parametrize("table_value, argv, mode", [
    ('"judge"', ["--builtin", "report"], BuiltinMode.REPORT),
    ('"report"', ["--builtin", "judge"], BuiltinMode.JUDGE),
    ('"report"', ["--no-builtin"], BuiltinMode.OFF),
    ("false", ["--builtin", "report"], BuiltinMode.REPORT),
    ('"report"', [], BuiltinMode.REPORT),
])
def test_builtin_on_the_command_line_overrides_the_table_for_one_run(tmp_path, monkeypatch, table_value, argv, mode):
    root = _project(tmp_path, f'baseline-from = "requirements.txt"\ncontracts = "contracts"\nbuiltin = {table_value}\n')
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team\'s project
    options, rest = command_options.split([*argv, "--jobs", "1"])
    assert rest == ["--jobs", "1"]
    for name, value in command_options.environment(options, root).items():
        monkeypatch.setenv(name, value)
    assert project.load(Workspace.from_environment()).builtin == mode


@pytest.mark.parametrize("argv", [["--builtin", "maybe"], ["--builtin", "report", "--no-builtin"], ["--builtin"]])
def test_a_bad_builtin_option_is_refused_with_the_choices(argv):
    with pytest.raises(HarnessError) as raised:
        command_options.split(argv)
    assert "--builtin takes judge, report or all" in str(raised.value)
    assert "not with --no-builtin" in str(raised.value)


def test_upgrade_usage_names_the_command_that_was_typed(monkeypatch, capsys, tmp_path):
    from harness.stack.commands import frame
    from harness.stack.commands import upgrade

    for is_checkout, prog in ((True, "usage: nox -s upgrade --"), (False, "usage: upgrade-harness upgrade ")):
        monkeypatch.setenv(env_vars.PROJECT, str(paths.SOURCE if is_checkout else tmp_path))
        with pytest.raises(frame.HelpShown):
            upgrade.parse_options(Workspace.from_environment(), ["--help"])
        usage = capsys.readouterr().out
        assert usage.startswith(prog), usage
        assert "--builtin {judge,report,all}" in usage


def test_init_writes_the_table_noxfile_and_guide(tmp_path, capsys):
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    _write(tmp_path / "pyproject.toml", '[project]\nname = "team"\n')
    _write(tmp_path / ".gitignore", "*.pyc")
    assert init.main([], tmp_path) == 0
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "team"\n\n[tool.upgrade-harness]\n')
    assert (tmp_path / "contracts" / "conftest.py").is_file() and (tmp_path / "noxfile.py").is_file()
    assert (tmp_path / ".gitignore").read_text() == "*.pyc\nreports/\n.nox/\n"
    table = project.read_toml(tmp_path / "pyproject.toml")["tool"]["upgrade-harness"]
    assert table["baseline-from"] == "requirements.txt" and table["contracts"] == ["contracts"]
    assert "upgrade-harness golden" in capsys.readouterr().out


def test_the_contracts_guide_leaves_a_team_every_family_name():
    """A team's family may take a built-in family's name and stays its own (harness.contract.families): the
    guide init writes no longer lists the built-in names as taken; each comment line within 120 characters."""
    comment = " ".join(line.lstrip("# ") for line in init.CONTRACTS_GUIDE.splitlines() if line.startswith("#"))
    assert "any name will do, a built-in family's too" in comment
    assert max(len(line) for line in init.CONTRACTS_GUIDE.splitlines()) <= 120


def test_init_changes_nothing_already_written(tmp_path, capsys):
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    _write(tmp_path / "noxfile.py", "# ours\n")
    assert init.main([], tmp_path) == 0
    assert (tmp_path / "noxfile.py").read_text() == "# ours\n"
    assert "left noxfile.py as it is" in capsys.readouterr().out
    before = (tmp_path / "pyproject.toml").read_text()
    with pytest.raises(HarnessError, match="already has a .tool.upgrade-harness. table; nothing was changed"):
        init.main([], tmp_path)
    assert (tmp_path / "pyproject.toml").read_text() == before


def test_init_says_which_file_could_not_give_a_baseline(tmp_path):
    _write(tmp_path / "requirements.txt", REQUIREMENTS.replace("optax==0.2.6", "optax>=0.2"))
    with pytest.raises(HarnessError, match="optax is a range") as raised:
        init.main([], tmp_path)
    assert "--baseline-from PATH" in str(raised.value) and not (tmp_path / "pyproject.toml").exists()


def test_the_command_outside_a_project_says_to_init(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["upgrade"]) == 2
    assert "run `upgrade-harness init` in your project's root first" in capsys.readouterr().err
    assert cli.main(["upgrad"]) == 2
    assert "unknown command 'upgrad'" in capsys.readouterr().err
    assert cli.main(["--help"]) == 0


def test_baseline_from_is_refused_in_this_checkout(monkeypatch):

    monkeypatch.setenv(env_vars.BASELINE_FROM, "/somewhere/requirements.txt")
    monkeypatch.delenv(env_vars.PROJECT, raising=False)  # this checkout
    with pytest.raises(HarnessError, match="--baseline-from is for your own project"):
        current.pins(Workspace.from_environment())


def test_a_lock_is_current_when_its_versions_are_the_same_releases(tmp_path):
    from harness.stack.pins import locks, matrix

    lock = _write(tmp_path / "baseline.txt", "numpy==2.0.0\n    # via jax\noptax==0.2.6\n")
    ws = Workspace.from_environment()
    locks.check_current(ws, matrix.Entry("baseline", {"numpy": "2.0", "optax": "0.2.6"}, ""), lock)
    with pytest.raises(HarnessError, match=r"optax==0.2.7 \(the lock has 0.2.6\); re-lock"):
        locks.check_current(ws, matrix.Entry("baseline", {"numpy": "2.0", "optax": "0.2.7"}, ""), lock)


@pytest.mark.parametrize("table, words", [
    ('baseline-from = "requirements.txt"\ngolden = []\n', "golden must be one path"),
    ('baseline-from = []\n', "baseline-from must be one path"),
])
def test_a_table_path_that_is_not_one_path_is_refused(tmp_path, monkeypatch, table, words):
    test_a_bad_table_is_refused_with_the_fix(tmp_path, monkeypatch, table, words)


def test_an_include_that_does_not_exist_is_named(tmp_path):
    path = _write(tmp_path / "requirements.txt", REQUIREMENTS + "-r missing.txt\n")
    with pytest.raises(HarnessError, match=r"requirements.txt:6: includes .*missing.txt, which does not exist"):
        pins_from.read(path)


def _project_pins(tmp_path, monkeypatch, requirements):
    from harness.stack.pins import project_pins

    root = _project(tmp_path, 'baseline-from = "requirements.txt"\ncontracts = ["contracts"]\n')
    (root / "requirements.txt").write_text(requirements)
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team\'s project
    return project_pins.load(Workspace.from_environment())


def test_the_default_candidate_moves_only_forward(tmp_path, monkeypatch):
    pins = _project_pins(tmp_path, monkeypatch, REQUIREMENTS)
    assert pins.candidate == dict(PINS, jax="0.12.0.1", jaxlib="0.12.0.1", optax="0.2.8")  # numpy, flax stay
    ahead = _project_pins(tmp_path, monkeypatch, REQUIREMENTS.replace("optax==0.2.6", "optax==0.2.9"))
    assert ahead.candidate["optax"] == "0.2.9" and ahead.candidate["jax"] == "0.12.0.1"


def test_a_one_run_baseline_is_resolved_for_the_run_not_written_over_the_lock(tmp_path, monkeypatch):
    from harness.stack.pins import matrix

    _project_pins(tmp_path, monkeypatch, REQUIREMENTS)
    assert current.entries(Workspace.from_environment())[matrix.BASELINE].locked
    other = _write(tmp_path / "other.txt", REQUIREMENTS.replace("optax==0.2.6", "optax==0.2.5"))
    monkeypatch.setenv(env_vars.BASELINE_FROM, str(other))
    baseline = current.entries(Workspace.from_environment())[matrix.BASELINE]
    assert baseline.pins["optax"] == "0.2.5" and not baseline.locked


def test_a_project_root_with_a_space_reaches_pytest_as_one_path(tmp_path, monkeypatch):
    import shlex

    from harness.stack.entry_side import entry

    root = _project(tmp_path / "ML projects", 'baseline-from = "requirements.txt"\ncontracts = ["contracts"]\n')
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team\'s project
    args = entry.suite_arguments(project.load(Workspace.from_environment()))
    value = args[args.index("-o") + 1].removeprefix("pythonpath=")
    assert shlex.split(value) == [str(root)]  # how pytest reads a `paths` setting


def test_a_baseline_unlike_the_tools_is_told_to_record_its_own_builtin_golden(tmp_path):
    from harness.stack.run import run_plan
    from harness.stack.pins import matrix

    recorded = run_plan.tool_versions()
    assert recorded["optax"] == "0.2.6"  # the tool's golden values come from its own baseline
    same = matrix.Entry("baseline", {k: recorded[k] for k in ("jax", "jaxlib", "optax", "flax", "numpy")}, "")
    assert run_plan.mismatch_note(same, tmp_path / "golden") is None
    older = matrix.Entry("baseline", {**same.pins, "optax": "0.2.5"}, "")
    note = run_plan.mismatch_note(older, tmp_path / "golden")
    assert "optax 0.2.5 (the tool's: 0.2.6)" in note and "upgrade-harness golden --record-builtin" in note
    (tmp_path / "golden").mkdir()
    (tmp_path / "golden" / "clipping.json").write_text("{}")  # the team recorded a copy of one family
    note = run_plan.mismatch_note(older, tmp_path / "golden")
    # The declared families (harness/builtin_families.py), less the team's copy and the timings-only family (no golden).
    shipped = sorted(set(families.BY_NAME) - {"clipping", "performance"})
    assert f"of {', '.join(shipped)} come with the tool" in note and "training" in shipped
    for name in shipped:
        (tmp_path / "golden" / f"{name}.json").write_text("{}")
    assert run_plan.mismatch_note(older, tmp_path / "golden") is None  # all its own now


def test_a_baseline_unlike_the_tools_reporting_the_builtin_contracts_is_told_how_they_are_judged(tmp_path):
    """Reported only, a built-in check the baseline fails is judged against its own values (issue 59): a copy of the
    golden values is what judges them against golden values again, not what a verdict needs."""
    from harness.stack.run import run_plan
    from harness.stack.pins import matrix

    recorded = run_plan.tool_versions()
    older = matrix.Entry("baseline", {**{k: recorded[k] for k in ("jax", "jaxlib", "flax", "numpy")}, "optax": "0.2.8"},
                         "")
    note = run_plan.mismatch_note(older, tmp_path / "golden", reported=True)
    assert "optax 0.2.8 (the tool's: 0.2.6)" in note
    assert "each one your baseline fails is judged against the baseline's own values on this host instead" in note
    assert "they will not hold" not in note and "upgrade-harness golden --record-builtin" in note


def test_the_upgrade_tells_the_verdict_the_projects_mode(tmp_path, monkeypatch):
    # The verdict is a typed call now (harness.verdict.judgement), told a mode, not a command line.
    from harness.stack.run import run_verdict

    monkeypatch.delenv(env_vars.PROJECT, raising=False)  # this checkout
    assert run_verdict.verdict_builtin(Workspace.from_environment()) == BuiltinMode.JUDGE  # this checkout, as ever
    root = _project(tmp_path, 'baseline-from = "requirements.txt"\ncontracts = "contracts"\nbuiltin = "report"\n')
    monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team\'s project
    assert run_verdict.verdict_builtin(Workspace.from_environment()) == BuiltinMode.REPORT
    monkeypatch.setenv(env_vars.BUILTIN, "judge")  # `--builtin judge` for this run
    assert run_verdict.verdict_builtin(Workspace.from_environment()) == BuiltinMode.JUDGE


def test_init_writes_valid_files_and_says_how_builtins_are_judged(tmp_path):
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    assert init.main(["--contracts", 'my "contracts"'], tmp_path) == 0
    for written in [tmp_path / "noxfile.py", *(tmp_path / 'my "contracts"').glob("*.py")]:
        compile(written.read_text(), str(written), "exec")  # a SyntaxError fails the test
    table = project.read_toml(tmp_path / "pyproject.toml")["tool"]["upgrade-harness"]
    assert table["contracts"] == ['my "contracts"'] and table["builtin"] == "report"
    other = tmp_path / "other"
    _write(other / "requirements.txt", REQUIREMENTS)
    assert init.main(["--no-builtin"], other) == 0
    assert project.read_toml(other / "pyproject.toml")["tool"]["upgrade-harness"]["builtin"] is False


@pytest.mark.parametrize("given, written", [("report", "report"), ("all", "all"), ("judge", "judge"), ("off", False)])
def test_init_writes_every_value_the_tables_builtin_takes(tmp_path, given, written):
    """The docs' table of `builtin`: report, all, judge, false; `init --builtin` writes each (off: false)."""
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    assert init.main(["--builtin", given], tmp_path) == 0
    table = project.read_toml(tmp_path / "pyproject.toml")["tool"]["upgrade-harness"]
    assert table["builtin"] == written
    project.at(tmp_path)  # the table it wrote is one the project reads (a bad value raises, naming it)


A_CONTRACT = "def test_needs_the_harness(check):\n    check.exact('x', 1, 1)\n"


def test_init_gives_an_existing_contracts_directory_the_hook_and_never_overwrites_a_conftest(tmp_path, capsys):
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    _write(tmp_path / "contracts" / "test_mine.py", A_CONTRACT)
    assert init.main([], tmp_path) == 0
    assert "def pytest_ignore_collect" in (tmp_path / "contracts" / "conftest.py").read_text()
    other = tmp_path / "other"
    _write(other / "requirements.txt", REQUIREMENTS)
    _write(other / "contracts" / "conftest.py", "# ours\n")
    capsys.readouterr()
    assert init.main([], other) == 0
    assert (other / "contracts" / "conftest.py").read_text() == "# ours\n"
    assert "left contracts/conftest.py as it is" in capsys.readouterr().out


CRLF_PYPROJECT = ('# the team\'s project\r\n[project]\r\nname = "team"  # our name\r\n\r\n'
                  '[tool.ruff]  # lint settings\r\nline-length = 100\r\n\r\n'
                  '[build-system]\r\nrequires = ["hatchling"]\r\n')


def test_init_keeps_a_crlf_pyproject_with_comments_as_written(tmp_path, capsys):
    """The team's file keeps its bytes, comments and CRLF line endings; what init adds is CRLF too,
    with the comments that explain each key, and a quote or a backslash in a path round-trips."""
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    (tmp_path / "pyproject.toml").write_bytes(CRLF_PYPROJECT.encode())
    (tmp_path / ".gitignore").write_bytes(b"*.pyc\r\n")
    contracts = 'team "contracts"\\v1'
    assert init.main(["--contracts", contracts], tmp_path) == 0
    written = (tmp_path / "pyproject.toml").read_bytes().decode()
    assert written.count("\n") == written.count("\r\n"), "a line ending other than CRLF was written"
    for line in CRLF_PYPROJECT.splitlines(keepends=True):
        assert line in written, f"the team's line {line!r} was lost"
    assert written.index("[project]") < written.index("[tool.ruff]") < written.index("[build-system]")
    assert "# golden values recorded from the baseline" in written and "# [tool.upgrade-harness.candidate]" in written
    data = project.read_toml(tmp_path / "pyproject.toml")
    table = data["tool"]["upgrade-harness"]
    assert table["contracts"] == [contracts] and table["baseline-from"] == "requirements.txt"
    assert data["tool"]["ruff"] == {"line-length": 100} and data["build-system"] == {"requires": ["hatchling"]}
    assert (tmp_path / contracts / "conftest.py").is_file()
    assert (tmp_path / ".gitignore").read_bytes() == b"*.pyc\r\nreports/\r\n.nox/\r\n"


def test_init_refuses_an_inline_tool_table_and_changes_nothing(tmp_path):
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    before = 'tool = { ruff = { line-length = 100 } }\n'
    _write(tmp_path / "pyproject.toml", before)
    with pytest.raises(HarnessError, match=r"`tool` is not a table .*add \[tool.upgrade-harness\] by hand"):
        init.main([], tmp_path)
    assert (tmp_path / "pyproject.toml").read_text() == before
    assert not (tmp_path / "contracts").exists() and not (tmp_path / "noxfile.py").exists()


def test_constraints_pin_what_a_requirement_leaves_open(tmp_path):
    _write(tmp_path / "constraints.txt", "jax==0.11.2\njaxlib==0.11.2\nnumpy==2.5.5\nscipy==1.0\n")
    path = _write(tmp_path / "requirements.txt", """\
        -c constraints.txt
        jax[cpu]
        jaxlib>=0.11
        optax==0.2.6
        flax==0.12.12
        """)
    assert pins_from.read(path) == PINS  # numpy: the constraint alone pins it, as pip installs it with jax
    _write(tmp_path / "constraints.txt", "jax==0.11.2\njaxlib==0.10.0\nnumpy==2.5.5\n")
    with pytest.raises(HarnessError, match=r"requirements.txt:3: jaxlib>=0.11 does not allow 0.10.0, which "
                                           r"constraints.txt:2 pins \(a constraint\); make them agree"):
        pins_from.read(path)
    _write(tmp_path / "constraints.txt", "jax>=0.11\njaxlib==0.11.2\nnumpy==2.5.5\n")
    with pytest.raises(HarnessError, match=r"constraints.txt:1: jax is a range \(>=0.11\)"):
        pins_from.read(path)
    _write(tmp_path / "constraints.txt", "--extra-index-url https://example.invalid/simple\njax==0.11.2\n"
                                         "jaxlib==0.11.2\nnumpy==2.5.5\n")
    with pytest.raises(HarnessError, match=r"constraints.txt:1: '--extra-index-url https://example.invalid/simple'"):
        pins_from.read(path)
    (tmp_path / "constraints.txt").unlink()
    with pytest.raises(HarnessError, match=r"requirements.txt:1: includes .*constraints.txt, which does not exist"):
        pins_from.read(path)


@pytest.mark.parametrize("line, reason", [
    ("-e .", "an editable install"),
    ("--find-links=./wheels", "another package index or a directory of files"),
    ("-i https://example.invalid/simple", "another package index"),
    ("mylib @ https://example.invalid/mylib-1.0.whl", "a direct URL"),
    ("../shared/mylib", "a local path or a URL"),
])
def test_lines_outside_the_index_are_refused_unless_the_table_ignores_them(tmp_path, capsys, line, reason):
    path = _write(tmp_path / "requirements.txt", REQUIREMENTS + line + "\n")
    where = f"requirements.txt:{len(PINS) + 1}: {line!r}: {reason}"
    with pytest.raises(HarnessError, match=re.escape(where)):
        pins_from.read(path)
    with pytest.raises(HarnessError, match=re.escape(where)) as refused:  # init says it before writing anything
        init.main([], tmp_path)
    assert "init --pins-outside-index ignore" in str(refused.value) and not (tmp_path / "pyproject.toml").exists()
    assert init.main(["--pins-outside-index", "ignore"], tmp_path) == 0
    table = project.read_toml(tmp_path / "pyproject.toml")["tool"]["upgrade-harness"]
    assert table["pins-outside-index"] == "ignore"
    assert pins_from.read(path, table["pins-outside-index"]) == PINS


def test_the_harness_packages_from_a_url_are_refused_even_when_ignored(tmp_path):
    path = _write(tmp_path / "requirements.txt", REQUIREMENTS.replace(
        "jaxlib==0.11.2", "jaxlib @ https://example.invalid/jaxlib-0.11.2+cuda-cp312-linux.whl"))
    for mode in ("refuse", "ignore"):
        with pytest.raises(HarnessError, match=r"requirements.txt:2: jaxlib comes from https://example.invalid/\S+, "
                                               r"not the package index.*Pin the version instead \(jaxlib==X.Y.Z\)"):
            pins_from.read(path, mode)


def test_the_table_takes_pins_outside_index_ignore_and_no_other_value(tmp_path, monkeypatch):
    _write(tmp_path / "requirements.txt", REQUIREMENTS + "-e .\n")
    (tmp_path / "contracts").mkdir()
    _write(tmp_path / "pyproject.toml", '[tool.upgrade-harness]\nbaseline-from = "requirements.txt"\n'
                                        'contracts = ["contracts"]\npins-outside-index = "ignore"\n')
    monkeypatch.setenv(env_vars.PROJECT, str(tmp_path))  # a team\'s project
    from harness.stack.pins import project_pins
    assert project_pins.load(Workspace.from_environment()).baseline == PINS
    _write(tmp_path / "pyproject.toml", '[tool.upgrade-harness]\nbaseline-from = "requirements.txt"\n'
                                        'contracts = ["contracts"]\npins-outside-index = "yes"\n')
    with pytest.raises(HarnessError, match=r'pins-outside-index must be "refuse" \(the default\) or "ignore" '
                                           r"\(not 'yes'\)"):
        project_pins.load(Workspace.from_environment())
    _write(tmp_path / "pyproject.toml", '[tool.upgrade-harness]\nbaseline-from = "requirements.txt"\n'
                                        'contracts = ["contracts"]\n')
    with pytest.raises(HarnessError, match=r"requirements.txt:6: '-e .': an editable install"):
        project_pins.load(Workspace.from_environment())


@pytest.mark.parametrize("where", ["root", "pythonpath", "module"])
def test_a_team_package_named_harness_is_found_before_anything_runs(tmp_path, monkeypatch, capsys, where):
    """The team's own `harness` (at the root, where the contract run starts, or on its pythonpath) would
    hide the tool's package: `upgrade-harness` refuses before nox starts, naming it and the fix."""
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    assert init.main([], tmp_path) == 0
    before = (tmp_path / "pyproject.toml").read_text()
    if where == "pythonpath":
        (tmp_path / "pyproject.toml").write_text(before.replace('pythonpath = ["."]', 'pythonpath = ["src"]'))
    own = {"root": tmp_path / "harness", "pythonpath": tmp_path / "src" / "harness",
           "module": tmp_path / "harness.py"}[where]
    if where == "module":
        own.write_text("TEAM = True\n")
    else:
        _write(own / "__init__.py", "TEAM = True\n")
    (tmp_path / "harness_data").mkdir()  # another name is fine
    monkeypatch.chdir(tmp_path)
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert f"{own} is a package named `harness`, the name of upgrade-harness's own package" in err, err
    assert ("pythonpath puts" in err) == (where == "pythonpath") and "Rename yours" in err
    assert "nox >" not in err  # refused before nox started
    monkeypatch.setenv(env_vars.PROJECT, str(tmp_path))  # a team\'s project
    with pytest.raises(HarnessError, match="named `harness`"):  # the sessions refuse too (a team's own noxfile)
        project.load(Workspace.from_environment())


def test_list_shows_the_teams_entries_with_their_pins(tmp_path, monkeypatch, capsys):
    """Found: `upgrade-harness list` printed this checkout's sessions file (its docstring of `nox -s` commands,
    the sensitivity session, "Sessions defined in .../harness/stack/sessions.py"), not the team's entries."""
    _write(tmp_path / "requirements.txt", REQUIREMENTS.replace("optax==0.2.6", "optax==0.2.5"))
    assert init.main([], tmp_path) == 0
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "optax==0.2.5" in rows["baseline"] and "jax==0.11.2" in rows["baseline"], out
    assert "candidate" in rows and "sensitivity" not in out and "nox -s" not in out and "checkout" not in out
    assert "upgrade-harness run ENTRY" in out


def test_a_namespace_directory_named_harness_and_this_checkout_are_not_clashes(tmp_path):
    from harness.stack import name_clash
    (tmp_path / "harness").mkdir()  # no __init__.py: the tool's regular package wins over it
    assert name_clash.shadowing(tmp_path) is None
    assert name_clash.shadowing(name_clash.paths.PACKAGE.parent) is None  # the tool's own checkout


PYPI_SOURCE = '{ registry = "https://pypi.org/simple" }'


def _uv_lock(sources: dict[str, str]) -> str:
    return "version = 1\n" + "".join(
        f'\n[[package]]\nname = "{name}"\nversion = "{version}"\nsource = {sources.get(name, PYPI_SOURCE)}\n'
        for name, version in PINS.items())


def test_a_uv_lock_from_another_index_or_a_url_is_refused(tmp_path):
    path = tmp_path / "uv.lock"
    path.write_text(_uv_lock({}))
    assert pins_from.read(path) == PINS
    path.write_text(_uv_lock({"jaxlib": '{ registry = "https://example.invalid/simple" }'}))
    line = path.read_text().splitlines().index('source = { registry = "https://example.invalid/simple" }') + 1
    with pytest.raises(HarnessError, match=rf"uv.lock:{line}: 'jaxlib 0.11.2': another package index "
                                           r"\(https://example.invalid/simple\)"):
        pins_from.read(path)
    assert pins_from.read(path, "ignore") == PINS
    path.write_text(_uv_lock({"optax": '{ path = "../optax" }'}))
    for mode in ("refuse", "ignore"):
        with pytest.raises(HarnessError, match=r"optax is locked from \{'path': '../optax'\}, not the package index"):
            pins_from.read(path, mode)


def test_a_bad_project_option_shows_the_usage_of_the_command_typed(tmp_path, monkeypatch, capsys):
    """`upgrade-harness upgrade --builtin judg`: argparse's usage line names the command, then one line
    of ours with what the options take; nothing runs (exit 2)."""
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    assert init.main([], tmp_path) == 0
    monkeypatch.chdir(tmp_path)
    assert cli.main(["upgrade", "--builtin", "judg"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: upgrade-harness upgrade [--contracts DIR]"), err
    assert "invalid choice: 'judg'" in err and "upgrade-harness upgrade: bad arguments" in err


def test_run_with_a_name_that_is_no_entry_lists_the_entries(tmp_path, monkeypatch, capsys):
    """`upgrade-harness run candidat`: nox would say only "Sessions not found"; nothing starts (exit 2)."""
    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    assert init.main([], tmp_path) == 0
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "candidat"]) == 2
    err = capsys.readouterr().err
    assert "upgrade-harness run: there is no entry 'candidat'; the entries are baseline, candidate, " in err, err
    assert not (tmp_path / ".nox").exists()


def test_run_told_a_job_is_not_checked_against_the_tables_entries(tmp_path, monkeypatch):
    """A CI row runs `upgrade-harness run "$ENTRY"` told its job (HARNESS_JOB): the session registers the
    job's one entry, which may be an attribution entry the table's default candidate has not (numpy-only)."""
    import subprocess

    _write(tmp_path / "requirements.txt", REQUIREMENTS)
    assert init.main([], tmp_path) == 0
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(env_vars.JOB, str(tmp_path / "jobs" / "numpy-only.json"))
    ran = []
    monkeypatch.setattr(cli.subprocess, "run", lambda cmd, **kw: ran.append(cmd) or subprocess.CompletedProcess(cmd, 0))
    assert cli.main(["run", "numpy-only"]) == 0
    assert ran and ran[0][ran[0].index("-s") + 1] == "numpy-only"


def test_a_contracts_folder_without_a_test_module_holds_no_contracts(tmp_path):
    """`init` writes contracts/ with its conftest only: recording the built-in values there (`golden
    --record-builtin`) ran the team's (no) contracts first and stopped on pytest's "no tests ran" (exit 5),
    said as "your contracts do not all pass on the baseline" (measured: a team on jax 0.7.1)."""
    folder = tmp_path / "contracts"
    folder.mkdir()
    (folder / "conftest.py").write_text("")
    found = project.Project(root=tmp_path, own_contracts=(folder,), golden=tmp_path / "golden",
                            locks=tmp_path / "locks", builtin=BuiltinMode.REPORT, baseline_from=None)
    assert found.own_contracts and not found.has_own_tests
    (folder / "nested").mkdir()
    (folder / "nested" / "test_losses.py").write_text("def test_x(check):\n    pass\n")
    assert found.has_own_tests
