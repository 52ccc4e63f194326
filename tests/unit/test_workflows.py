"""The GitHub workflows pass maintained linters, run each entry of the plan as a job of its own and judge
in a final job, and their shell steps do what the reviewer asked: verdict in the job summary always, the
PR comment only where the token may write and with its links last, the failing step last, the nightly
issue closed on a clean night."""

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness import env_vars
from harness.stack.pins import release_set
from harness.model import api_diff
from harness.stack.run import followups, rollback as rollback_runs

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
DEPENDABOT = ROOT / ".github" / "dependabot.yml"
RUN_URL_EXPR = "${{ github.server_url }}/${{ github.repository }}/actions/runs/${{ github.run_id }}"
RUN_URL = "https://github.example/o/r/actions/runs/42"
SUMMARY = "reports/upgrade-summary.md"
HTML = "reports/upgrade-report.html"
FAN_OUT = ["plan", "entry", "followups", "followup", "judge"]  # the upgrade's jobs, in the order they run
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
    # A job that runs no runner tool (the nightly's issue job: gh and jq only) needs no venv.
    tool_jobs = 0
    for name, job in _load(workflow)["jobs"].items():
        runs = [s.get("run", "") for s in job["steps"]]
        assert not any(re.search(r"\bpip3? install|python3? -m (pip|nox)\b", r.replace(".venv/bin/pip install", ""))
                       for r in runs), f"{name}: installs or runs on the system interpreter"
        if not any(".venv" in r for r in runs):
            continue
        tool_jobs += 1
        assert runs.count("python -m venv .venv && .venv/bin/pip install -r locks/runner.txt") == 1, name
        created = next(i for i, r in enumerate(runs) if "python -m venv .venv" in r)
        assert all(i > created for i, r in enumerate(runs) if ".venv/bin/" in r and i != created), name
    assert tool_jobs, "no job runs the runner tools: the test reads the wrong structure"


@pytest.mark.parametrize("workflow", [p.name for p in WORKFLOWS])
def test_each_entry_is_a_job_of_a_matrix_from_the_plan_and_one_job_judges_them_all(workflow):
    jobs = _load(workflow)["jobs"]
    assert [name for name in jobs if name in FAN_OUT] == FAN_OUT
    plan = _step(jobs["plan"]["steps"], "nox -s plan")
    assert plan["run"].startswith(".venv/bin/nox -s plan")
    assert jobs["plan"]["outputs"] == {k: f"${{{{ steps.{plan['id']}.outputs.{k} }}}}" for k in ("matrix", "run_id", "seed")}
    assert jobs["entry"]["needs"] == "plan"
    assert jobs["entry"]["strategy"] == {"fail-fast": False, "matrix": "${{ fromJSON(needs.plan.outputs.matrix) }}"}
    follow = _step(jobs["followups"]["steps"], "nox -s followups")
    assert follow["run"].strip() == ".venv/bin/nox -s followups -- reports"
    assert jobs["followups"]["needs"] == ["plan", "entry"]
    assert jobs["followups"]["outputs"] == {k: f"${{{{ steps.{follow['id']}.outputs.{k} }}}}" for k in ("matrix", "count")}
    # the replay and the attribution only when the candidate changed something
    assert jobs["followup"]["if"] == "needs.followups.outputs.count != '0'"
    assert jobs["followup"]["strategy"]["matrix"] == "${{ fromJSON(needs.followups.outputs.matrix) }}"
    assert [n for n in jobs["judge"]["needs"] if n != "latest"] == FAN_OUT[:-1]
    assert jobs["judge"]["if"].startswith("${{ !cancelled()")  # judged whatever an entry's job did
    nox = [(name, s["run"]) for name, job in jobs.items() for s in job["steps"] if "nox -s upgrade" in s.get("run", "")]
    assert nox == []  # no job runs the whole upgrade in one


@pytest.mark.parametrize("workflow", [p.name for p in WORKFLOWS])
@pytest.mark.parametrize("job", ["entry", "followup"])
def test_an_entry_job_runs_its_row_told_the_plan_the_run_and_the_seed(workflow, job, tmp_path):
    spec = _load(workflow)["jobs"][job]
    env = spec["env"]
    assert env[env_vars.PLAN] == "${{ github.workspace }}/reports/upgrade-plan.json"
    assert env[env_vars.RUN_ID] == "${{ needs.plan.outputs.run_id }}"
    assert env[env_vars.SEED] == "${{ needs.plan.outputs.seed }}"
    row = {env_vars.REPORT_NAME: "report", env_vars.ONLY: "only", env_vars.REPLAY: "replay",
           env_vars.ROLLBACK_FROM: "rollback", "ENTRY": "entry"}
    assert {k: env[k] for k in row} == {k: f"${{{{ matrix.{v} }}}}" for k, v in row.items()}
    printed = set(followups.EntryRun("e", "r").row(Path("reports")))  # the rows the steps print
    assert printed == {*row.values(), *(f"then_{v}" for v in row.values())}
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


