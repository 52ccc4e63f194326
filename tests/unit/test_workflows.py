"""The GitHub workflows pass maintained linters, run each entry of the plan as a job of its own and judge
in a final job, and their shell steps do what the reviewer asked: verdict in the job summary always, the
PR comment only where the token may write and with its links last, the failing step last, the nightly
issue closed on a clean night."""

import fnmatch
import re
from pathlib import Path

import pytest
import yaml

from harness.model import api_diff
from harness.stack.run import followups
from harness.stack.entry_side import rollback as rollback_runs

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
DEPENDABOT = ROOT / ".github" / "dependabot.yml"
RUN_URL_EXPR = "${{ github.server_url }}/${{ github.repository }}/actions/runs/${{ github.run_id }}"
RUN_URL = "https://github.example/o/r/actions/runs/42"
HTML = "reports/upgrade-report.html"
FAN_OUT = ["plan", "entry", "followups", "followup", "judge"]
NIGHTLY_FILE = "nightly.yml"  # the upgrade's jobs, in the order they run
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


def test_there_are_two_workflows_and_a_dependabot_config():
    assert [p.name for p in WORKFLOWS] == ["nightly.yml", "upgrade-pr.yml"]
    assert DEPENDABOT.is_file()


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
    # And on the default branch once merged: its jobs save the reports pull requests then reuse.
    assert list(triggers) == ["pull_request", "push"]
    assert {"harness/matrix.toml", "harness/stack/pins/matrix.py", "harness/builtin/**", "locks/**", "golden/**"} <= set(triggers["pull_request"]["paths"])
    assert triggers["push"] == {"branches": ["main"], "paths": triggers["pull_request"]["paths"]}
    assert workflow["concurrency"]["group"] == "upgrade-pr-${{ github.event.pull_request.number || github.ref }}"
    assert workflow["jobs"]["judge"]["env"]["RUN_URL"] == RUN_URL_EXPR


CACHE_PIN = "0400d5f644dc74513175e3cd8d07132dd4860809"  # actions/cache v4.2.4, as the nightly's release-set state


@pytest.mark.parametrize("workflow, prefix", [("upgrade-pr.yml", "upgrade-reports"), (NIGHTLY_FILE, "nightly-reports")])
@pytest.mark.parametrize("job", ["entry", "followup"])
def test_an_entry_job_restores_the_report_cache_before_its_run_and_saves_it_after(workflow, prefix, job):
    """The report cache (reports/.cache/) across runs: restored from the newest this row's jobs saved (a pull
    request may restore the default branch's), saved under this run's own key once both runs of the row ended."""
    steps = _load(workflow)["jobs"][job]["steps"]
    restore = _action(steps, "actions/cache/restore")
    save = _action(steps, "actions/cache/save")
    key = f"{prefix}-${{{{ matrix.report }}}}-${{{{ github.run_id }}}}-${{{{ github.run_attempt }}}}"
    assert restore["uses"].split("@")[1] == save["uses"].split("@")[1] == CACHE_PIN
    assert restore["with"] == {"path": "reports/.cache", "key": key, "restore-keys": f"{prefix}-${{{{ matrix.report }}}}-"}
    assert save["with"] == {"path": "reports/.cache", "key": key}
    assert "if" not in save  # after every earlier step succeeded: the runs' steps never fail the job
    runs = [i for i, s in enumerate(steps) if "nox -s" in s.get("run", "")]
    assert steps.index(restore) < runs[0] and runs[-1] < steps.index(save)






def test_pr_comment_only_where_the_token_may_write():
    step = _step(_steps("upgrade-pr.yml", "judge"), "upgrade-harness-verdict")
    conditions = [c.strip() for c in step["if"].split("&&")]
    assert "github.event.pull_request.head.repo.full_name == github.repository" in conditions
    assert set(conditions) <= {"always()", "github.event.pull_request.head.repo.full_name == github.repository"}


def test_pr_fails_with_the_verdict_status_as_its_last_step():
    steps = _steps("upgrade-pr.yml", "judge")
    upgrade = _step(steps, ".venv/bin/nox -s judge -- reports")
    last = steps[-1]
    status = f"steps.{upgrade['id']}.outputs.status"
    # a pull request (and the nightly) fails on a change; the default branch's push, which only saves its
    # reports for pull requests, fails only when the harness could not judge
    assert last["if"] == f"{status} == '2' || ({status} == '1' && github.event_name != 'push')"
    assert last["env"]["STATUS"] == f"${{{{ steps.{upgrade['id']}.outputs.status }}}}"
    assert last["run"].strip() == 'exit "$STATUS"'
    for needle in ("$GITHUB_STEP_SUMMARY", "upgrade-harness-verdict"):
        assert steps.index(_step(steps, needle)) < len(steps) - 1
    assert steps.index(_upload_of(steps, HTML)) < len(steps) - 1


# --- nightly: judge the newest releases against the baseline, once per release set ----------------------

NIGHTLY = NIGHTLY_FILE
STATE = ".nightly/last-judged.json"
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


def test_nightly_issue_title_names_the_release_set():
    env = _nightly_jobs()["issue"]["env"]
    assert env["ISSUE_PREFIX"].startswith("Nightly") and env["ISSUE_TITLE"] == env["ISSUE_PREFIX"] + SET_OUTPUT
    record = _step(_nightly_jobs()["judge"]["steps"], "latest_cli record")
    assert _nightly_jobs()["judge"]["outputs"]["release_set"].startswith(
        f"${{{{ steps.{record['id']}.outputs.release_set")


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
