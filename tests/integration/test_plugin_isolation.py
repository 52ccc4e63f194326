"""The plugin is a pytest11 entry point, loaded by every pytest process where the tool is installed: a
team's own runs keep their imports and their Hypothesis profiles; a harness run uses its own profiles.

Each run is a pytest subprocess in a fresh project without a conftest loading the plugin, so the plugin
comes in as the installed entry point, as it does for a team."""

import json

import pytest

# A team's conftest with its own Hypothesis profiles, under names the harness's used to take.
TEAM_CONFTEST = '''
from hypothesis import settings

settings.register_profile("dev", max_examples=3)
settings.register_profile("fast", max_examples=4)
'''

# What the test sees of the process: a JSON line on stdout.
PROBE = '''
import json
import sys

HEAVY = ("numpy", "ml_dtypes", "jax")


def test_probe(request):
    loaded = sorted(m for m in HEAVY if m in sys.modules)  # before this test imports anything itself
    from hypothesis import settings

    def examples(name):
        try:
            return settings.get_profile(name).max_examples
        except Exception:
            return None

    seen = {
        "plugin": request.config.pluginmanager.has_plugin("harness.contract.plugin"),
        "heavy": loaded,
        "profiles": {name: examples(name) for name in ("ci", "dev", "fast", "nightly", "upgrade-harness-ci")},
        "running": settings().max_examples,
    }
    print("\\nPROBE " + json.dumps(seen))
'''


