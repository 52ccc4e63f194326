"""`upgrade-harness init --ci github`: the team's workflows pass the same linters as this project's, use its
pinned actions and minimal permissions, install one pinned tool, trigger on the table's own paths, and are
never written over an existing file without --force."""

import json
import re
from pathlib import Path

import pytest
import yaml

from harness.errors import HarnessError
from harness.stack.ci import github_cache, github_jobs, github_workflows, tool_source
from harness.stack.commands import init

ROOT = Path(__file__).resolve().parents[4]
PINS = "jax==0.11.2\njaxlib==0.11.2\noptax==0.2.6\nflax==0.12.12\nnumpy==2.5.5\n"
TOOL = "upgrade-harness @ git+https://github.com/example/upgrade-harness@" + "0123456789abcdef" * 2 + "01234567"
WRITTEN = [github_workflows.PR_FILE, github_workflows.NIGHTLY_FILE]


def team(root: Path, *argv: str, pins_file: str = "requirements.txt") -> Path:
    """A team's project made by `init --ci github` (the tool's source given: this checkout is not a URL)."""
    (root / pins_file).parent.mkdir(parents=True, exist_ok=True)
    (root / pins_file).write_text(PINS)
    extra = ["--baseline-from", pins_file] if pins_file != "requirements.txt" else []
    assert init.main(["--ci", "github", "--tool-from", TOOL, *extra, *argv], root) == 0
    return root


def _load(root: Path, path: Path) -> dict:
    return yaml.safe_load((root / path).read_text())


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return team(tmp_path_factory.mktemp("team"))


def _uses(workflow: dict) -> list[str]:
    return [s["uses"] for job in workflow["jobs"].values() for s in job["steps"] if "uses" in s]


def _pinned_lines(text: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"uses: (\S+@[0-9a-f]{40} # v[\d.]+)", text)}


def test_every_action_is_this_projects_own_pin_of_it(project):
    ours = set().union(*(_pinned_lines(p.read_text()) for p in (ROOT / ".github" / "workflows").glob("*.yml")))
    assert set(github_jobs.ACTIONS) <= ours  # the template's pins are the ones this project runs
    for path in WRITTEN:
        written = _pinned_lines((project / path).read_text())
        assert written and written <= ours, path
        assert all(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u) for u in _uses(_load(project, path)))


def test_permissions_are_minimal_and_no_checkout_keeps_credentials(project):
    pr, nightly = (_load(project, p) for p in WRITTEN)
    assert pr["permissions"] == nightly["permissions"] == {"contents": "read"}
    writers = {name: job["permissions"] for name, job in pr["jobs"].items() if "permissions" in job}
    assert writers == {"judge": {"contents": "read", "pull-requests": "write"}}  # the sticky comment only
    assert not any("permissions" in job for job in nightly["jobs"].values())
    for workflow in (pr, nightly):
        checkouts = [s for job in workflow["jobs"].values() for s in job["steps"]
                     if s.get("uses", "").startswith("actions/checkout@")]
        assert len(checkouts) == len(workflow["jobs"]) and all(
            s["with"]["persist-credentials"] is False for s in checkouts)


def test_every_job_installs_the_pinned_tool_and_the_file_says_where_it_comes_from(project):
    for path in WRITTEN:
        text = (project / path).read_text()
        workflow = yaml.safe_load(text)
        assert workflow["env"] == {"UPGRADE_HARNESS_FROM": TOOL}
        assert f"# The tool: {TOOL}\n" in text and "given with --tool-from" in text
        for name, job in workflow["jobs"].items():
            runs = [s.get("run", "") for s in job["steps"]]
            install = next(i for i, r in enumerate(runs) if "pip\" install" in r)
            assert runs[install].endswith('install "$UPGRADE_HARNESS_FROM"')  # from env, never spliced into a script
            used = [i for i, r in enumerate(runs) if "bin/upgrade-harness" in r]
            assert used and min(used) > install, name
            assert TOOL not in "".join(runs)








