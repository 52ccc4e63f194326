"""The GitHub workflows pass maintained linters, fan out over exactly the matrix, and their shell steps
do what the reviewer asked: verdict in the job summary always, the PR comment only where the token may
write and with its links last, the failing step last, the nightly issue closed on a clean night."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.stack import matrix

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
DEPENDABOT = ROOT / ".github" / "dependabot.yml"
RUN_URL_EXPR = "${{ github.server_url }}/${{ github.repository }}/actions/runs/${{ github.run_id }}"
RUN_URL = "https://github.example/o/r/actions/runs/42"
SUMMARY = "reports/upgrade-summary.md"
HTML = "reports/upgrade-report.html"
FAKE_GH = """#!/bin/sh
printf '%s\\n' "$*" >> "$GH_LOG"
case "$1 $2" in "issue list"|"api repos/"*) if [ -n "$GH_FOUND" ]; then echo "$GH_FOUND"; fi;; esac
exit 0
"""


def _tool(name):
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.fail(f"{name} is not installed here; `nox -s tests` installs it from locks/tests.txt")
    return path


def _load(name):
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())


def _steps(workflow, job):
    return _load(workflow)["jobs"][job]["steps"]


def _step(steps, needle):
    """The one step whose `run` script contains needle (the tests name steps by what they do)."""
    found = [s for s in steps if needle in s.get("run", "")]
    assert len(found) == 1, f"{len(found)} steps run {needle!r}"
    return found[0]


def _upload_of(steps, path):
    found = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")
             and path in s["with"]["path"].split()]
    assert len(found) == 1, f"{len(found)} uploads of {path}"
    return found[0]


def _run_step(step, tmp_path, env, found=""):
    """Runs a step's script as GitHub does (bash -eo pipefail) with a `gh` that logs its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    full = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GH_LOG": str(tmp_path / "gh.log"),
            "GH_FOUND": found, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), **env}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                          cwd=tmp_path, env=full, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    log = tmp_path / "gh.log"
    return log.read_text().splitlines() if log.exists() else []


def test_there_are_two_workflows_and_a_dependabot_config():
    assert [p.name for p in WORKFLOWS] == ["nightly.yml", "upgrade-pr.yml"]
    assert DEPENDABOT.is_file()


def test_workflows_match_the_github_schema():
    done = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                           *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_dependabot_config_matches_its_schema():
    done = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.dependabot", str(DEPENDABOT)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflows_and_dependabot_pass_zizmor_pedantic():
    # --strict-collection: a file zizmor cannot parse fails instead of being skipped with a warning
    done = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--pedantic", "--strict-collection",
                           *map(str, WORKFLOWS), str(DEPENDABOT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_dependabot_keeps_the_pinned_actions_current_in_one_weekly_pull_request():
    (update,) = yaml.safe_load(DEPENDABOT.read_text())["updates"]
    assert update["package-ecosystem"] == "github-actions" and update["directory"] == "/"
    assert update["schedule"]["interval"] == "weekly"
    assert [group["patterns"] for group in update["groups"].values()] == [["*"]]


@pytest.mark.parametrize("workflow", [p.name for p in WORKFLOWS])
def test_every_action_is_pinned_to_a_commit(workflow):
    uses = [s["uses"] for job in _load(workflow)["jobs"].values() for s in job["steps"] if "uses" in s]
    assert uses, "no actions found: the test reads the wrong structure"
    unpinned = [u for u in uses if not re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u)]
    assert unpinned == []


@pytest.mark.parametrize("workflow", [p.name for p in WORKFLOWS])
def test_runner_tools_go_into_a_venv_never_the_system_interpreter(workflow):
    for name, job in _load(workflow)["jobs"].items():
        runs = [s.get("run", "") for s in job["steps"]]
        assert not any(re.search(r"\bpip3? install|python3? -m (pip|nox)\b", r.replace(".venv/bin/pip install", ""))
                       for r in runs), f"{name}: installs or runs on the system interpreter"
        assert runs.count("python -m venv .venv && .venv/bin/pip install -r locks/runner.txt") == 1, name
        created = next(i for i, r in enumerate(runs) if "python -m venv .venv" in r)
        assert all(i > created for i, r in enumerate(runs) if ".venv/bin/" in r and i != created), name


