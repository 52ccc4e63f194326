"""The upgrade session's steps: bad input becomes one clear message and exit status 2.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_runner.py."""


from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.pins import current, locks
from harness.stack.run import run_directory
from harness.stack import paths


def _checkout(reports):
    """This checkout, its reports in `reports`."""
    return Workspace.of(paths.SOURCE, reports)


def test_bad_upgrade_arguments_exit_2(capsys, tmp_path):
    ws = _checkout(tmp_path)
    assert upgrade.upgrade(ws, ["--candidate", "jax>=1"]) == 2
    assert "cannot read 'jax>=1'" in capsys.readouterr().err
    assert upgrade.upgrade(ws, ["--frobnicate"]) == 2
    assert upgrade.upgrade(ws, ["--help"]) == 0


def test_previous_reports_are_kept_not_overwritten(tmp_path):
    (tmp_path / "baseline.json").write_text("old")
    (tmp_path / "upgrade-summary.md").write_text("old verdict")
    kept = run_directory.keep_previous(tmp_path, ["baseline"])
    assert sorted(kept) == ["baseline.json", "upgrade-summary.md"]
    assert (tmp_path / "previous" / "baseline.json").read_text() == "old"
    assert not (tmp_path / "baseline.json").exists()


def test_harness_requirements_come_from_pyproject():
    reqs = locks.harness_requirements()
    assert {"pytest", "hypothesis", "jsonschema"} <= set(reqs)
    baseline = current.entries(Workspace.from_environment())["baseline"]
    assert "numpy==" + baseline.pins["numpy"] in locks.lock_input(baseline)


def test_upgrade_without_python_312_says_what_to_install(monkeypatch, capsys, tmp_path):
    from harness.stack.environments import interpreters

    interpreters.find_python.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "none"))
    try:
        assert upgrade.upgrade(_checkout(tmp_path), []) == 2
    finally:
        interpreters.find_python.cache_clear()
    assert "pyenv install 3.12" in capsys.readouterr().err
