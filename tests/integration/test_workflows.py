"""The GitHub workflows pass maintained linters, run each entry of the plan as a job of its own and judge
in a final job, and their shell steps do what the reviewer asked: verdict in the job summary always, the
PR comment only where the token may write and with its links last, the failing step last, the nightly
issue closed on a clean night.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/test_workflows.py."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import env_vars
from harness.stack.pins import release_set
from harness.stack.run import followups
from unit.test_workflows import (  # noqa: F401 (fixtures and helpers shared with it)
    DEPENDABOT, HTML, NIGHTLY, ROOT, RUN_URL, RUN_URL_EXPR, SET_OUTPUT, WORKFLOWS, _action, _load, _nightly_jobs,
    _step, _steps, _upload_of,
)


SUMMARY = "reports/upgrade-summary.md"


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


@pytest.mark.parametrize("workflow", [p.name for p in WORKFLOWS])
@pytest.mark.parametrize("job", ["entry", "followup"])
def test_an_entry_job_runs_its_row_told_its_job_file(workflow, job, tmp_path):
    """A row is told one variable, its job file (the plan and followups steps write it: its entry, the run's id
    and seed, its selection...); none of the variables it replaced."""
    spec = _load(workflow)["jobs"][job]
    env = spec["env"]
    replaced = {env_vars.PLAN, env_vars.RUN_ID, env_vars.SEED, env_vars.REPORT_NAME, env_vars.ONLY, env_vars.REPLAY,
                env_vars.ROLLBACK_FROM}
    assert not replaced & set(env)
    row = {env_vars.JOB: "job", "ENTRY": "entry"}
    assert {k: env[k] for k in row} == {k: f"${{{{ matrix.{v} }}}}" for k, v in row.items()}
    printed = set(followups.EntryRun("e", "r").row(Path("reports")))  # the rows the steps print
    assert printed == {"report", *row.values(), *(f"then_{v}" for v in ("report", *row.values()))}
    # A failing contract is the judge's to count: the entry's job goes on to upload its report.
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "nox").write_text('#!/bin/sh\necho "$*" > nox-args\nexit 1\n')
    (venv / "nox").chmod(0o755)
    first, then = [s for s in spec["steps"] if "nox -s" in s.get("run", "")]
    _run_step(first, tmp_path, {"ENTRY": "jax-only"})
    assert (tmp_path / "nox-args").read_text().strip() == "-s jax-only"
    uploads = [s for s in spec["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert [s["with"]["name"] for s in uploads] == ["run-entry-${{ matrix.report }}", "run-entry-${{ matrix.then_report }}"]
    assert uploads[0]["if"] == "always()" and uploads[0]["with"]["path"].splitlines() == [
        *(f"reports/${{{{ matrix.report }}}}{suffix}" for suffix in (".json", ".junit.xml")),
        "reports/checkpoints/${{ matrix.report }}/"]  # the candidate's are restored by the rollback's job
    # Then, in the same job, the run that reads this entry's checkpoints (the baseline), told its own row.
    assert then["if"] == "${{ !cancelled() && matrix.then_entry != '' }}"
    assert then["env"] == {k: f"${{{{ matrix.then_{v} }}}}" for k, v in row.items()}
    _run_step(then, tmp_path, {"ENTRY": "baseline"})
    assert (tmp_path / "nox-args").read_text().strip() == "-s baseline"
    assert spec["steps"].index(uploads[0]) < spec["steps"].index(then) < spec["steps"].index(uploads[1])
    assert uploads[1]["if"] == "always() && matrix.then_entry != ''" and uploads[1]["with"]["path"].splitlines() == [
        f"reports/${{{{ matrix.then_report }}}}{suffix}" for suffix in (".json", ".junit.xml")]






@pytest.mark.parametrize("existing", ["", "991"])
def test_pr_comment_is_the_verdict_then_the_links(tmp_path, existing):
    steps = _steps("upgrade-pr.yml", "judge")
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


LABEL = "jax 0.12.0.1, optax 0.2.8, flax 0.12.12, numpy 2.5.5, Python 3.12"


OTHER_LABEL = "jax 0.12.0, optax 0.2.8, flax 0.12.11, numpy 2.5.5, Python 3.12"


def test_nightly_runs_no_suites_when_the_release_set_was_judged_already(tmp_path):
    assert (release_set.Action.NEW_SET.value, release_set.Action.SAME_AS_LAST.value) == ("run", "skip")
    jobs = _nightly_jobs()
    assert jobs["plan"]["needs"] == "latest" and jobs["plan"]["if"] == "needs.latest.outputs.decision == 'run'"
    assert "needs.latest.outputs.decision == 'run'" in jobs["judge"]["if"]  # no verdict of a skipped night
    # the issue job hangs on the judge job's status, which only a judged run sets
    assert jobs["issue"]["needs"] == "judge" and "needs.judge.outputs.status == " in jobs["issue"]["if"]
    summary = _step(jobs["latest"]["steps"], "$SUMMARY")
    assert "if" not in summary  # the decision is in the summary whether it runs or skips
    resolve_id = _step(jobs["latest"]["steps"], "latest_cli resolve")["id"]
    assert summary["env"]["SUMMARY"] == f"${{{{ steps.{resolve_id}.outputs.summary }}}}"
    said = f"Same release set as last judged on 2026-11-30: {LABEL}. The suites did not run."
    _run_step(summary, tmp_path, {"SUMMARY": said})
    assert (tmp_path / "summary.md").read_text() == said + "\n"


@pytest.mark.parametrize("exit_code, verdict, status", [(0, True, "0"), (1, True, "1"), (2, False, "2"),
                                                        (1, False, "2"), (0, False, "2"), (2, True, "2")])
def test_nightly_upgrade_status_is_a_judgement_only_with_a_verdict(tmp_path, exit_code, verdict, status):
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (tmp_path / "reports").mkdir()
    write = f"echo 'VERDICT' > {SUMMARY}; " if verdict else ""
    (venv / "nox").write_text(f"#!/bin/sh\necho \"$*\" > nox-args\n{write}exit {exit_code}\n")
    (venv / "nox").chmod(0o755)
    _run_step(_step(_nightly_jobs()["judge"]["steps"], "nox -s judge"), tmp_path,
              {"GITHUB_OUTPUT": str(tmp_path / "out")})
    assert (tmp_path / "out").read_text().splitlines() == [f"status={status}"]
    assert (tmp_path / "nox-args").read_text().strip() == "-s judge -- reports"


def _summary_step():
    steps = _nightly_jobs()["judge"]["steps"]
    return steps, _step(steps, "$GITHUB_STEP_SUMMARY")


def test_nightly_summary_and_issue_body_are_the_release_set_the_verdict_then_the_links(tmp_path):
    steps, step = _summary_step()
    assert _nightly_jobs()["judge"]["env"]["RUN_URL"] == RUN_URL_EXPR
    assert step["if"] == "always()"
    html = _upload_of(steps, HTML)
    assert html["with"]["name"] == "upgrade-verdict" and "reports/upgrade-summary.*" in html["with"]["path"]
    assert step["env"]["ARTIFACT_ID"] == f"${{{{ steps.{html['id']}.outputs.artifact-id }}}}"
    assert step["env"]["RELEASE_SET"].startswith(f"${{{{ steps.{_step(steps, 'latest_cli record')['id']}.outputs")
    (tmp_path / "reports").mkdir()
    (tmp_path / SUMMARY).write_text("VERDICT: 1 contract regressed\n")
    _run_step(step, tmp_path, {"RUN_URL": RUN_URL, "ARTIFACT_ID": "8", "RELEASE_SET": LABEL})
    summary = (tmp_path / "summary.md").read_text()
    assert summary == (tmp_path / "body.md").read_text()
    lines = summary.splitlines()
    assert lines[:3] == [f"Release set: {LABEL}", "", "VERDICT: 1 contract regressed"]
    assert RUN_URL in lines[-1] and f"({RUN_URL}/artifacts/8)" in lines[-1]
    assert not any(RUN_URL in line for line in lines[:-1])
    body = _upload_of(steps, "body.md")
    assert body["if"] == "always()" and steps.index(step) < steps.index(body)
    download = _action(_nightly_jobs()["issue"]["steps"], "actions/download-artifact")
    assert download["with"]["name"] == body["with"]["name"]


def test_nightly_summary_says_so_when_there_is_no_verdict(tmp_path):
    _run_step(_summary_step()[1], tmp_path, {"RUN_URL": RUN_URL, "ARTIFACT_ID": "", "RELEASE_SET": LABEL})
    assert "no verdict" in (tmp_path / "summary.md").read_text()


def _issue_run(tmp_path, needle, found):
    if shutil.which("jq") is None:
        pytest.fail("jq is not installed here; the nightly's issue steps filter gh's JSON with it")
    job = _nightly_jobs()["issue"]
    step = _step(job["steps"], needle)
    env = {**job["env"], **step.get("env", {})}
    env = {k: v.replace(SET_OUTPUT, LABEL).replace(RUN_URL_EXPR, RUN_URL) for k, v in env.items()}
    env.update(GH_TOKEN="t", GH_REPO="o/r")
    return step, _run_step(step, tmp_path, env, found=json.dumps(found) if found else "")


def _issues(*pairs):
    return [{"number": number, "title": title} for number, title in pairs]


@pytest.mark.parametrize("open_issues, expected", [
    ([], f"issue create --title Nightly: contracts changed with {LABEL} --body-file body.md"),
    ([(3, f"Nightly: contracts changed with {OTHER_LABEL}"), (4, "Nightly upgrade check: a contract regressed")],
     f"issue create --title Nightly: contracts changed with {LABEL} --body-file body.md"),
    ([(3, f"Nightly: contracts changed with {OTHER_LABEL}"), (12, f"Nightly: contracts changed with {LABEL}")],
     "issue edit 12 --body-file body.md"),
])
def test_nightly_regression_opens_or_updates_the_one_issue_of_its_release_set(tmp_path, open_issues, expected):
    step, calls = _issue_run(tmp_path, "gh issue create", _issues(*open_issues))
    assert step["if"] == "needs.judge.outputs.status == '1'"
    assert calls[0].startswith("issue list --state open") and "--json number,title" in calls[0]
    assert calls[1:] == [expected]


@pytest.mark.parametrize("open_issues, closed", [
    ([], []),
    ([(3, f"Nightly: contracts changed with {OTHER_LABEL}"), (5, "Nightly docs are stale"),
      (12, f"Nightly: contracts changed with {LABEL}"), (4, "Nightly upgrade check: a contract regressed")],
     [3, 12, 4]),
])
def test_nightly_closes_every_nightly_issue_on_a_clean_night(tmp_path, open_issues, closed):
    step, calls = _issue_run(tmp_path, "gh issue close", _issues(*open_issues))
    assert step["if"] == "needs.judge.outputs.status == '0'"
    assert calls[0].startswith("issue list --state open")
    assert calls[1:] == [f"issue close {n} --comment Clean night: {RUN_URL}" for n in closed]


def test_pr_verdict_goes_to_the_job_summary_always(tmp_path):
    steps = _steps("upgrade-pr.yml", "judge")
    step = _step(steps, "$GITHUB_STEP_SUMMARY")
    assert step["if"] == "always()"
    assert step["env"]["HTML_ID"] == f"${{{{ steps.{_upload_of(steps, HTML)['id']}.outputs.artifact-id }}}}"
    (tmp_path / "reports").mkdir()
    (tmp_path / SUMMARY).write_text("VERDICT: no contract regressed\n")
    _run_step(step, tmp_path, {"RUN_URL": RUN_URL, "HTML_ID": "7"})
    assert (tmp_path / "summary.md").read_text().splitlines() == [
        "VERDICT: no contract regressed", "", f"[HTML report]({RUN_URL}/artifacts/7)"]


def test_pr_summary_says_so_when_there_is_no_verdict(tmp_path):
    _run_step(_step(_steps("upgrade-pr.yml", "judge"), "$GITHUB_STEP_SUMMARY"), tmp_path,
              {"RUN_URL": RUN_URL, "HTML_ID": ""})
    assert "no verdict" in (tmp_path / "summary.md").read_text()