def test_nightly_fans_out_over_the_tagged_nox_sessions():
    listed = subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-l", "--json", "-t", "matrix"],
                            capture_output=True, text=True, cwd=ROOT, check=True)
    sessions = [s["session"] for s in json.loads(listed.stdout)]
    assert sessions == list(matrix.entries())
    jobs = _load("nightly.yml")["jobs"]
    _step(jobs["entries"]["steps"], ".venv/bin/nox -l --json -t matrix")
    assert jobs["entry"]["strategy"]["matrix"]["entry"] == "${{ fromJSON(needs.entries.outputs.entries) }}"
    assert jobs["verdict"]["needs"] == ["entries", "entry"]


def test_pr_workflow_runs_on_pin_changes_without_pull_request_target():
    workflow = _load("upgrade-pr.yml")
    triggers = workflow.get("on", workflow.get(True))  # PyYAML reads the key `on` as True
    assert list(triggers) == ["pull_request"]
    assert {"matrix.toml", "harness/stack/matrix.py", "locks/**", "golden/**"} <= set(triggers["pull_request"]["paths"])
    assert workflow["jobs"]["upgrade"]["env"]["RUN_URL"] == RUN_URL_EXPR


def test_pr_verdict_goes_to_the_job_summary_always(tmp_path):
    steps = _steps("upgrade-pr.yml", "upgrade")
    step = _step(steps, "$GITHUB_STEP_SUMMARY")
    assert step["if"] == "always()"
    assert step["env"]["HTML_ID"] == f"${{{{ steps.{_upload_of(steps, HTML)['id']}.outputs.artifact-id }}}}"
    (tmp_path / "reports").mkdir()
    (tmp_path / SUMMARY).write_text("VERDICT: no contract regressed\n")
    _run_step(step, tmp_path, {"RUN_URL": RUN_URL, "HTML_ID": "7"})
    assert (tmp_path / "summary.md").read_text().splitlines() == [
        "VERDICT: no contract regressed", "", f"[HTML report]({RUN_URL}/artifacts/7)"]


def test_pr_summary_says_so_when_there_is_no_verdict(tmp_path):
    _run_step(_step(_steps("upgrade-pr.yml", "upgrade"), "$GITHUB_STEP_SUMMARY"), tmp_path,
              {"RUN_URL": RUN_URL, "HTML_ID": ""})
    assert "no verdict" in (tmp_path / "summary.md").read_text()


def test_pr_comment_only_where_the_token_may_write():
    step = _step(_steps("upgrade-pr.yml", "upgrade"), "upgrade-harness-verdict")
    conditions = [c.strip() for c in step["if"].split("&&")]
    assert "github.event.pull_request.head.repo.full_name == github.repository" in conditions
    assert set(conditions) <= {"always()", "github.event.pull_request.head.repo.full_name == github.repository"}


@pytest.mark.parametrize("existing", ["", "991"])
def test_pr_comment_is_the_verdict_then_the_links(tmp_path, existing):
    steps = _steps("upgrade-pr.yml", "upgrade")
    step = _step(steps, "upgrade-harness-verdict")
    assert step["env"]["HTML_ID"] == f"${{{{ steps.{_upload_of(steps, HTML)['id']}.outputs.artifact-id }}}}"
    (tmp_path / "reports").mkdir()
    (tmp_path / SUMMARY).write_text("VERDICT: 1 contract regressed\n")
    calls = _run_step(step, tmp_path, {"RUN_URL": RUN_URL, "HTML_ID": "7", "GH_TOKEN": "t", "PR": "5",
                                       "REPO": "o/r"}, found=existing)
    body = (tmp_path / "body.md").read_text().splitlines()
    assert body[:2] == ["<!-- upgrade-harness-verdict -->", "VERDICT: 1 contract regressed"]
    assert RUN_URL in body[-1] and f"({RUN_URL}/artifacts/7)" in body[-1]
    assert not any(RUN_URL in line for line in body[:-1])
    expected = "--method PATCH repos/o/r/issues/comments/991" if existing else "--method POST repos/o/r/issues/5/comments"
    assert calls[-1] == f"api {expected} -F body=@body.md"