def test_every_row_restores_the_report_cache_before_it_runs_and_saves_it_after(project):
    """A row whose report's inputs did not change reuses it (harness.stack.run.report_cache): the cache restored
    from the newest this row's jobs saved, one key series per workflow, saved under this run's own key."""
    for path, prefix in zip(WRITTEN, (github_cache.PULL_REQUEST_CACHE, github_cache.NIGHTLY_CACHE)):
        workflow = _load(project, path)
        for job in ("entry", "followup"):
            steps = workflow["jobs"][job]["steps"]
            (restore,) = [s for s in steps if s.get("uses", "").startswith("actions/cache/restore@")]
            (save,) = [s for s in steps if s.get("uses", "").startswith("actions/cache/save@")]
            key = f"{prefix}-${{{{ matrix.report }}}}-${{{{ github.run_id }}}}-${{{{ github.run_attempt }}}}"
            assert restore["with"] == {"path": "reports/.cache", "key": key,
                                       "restore-keys": f"{prefix}-${{{{ matrix.report }}}}-"}
            assert save["with"] == {"path": "reports/.cache", "key": key}
            runs = [i for i, s in enumerate(steps) if "upgrade-harness\" run" in s.get("run", "")]
            assert len(runs) == 2 and steps.index(restore) < runs[0] < runs[1] < steps.index(save)






def test_a_refused_workflow_leaves_a_new_project_untouched(tmp_path):
    (tmp_path / "requirements.txt").write_text(PINS)
    (tmp_path / WRITTEN[0]).parent.mkdir(parents=True)
    (tmp_path / WRITTEN[0]).write_text("name: ours\n")
    with pytest.raises(HarnessError, match="upgrade-harness-pr.yml already exists.*--force"):
        init.main(["--ci", "github", "--tool-from", TOOL], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".github", "requirements.txt"]


@pytest.mark.parametrize("spec, words", [
    ("upgrade-harness", "not one version"),
    ("upgrade-harness>=0.1", "not one version"),
    ("other-tool==1.0", "names other-tool"),
    ("upgrade-harness @@ nope", "not a pip requirement"),
])
def test_a_tool_source_that_is_not_one_version_is_refused(tmp_path, spec, words):
    (tmp_path / "requirements.txt").write_text(PINS)
    with pytest.raises(HarnessError, match=words):
        init.main(["--ci", "github", "--tool-from", spec], tmp_path)
    assert not (tmp_path / ".github").exists() and not (tmp_path / "pyproject.toml").exists()


class _Dist:
    """An installed distribution as importlib.metadata shows it: its version and direct_url.json."""

    def __init__(self, direct_url: dict | None, version: str = "0.1.0"):
        self.version, self._text = version, json.dumps(direct_url) if direct_url else None

    def read_text(self, name):
        return self._text if name == "direct_url.json" else None


@pytest.mark.parametrize("direct_url, expected", [
    ({"url": "https://github.com/example/upgrade-harness", "vcs_info": {"vcs": "git", "commit_id": "c0ffee" * 6 + "c0ff"}},
     "upgrade-harness @ git+https://github.com/example/upgrade-harness@" + "c0ffee" * 6 + "c0ff"),
    ({"url": "https://example.org/upgrade_harness-0.1.0-py3-none-any.whl", "archive_info": {}},
     "upgrade-harness @ https://example.org/upgrade_harness-0.1.0-py3-none-any.whl"),
    (None, "upgrade-harness==0.1.0"),
])
def test_without_tool_from_ci_installs_what_the_running_tool_was_installed_from(monkeypatch, direct_url, expected):
    monkeypatch.setattr(tool_source, "_distribution", lambda: _Dist(direct_url))
    found = tool_source.running()
    assert found.requirement == expected
    assert tool_source.given(found.requirement).requirement == expected  # what --tool-from would accept


@pytest.mark.parametrize("direct_url", [{"url": "file:///home/me/upgrade-harness", "dir_info": {"editable": True}},
                                        {"url": "file:///tmp/upgrade_harness-0.1.0-py3-none-any.whl",
                                         "archive_info": {}}])
def test_a_tool_installed_from_a_local_path_needs_tool_from(monkeypatch, tmp_path, direct_url):
    monkeypatch.setattr(tool_source, "_distribution", lambda: _Dist(direct_url))
    (tmp_path / "requirements.txt").write_text(PINS)
    with pytest.raises(HarnessError, match="which a CI runner cannot reach; say what CI installs .* with --tool-from"):
        init.main(["--ci", "github"], tmp_path)
    assert not (tmp_path / "pyproject.toml").exists()