@pytest.fixture
def team(pytester, monkeypatch):
    """A team's project (its own conftest and profiles, no harness configuration); run(*args) -> (result,
    what the probe saw)."""
    for name in ("HARNESS_REPORT", "HARNESS_PROFILE", "HARNESS_GOLDEN_DIR", "HARNESS_ONLY", "CI",
                 "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(TEAM_CONFTEST)
    pytester.makepyfile(test_team=PROBE)

    def run(*args):
        result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", *args)
        lines = [line for line in result.stdout.lines if line.startswith("PROBE ")]
        return result, (json.loads(lines[0].removeprefix("PROBE ")) if lines else None)

    return run


def test_a_teams_own_run_imports_nothing_heavy_and_keeps_every_hypothesis_profile(team):
    result, seen = team()
    assert result.ret == 0, result.stdout.str()
    assert seen["plugin"]  # loaded, as the entry point: what follows is not true for want of the plugin
    assert seen["heavy"] == []
    assert seen["profiles"] == {"ci": 100, "dev": 3, "fast": 4, "nightly": None, "upgrade-harness-ci": None}


def test_a_teams_own_run_keeps_hypothesis_profile_meaning_hypothesiss_own(team):
    result, seen = team("--hypothesis-profile=fast")
    assert result.ret == 0, result.stdout.str()
    assert seen["running"] == 4


def test_a_harness_run_uses_the_harness_profiles_and_touches_no_other(team, pytester):
    result, seen = team("--harness-report=report.json", "--harness-profile=ci")
    assert result.ret == 0, result.stdout.str()
    assert seen["running"] == 60  # the harness's ci profile runs...
    assert seen["profiles"] == {"ci": 100, "dev": 3, "fast": 4, "nightly": None, "upgrade-harness-ci": 60}
    doc = json.loads((pytester.path / "report.json").read_text())
    hypothesis = doc["hypothesis"]  # ...and the report names it as before
    assert (hypothesis["profile"], hypothesis["max_examples"], hypothesis["derandomize"]) == ("ci", 60, True)
    assert hypothesis["seed"] is None


def test_harness_profile_comes_from_the_environment_too(team, pytester, monkeypatch):
    monkeypatch.setenv("HARNESS_PROFILE", "nightly")
    result, seen = team("--harness-report=report.json")
    assert result.ret == 0, result.stdout.str()
    assert seen["running"] == 600 and seen["profiles"]["dev"] == 3 and seen["profiles"]["ci"] == 100
    assert json.loads((pytester.path / "report.json").read_text())["hypothesis"]["profile"] == "nightly"


def test_a_harness_run_refuses_hypothesis_profile_and_names_the_harness_option(team):
    result, seen = team("--harness-report=report.json", "--hypothesis-profile=fast")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and seen is None
    result.stderr.fnmatch_lines(["*--hypothesis-profile fast loads Hypothesis's own profile*--harness-profile*"])


def test_an_unknown_harness_profile_names_the_choices(team):
    result, _ = team("--harness-profile=fast")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'fast' is not one of the harness's: choose one of dev, ci, nightly*"])


def test_the_check_fixture_works_in_a_teams_own_run(team, pytester):
    pytester.makepyfile(test_contract='''
import sys


def test_contract(check):
    check.exact("two", 1 + 1, 2)
    assert "numpy" in sys.modules  # the harness's side came in with the fixture


def test_nothing(check):
    pass
''')
    result, _ = team("test_contract.py")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_nothing*compared nothing*"])


def test_the_builtin_contracts_run_without_the_projects_own_test_conftests(tmp_path):
    """An entry's pytest names the built-in contracts by module (--pyargs), so pytest anchored its conftest
    search at the working directory and loaded its tests*/conftest.py: this checkout's tests/conftest.py (its
    fixtures, an autouse monkeypatch) ran inside every contract run, and would be a team's own. Without
    contract directories of the project's own, the suite loads no conftest."""
    import subprocess
    import sys

    from harness.stack import paths, project
    from harness.stack.entry_side import entry
    from harness.stack.workspace import Workspace

    found = project.load(Workspace.of(paths.SOURCE, tmp_path))
    assert not found.own_contracts
    args = [*entry.suite_arguments(found, contracts=False), "--pyargs", "harness.builtin.test_schedules_defaults",
            "--collect-only", "--trace-config"]
    done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=paths.SOURCE, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PLUGIN registered: <module 'harness.contract.plugin'" in done.stdout  # the trace lists plugins
    assert "conftest" not in done.stdout


def test_the_host_side_compiles_under_the_runners_python():
    """The runner (nox, the sessions, the host side) runs under the machine's python3 (3.11 here), the contract
    side under the entries' 3.12: a 3.12-only construct on the host (a backslash inside an f-string's
    expression) stops every command before it starts."""
    import os
    import shutil
    import subprocess

    from harness.stack import paths

    def older(python) -> bool:
        asked = [python, "-c", "import sys; print(sys.version_info[:2] < (3, 12))"]
        return bool(python) and subprocess.run(asked, capture_output=True, text=True).stdout.strip() == "True"

    # The runner the README's commands make (.venv), else a python3 on PATH (this session's own bin comes first).
    found = [str(paths.SOURCE / ".venv" / "bin" / "python")] + [
        shutil.which("python3", path=d) for d in os.environ.get("PATH", "").split(os.pathsep)]
    runner = next((p for p in found if p and os.path.exists(p) and older(p)), None)
    if runner is None:
        pytest.skip("no Python older than 3.12 to run the host side under")
    host = [p for p in sorted(paths.PACKAGE.rglob("*.py"))
            if not {"contract", "builtin"} & set(p.relative_to(paths.PACKAGE).parts[:1])]
    code = "import sys\nfor f in sys.argv[1:]:\n    compile(open(f).read(), f, 'exec')\n"
    done = subprocess.run([runner, "-c", code, *map(str, host)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_host_side_imports_under_the_runners_python():
    """Compiling is not enough: a call that 3.12 accepts and 3.11 refuses at import (make_dataclass(module=...))
    stopped the noxfile loading in the runner. Every host module is imported by the runner the README's
    commands make (.venv: nox and the host's libraries), as `nox -s upgrade` would reach it."""
    import subprocess

    from harness.stack import paths

    runner = paths.SOURCE / ".venv" / "bin" / "python"
    if not runner.exists():
        pytest.skip("no runner environment (.venv) in this checkout: the README's commands make it")
    code = ("import importlib, pkgutil, sys\n"
            "if sys.version_info >= (3, 12): print('the runner is', sys.version); sys.exit(3)\n"
            "import harness.stack, harness.verdict, harness.model, harness.coverage\n"
            "for pkg in (harness.stack, harness.verdict, harness.model, harness.coverage):\n"
            "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
            "        try:\n"
            "            importlib.import_module(m.name)\n"
            "        except ModuleNotFoundError as exc:\n"
            "            if exc.name not in ('cosmic_ray', 'aiohttp'):  # the sensitivity session's environment's\n"
            "                raise\n")
    done = subprocess.run([str(runner), "-c", code], cwd=paths.SOURCE, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(paths.SOURCE)})
    if done.returncode == 3:
        pytest.skip(done.stdout.strip() + ": no older Python to import the host side under")
    assert done.returncode == 0, done.stderr[-2000:]