def test_pr_fails_with_the_verdict_status_as_its_last_step():
    steps = _steps("upgrade-pr.yml", "upgrade")
    upgrade = _step(steps, ".venv/bin/nox -s upgrade")
    last = steps[-1]
    assert last["if"] == f"steps.{upgrade['id']}.outputs.status != '0'"
    assert last["env"]["STATUS"] == f"${{{{ steps.{upgrade['id']}.outputs.status }}}}"
    assert last["run"].strip() == 'exit "$STATUS"'
    for needle in ("$GITHUB_STEP_SUMMARY", "upgrade-harness-verdict"):
        assert steps.index(_step(steps, needle)) < len(steps) - 1
    assert steps.index(_upload_of(steps, HTML)) < len(steps) - 1


def test_nightly_verdict_builds_and_uploads_the_html():
    steps = _steps("nightly.yml", "verdict")
    compare = _step(steps, "python -m harness compare")
    assert f"--html {HTML}" in compare["run"]
    upload = _upload_of(steps, HTML)
    assert upload["with"]["name"] == "upgrade-verdict" and "reports/upgrade-summary.*" in upload["with"]["path"]


def test_nightly_summary_and_issue_body_link_the_run_and_the_artifact(tmp_path):
    workflow = _load("nightly.yml")
    steps = workflow["jobs"]["verdict"]["steps"]
    assert workflow["jobs"]["verdict"]["env"]["RUN_URL"] == RUN_URL_EXPR
    step = _step(steps, "$GITHUB_STEP_SUMMARY")
    assert step["if"] == "always()"
    assert step["env"]["ARTIFACT_ID"] == f"${{{{ steps.{_upload_of(steps, HTML)['id']}.outputs.artifact-id }}}}"
    (tmp_path / "reports").mkdir()
    (tmp_path / SUMMARY).write_text("VERDICT: 1 contract regressed\n")
    _run_step(step, tmp_path, {"RUN_URL": RUN_URL, "ARTIFACT_ID": "8"})
    summary = (tmp_path / "summary.md").read_text().splitlines()
    assert summary[0] == "VERDICT: 1 contract regressed"
    assert RUN_URL in summary[-1] and f"({RUN_URL}/artifacts/8)" in summary[-1]
    opener = _step(steps, "gh issue create")
    assert "--body-file body.md" in opener["run"] and steps.index(step) < steps.index(opener)


def _issue_search(step):
    (line,) = [line.strip() for line in step["run"].splitlines() if "gh issue list" in line]
    return line


@pytest.mark.parametrize("open_issue", ["", "12"])
def test_nightly_closes_its_issue_on_a_clean_night(tmp_path, open_issue):
    steps = _steps("nightly.yml", "verdict")
    compare, opener = _step(steps, "python -m harness compare"), _step(steps, "gh issue create")
    closer = _step(steps, "gh issue close")
    assert closer["if"] == f"steps.{compare['id']}.outputs.status == '0'"
    assert opener["if"] == f"steps.{compare['id']}.outputs.status == '1'"
    assert _issue_search(closer) == _issue_search(opener)
    title = _load("nightly.yml")["jobs"]["verdict"]["env"]["ISSUE_TITLE"]
    calls = _run_step(closer, tmp_path, {"RUN_URL": RUN_URL, "ISSUE_TITLE": title, "GH_TOKEN": "t"}, found=open_issue)
    assert calls[0].startswith("issue list --state open") and title in calls[0]
    assert calls[1:] == ([f"issue close 12 --comment Clean night: {RUN_URL}"] if open_issue else [])


def test_nightly_fails_only_when_the_harness_could_not_judge_as_its_last_step():
    steps = _steps("nightly.yml", "verdict")
    compare = _step(steps, "python -m harness compare")
    assert steps[-1]["if"] == f"steps.{compare['id']}.outputs.status == '2'"
    assert steps[-1]["run"].strip() == "exit 2"