@pytest.mark.parametrize("workflow", [p.name for p in WORKFLOWS])
def test_every_file_a_step_writes_reaches_the_jobs_that_read_it(workflow):
    jobs = _load(workflow)["jobs"]
    uploads = {job: [s["with"] for s in jobs[job]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
               for job in FAN_OUT}
    downloads = {job: [s["with"] for s in jobs[job]["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]
                 for job in FAN_OUT}
    (plan,), (follow,) = uploads["plan"], uploads["followups"]
    assert plan["path"] == "reports/" and plan["name"] == "run-plan"
    written = [followups.EXAMPLES, followups.REPLAY_SELECTION, followups.ATTRIBUTION_SELECTION, "optax-only.json",
               rollback_runs.SELECTION, api_diff.API_DIFF_FILE]  # the follow-ups job makes the API diff; the judge has no environments
    patterns = [p.removeprefix("reports/") for p in follow["path"].split()]
    assert all(any(fnmatch.fnmatch(name, p) for p in patterns) for name in written)
    made = [plan["name"], follow["name"], "run-entry-baseline", "run-entry-baseline-replay"]
    assert [u["name"] for u in uploads["entry"]] == [u["name"] for u in uploads["followup"]] == [
        "run-entry-${{ matrix.report }}", "run-entry-${{ matrix.then_report }}"]
    for job, wanted in (("followups", made[::2]), ("judge", made)):
        (got,) = downloads[job]
        assert got["path"] == "reports" and got["merge-multiple"] is True
        assert all(fnmatch.fnmatch(name, got["pattern"]) for name in wanted), (job, got["pattern"])
    (entry,) = downloads["entry"]
    assert entry == {"name": "run-plan", "path": "reports"}
    (followup,) = downloads["followup"]
    # the rollback's row restores the candidate's checkpoints, uploaded with the candidate's report
    assert followup["pattern"] == "run-{plan,followups,entry-candidate}" and followup["merge-multiple"] is True


def test_pr_workflow_runs_on_pin_changes_without_pull_request_target():
    workflow = _load("upgrade-pr.yml")
    triggers = workflow.get("on", workflow.get(True))  # PyYAML reads the key `on` as True
    assert list(triggers) == ["pull_request"]
    assert {"harness/matrix.toml", "harness/stack/pins/matrix.py", "harness/builtin/**", "locks/**", "golden/**"} <= set(triggers["pull_request"]["paths"])
    assert workflow["jobs"]["judge"]["env"]["RUN_URL"] == RUN_URL_EXPR


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


def test_pr_comment_only_where_the_token_may_write():
    step = _step(_steps("upgrade-pr.yml", "judge"), "upgrade-harness-verdict")
    conditions = [c.strip() for c in step["if"].split("&&")]
    assert "github.event.pull_request.head.repo.full_name == github.repository" in conditions
    assert set(conditions) <= {"always()", "github.event.pull_request.head.repo.full_name == github.repository"}


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


def test_pr_fails_with_the_verdict_status_as_its_last_step():
    steps = _steps("upgrade-pr.yml", "judge")
    upgrade = _step(steps, ".venv/bin/nox -s judge -- reports")
    last = steps[-1]
    assert last["if"] == f"steps.{upgrade['id']}.outputs.status != '0'"
    assert last["env"]["STATUS"] == f"${{{{ steps.{upgrade['id']}.outputs.status }}}}"
    assert last["run"].strip() == 'exit "$STATUS"'
    for needle in ("$GITHUB_STEP_SUMMARY", "upgrade-harness-verdict"):
        assert steps.index(_step(steps, needle)) < len(steps) - 1
    assert steps.index(_upload_of(steps, HTML)) < len(steps) - 1


# --- nightly: judge the newest releases against the baseline, once per release set ----------------------

NIGHTLY = "nightly.yml"
STATE = ".nightly/last-judged.json"
LABEL = "jax 0.12.0.1, optax 0.2.8, flax 0.12.12, numpy 2.5.5, Python 3.12"
OTHER_LABEL = "jax 0.12.0, optax 0.2.8, flax 0.12.11, numpy 2.5.5, Python 3.12"
SET_OUTPUT = "${{ needs.judge.outputs.release_set }}"


def _nightly_jobs():
    return _load(NIGHTLY)["jobs"]


def _action(steps, name):
    found = [s for s in steps if s.get("uses", "").split("@")[0] == name]
    assert len(found) == 1, f"{len(found)} steps use {name}"
    return found[0]


def _status_step_id():
    return _step(_nightly_jobs()["judge"]["steps"], "nox -s judge")["id"]


def test_nightly_resolves_the_latest_releases_before_planning_the_upgrade_on_them():
    jobs = _nightly_jobs()
    # the last three: every night, whatever the releases
    assert list(jobs) == ["latest", *FAN_OUT, "issue", "sensitivity", "sensitivity-report", "sequences"]
    assert "needs" not in jobs["sensitivity"] and "needs" not in jobs["sequences"]
    assert _step(jobs["sequences"]["steps"], "nox -s sequences")
    resolve_step = _step(jobs["latest"]["steps"], "latest_cli resolve")
    assert resolve_step["run"].startswith(".venv/bin/python -m harness.stack.commands.latest_cli resolve")
    assert jobs["latest"]["outputs"]["decision"] == f"${{{{ steps.{resolve_step['id']}.outputs.decision }}}}"
    assert _step(jobs["plan"]["steps"], "nox -s plan")["run"].strip() == ".venv/bin/nox -s plan -- --candidate latest"
    assert all(job["env"]["HARNESS_PROFILE"] == "nightly" for job in (jobs["entry"], jobs["followup"]))


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


def test_nightly_restores_the_last_judged_set_before_resolving_and_saves_it_only_once_judged():
    jobs = _nightly_jobs()
    latest, upgrade = jobs["latest"]["steps"], jobs["judge"]["steps"]
    assert not any(s.get("uses", "").startswith("actions/cache@") for job in jobs.values() for s in job["steps"])
    restore, save = _action(latest, "actions/cache/restore"), _action(upgrade, "actions/cache/save")
    resolve_step, record = _step(latest, "latest_cli resolve"), _step(upgrade, "latest_cli record")
    assert latest.index(restore) < latest.index(resolve_step)
    assert restore["with"]["path"] == save["with"]["path"] == STATE
    assert f"--state {STATE}" in resolve_step["run"] and f"--out {STATE}" in record["run"]
    assert "--report reports/candidate.json" in record["run"]
    # one cache entry per run; the restore takes the newest entry under the prefix
    assert "${{ github.run_id }}" in save["with"]["key"] and save["with"]["key"] == restore["with"]["key"]
    assert save["with"]["key"].startswith(restore["with"]["restore-keys"])
    status = _status_step_id()
    assert record["if"] == f"steps.{status}.outputs.status == '0' || steps.{status}.outputs.status == '1'"
    assert save["if"] == f"steps.{record['id']}.outcome == 'success'"
    assert upgrade.index(_step(upgrade, "nox -s judge")) < upgrade.index(record) < upgrade.index(save)


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


def test_nightly_fails_only_when_the_harness_could_not_judge_as_its_last_step():
    steps = _nightly_jobs()["judge"]["steps"]
    status = _status_step_id()
    assert steps[-1]["if"] == f"steps.{status}.outputs.status != '0' && steps.{status}.outputs.status != '1'"
    assert steps[-1]["run"].strip() == "exit 2"


def test_nightly_only_the_issue_job_may_write_issues():
    workflow = _load(NIGHTLY)
    assert workflow["permissions"] == {"contents": "read"}
    writers = {name: job["permissions"] for name, job in workflow["jobs"].items() if "permissions" in job}
    assert writers == {"issue": {"contents": "read", "issues": "write"}}
    assert not any(".venv" in s.get("run", "") or "checkout" in s.get("uses", "")
                   for s in workflow["jobs"]["issue"]["steps"])


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


def test_nightly_issue_title_names_the_release_set():
    env = _nightly_jobs()["issue"]["env"]
    assert env["ISSUE_PREFIX"].startswith("Nightly") and env["ISSUE_TITLE"] == env["ISSUE_PREFIX"] + SET_OUTPUT
    record = _step(_nightly_jobs()["judge"]["steps"], "latest_cli record")
    assert _nightly_jobs()["judge"]["outputs"]["release_set"].startswith(
        f"${{{{ steps.{record['id']}.outputs.release_set")


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


def test_nightly_measures_sensitivity_on_every_mutant_in_shards_and_merges_all_of_them():
    jobs = _nightly_jobs()
    shard_job, merge_job = jobs["sensitivity"], jobs["sensitivity-report"]
    judge = _step(shard_job["steps"], "nox -s sensitivity")["run"]
    count = int(re.search(r'--shard "\$SHARD/(\d+)"', judge).group(1))
    assert shard_job["strategy"]["matrix"]["shard"] == list(range(1, count + 1))
    assert "--sample" not in judge and "--workers" in judge  # every mutant, cosmic-ray's HTTP workers
    (upload,) = [s["with"] for s in shard_job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    (download,) = [s["with"] for s in merge_job["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]
    assert fnmatch.fnmatch(upload["name"].replace("${{ matrix.shard }}", "3"), download["pattern"])
    assert merge_job["needs"] == "sensitivity" and merge_job["if"].startswith("${{ !cancelled()")
    assert "-m harness.stack.sensitivity.merge reports/sensitivity.json shards/sensitivity-shard-*.json" in \
        _step(merge_job["steps"], "sensitivity.merge")["run"]
