"""The pull-request workflow `init --ci github` writes, run job by job on this machine for a team's project:
every `run:` step in bash as the runner runs it (the tool's install too), each `upgrade-harness` call it makes
replayed through the command with the entries' sessions faked as in test_fanout (no JAX installed), and the
artifacts passed between jobs only as the workflow uploads and downloads them. The team's repository is in
git and the pull request's branch bumps the pins file without re-locking, as a bot does: the judge job's
verdict and status are those of `upgrade-harness upgrade --baseline-from origin/main:PINS --candidate-from PINS`
on that branch."""

import fnmatch
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from harness import cli, env_vars
from harness.model import entry_job
from harness.model.report import now
from harness.stack import paths
from harness.stack.ci import github_workflows
from harness.stack.commands import upgrade
from harness.stack.entry_side import entry_jobs
from harness.stack.pins import matrix, plan, resolve
from harness.stack.commands import fanout
from harness.stack.workspace import Workspace

from unit.stack.ci.test_ci_init import PINS, TOOL, team
from e2e.test_fanout import _timeless
from integration.test_fanout import SUMMARIES, Sessions, _sources, libraries  # noqa: F401  (the API diff's fakes)

FAKE_PYTHON = """#!/bin/sh
# `python -m venv DIR`: a tool environment whose pip logs what it installs and whose upgrade-harness logs each call
mkdir -p "$3/bin"
printf '#!/bin/sh\\necho "$*" >> "$CALLS.pip"\\n' > "$3/bin/pip"
cat > "$3/bin/upgrade-harness" <<'TOOL'
#!/bin/sh
python3 - "$@" <<'LOG'
import json, os, sys
env = {k: v for k, v in os.environ.items() if k.startswith("HARNESS_") or k == "ENTRY"}
print(json.dumps({"argv": sys.argv[1:], "env": env, "cwd": os.getcwd()}), file=open(os.environ["CALLS"], "a"))
LOG
exit "${FAKE_STATUS:-0}"
TOOL
chmod +x "$3/bin/pip" "$3/bin/upgrade-harness"
"""
GITHUB = {"github.server_url": "https://github.example", "github.repository": "team/repo", "github.run_id": "42",
          "github.base_ref": "main"}
MATRIX = matrix.load_pins(paths.SOURCE / "harness" / "matrix.toml")
PINS_FILE = "requirements.txt"  # what `team` pins, as init's table names it
DIFF = ["--baseline-from", f"origin/main:{PINS_FILE}", "--candidate-from", PINS_FILE]  # a branch's bump, judged
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def _checkout_lock(pins: dict[str, str]) -> str:
    """The lock this checkout commits for the matrix entry with these pins (what uv would resolve)."""
    entries = matrix.entries(matrix.load_pins(paths.SOURCE / "harness" / "matrix.toml"), None, committed=True)
    (found,) = [e for e in entries.values() if e.pins == pins and e.name != "jaxlib-skew"]
    return (paths.SOURCE / "locks" / f"{found.name}.txt").read_text()


def _resolve(ws, named, defaults, python, prerelease, held=()):
    pins = {**defaults, **named}
    return resolve.Resolution(pins=pins, lock=_checkout_lock(pins), notes=[], resolved_at=now())


class Runner:
    """A GitHub runner for one workflow: each job in a fresh copy of the repository, artifacts by name."""

    def __init__(self, repo: Path, tmp: Path, workflow: dict, sessions: Sessions, monkeypatch):
        self.repo, self.tmp, self.workflow, self.sessions, self.mp = repo, tmp, workflow, sessions, monkeypatch
        self.artifacts: dict[str, Path] = {}
        self.outputs: dict[str, dict[str, str]] = {}
        self.calls: list[list[str]] = []
        self.steps: dict[str, dict[str, str]] = {}  # each job's step outputs, by expression
        self.runs = 0

    def _value(self, text, context: dict[str, str]) -> str:
        return EXPRESSION.sub(lambda m: context[m.group(1)], str(text))

    def _condition(self, condition: str | None, context: dict[str, str]) -> bool:
        if condition is None or condition in ("always()", "${{ !cancelled() }}"):
            return True
        if "matrix.then_entry != ''" in condition:
            return context["matrix.then_entry"] != ""
        if "github.event.pull_request.head.repo.full_name" in condition:
            return False  # the comment step: its script is test_workflows' to run, with a fake gh
        if condition == "needs.followups.outputs.count != '0'":
            return self.outputs["followups"]["count"] != "0"
        if condition.startswith("steps.upgrade.outputs.status"):
            return False  # the last step fails the job with the status: read from the judge's outputs
        if condition.startswith("${{ !cancelled() && needs.plan.result"):
            return True
        raise AssertionError(f"a condition this runner does not know: {condition}")

    def run_job(self, name: str, row: dict[str, str] | None = None) -> dict[str, str]:
        job = self.workflow["jobs"][name]
        self.runs += 1
        workspace = self.tmp / "workspace"  # the same path in every job, a fresh checkout in each
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.copytree(self.repo, workspace)
        temp = self.tmp / f"temp{self.runs}"
        temp.mkdir()
        context = {"github.workspace": str(workspace), **GITHUB, **{f"matrix.{k}": v for k, v in (row or {}).items()},
                   **{f"needs.{j}.outputs.{k}": v for j, out in self.outputs.items() for k, v in out.items()}}
        outputs: dict[str, str] = {}
        for step in job["steps"]:
            if not self._condition(step.get("if"), context):
                continue
            uses = step.get("uses", "").split("@")[0]
            if uses == "actions/upload-artifact":
                self._upload(workspace, self._value(step["with"]["name"], context),
                             self._value(step["with"]["path"], context))
                if "id" in step:  # upload-artifact's output: the artifact's id, for links
                    context[f"steps.{step['id']}.outputs.artifact-id"] = str(len(self.artifacts))
            elif uses == "actions/download-artifact":
                self._download(workspace, step["with"])
            elif "run" in step:
                env = {**self.workflow.get("env", {}), **job.get("env", {}), **step.get("env", {})}
                env = {k: self._value(v, context) for k, v in env.items()}
                said = self._run(step["run"], workspace, temp, env)
                if "id" in step:
                    outputs.update({f"steps.{step['id']}.outputs.{k}": v for k, v in said.items()})
                    context.update({f"steps.{step['id']}.outputs.{k}": v for k, v in said.items()})
        self.steps[name] = outputs
        return {k: self._value(v, context) for k, v in job.get("outputs", {}).items()}

    def _upload(self, workspace: Path, name: str, path_lines: str) -> None:
        """The files the step names (globs, folders), kept under their path relative to the workspace."""
        store = self.tmp / "artifacts" / name
        for pattern in path_lines.split():
            for found in workspace.glob(pattern.rstrip("/")):
                target = store / found.relative_to(workspace)
                if found.is_dir():
                    shutil.copytree(found, target, dirs_exist_ok=True)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(found, target)
        if store.exists():
            self.artifacts[name] = store

    def _download(self, workspace: Path, spec: dict) -> None:
        """As download-artifact v4: one artifact by name, or every match of a pattern merged, into `path`,
        each artifact's files relative to the least common folder of what it uploaded (here: reports/)."""
        pattern = spec.get("pattern")
        names = [n for n in self.artifacts if (fnmatch.fnmatch(n, pattern.replace("{plan,followups,entry-candidate}", "*"))
                                               and _braces(n, pattern) if pattern else n == spec["name"])]
        assert names or pattern, f"no artifact {spec}"
        for name in names:
            store = self.artifacts[name]
            top = _common_root(store)
            shutil.copytree(top, workspace / spec["path"], dirs_exist_ok=True)

    def _run(self, script: str, workspace: Path, temp: Path, env: dict[str, str]) -> dict[str, str]:
        """The step in bash, then each tool call it made, replayed; a failing call's status given back to the
        step by running it again (its output file then says what the real run's would)."""
        calls = self.tmp / "calls.jsonl"
        calls.unlink(missing_ok=True)
        output = temp / "github-output"
        fake = self.tmp / "fakebin"
        full = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "RUNNER_TEMP": str(temp), "CALLS": str(calls),
                "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(self.tmp / "summary.md"),
                "HOME": str(self.tmp), **env}
        self._bash(script, workspace, full)
        said = calls.read_text().splitlines() if calls.exists() else []
        for line in said:
            call = json.loads(line)
            status = self._replay(call, workspace, output)
            if status != 0:
                output.write_text("")
                self._bash(script, workspace, {**full, "FAKE_STATUS": str(status), "CALLS": os.devnull})
        return dict(ln.split("=", 1) for ln in output.read_text().splitlines()) if output.exists() else {}

    @staticmethod
    def _bash(script, cwd, env):
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0 or script.strip().startswith("exit"), done.stdout + done.stderr
        return done

    def _replay(self, call: dict, workspace: Path, output: Path) -> int:
        """`upgrade-harness ARGV` in-process, as the step called it; the nox sessions it would start, faked."""
        self.calls.append(call["argv"])
        with self.mp.context() as mp:
            mp.chdir(call["cwd"])
            for key in [k for k in os.environ if k.startswith("HARNESS_") and k != env_vars.BASELINE_REPORT]:
                mp.delenv(key)
            for key, value in call["env"].items():
                mp.setenv(key, value)
            mp.setenv("GITHUB_OUTPUT", str(output))
            mp.setattr(cli, "subprocess", SimpleNamespace(run=self._session))
            return cli.main(call["argv"])

    def _session(self, cmd, cwd, env, check):
        """A nox session the command starts: plan and followups as their sessions call them; an entry writes
        the report its session would (test_fanout's Sessions)."""
        session, rest = cmd[cmd.index("-s") + 1], cmd[cmd.index("--") + 1:] if "--" in cmd else []
        with self.mp.context() as mp:
            for key, value in env.items():
                if key.startswith("HARNESS_"):
                    mp.setenv(key, value)
            ws = Workspace.from_environment()
            if session == "plan":
                code = fanout.plan(ws, rest, env[env_vars.INVOKED_FROM])
            elif session == "followups":
                code = fanout.follow_ups(ws, rest, env[env_vars.INVOKED_FROM])
            else:  # told its job file, as the row's session reads it (harness.stack.sessions)
                job = entry_job.read(Path(env[env_vars.JOB]))
                assert job.entry.name == session
                self.sessions.write(ws.reports, entry_jobs.entry_of(job), job.options.report_name or session,
                                    job.options.run_id)
                code = 0
        return SimpleNamespace(returncode=code)


def _braces(name: str, pattern: str) -> bool:
    """fnmatch with download-artifact's `{a,b}` alternatives."""
    found = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", pattern)
    if not found:
        return fnmatch.fnmatch(name, pattern)
    return any(fnmatch.fnmatch(name, found.group(1) + alt + found.group(3)) for alt in found.group(2).split(","))


def _common_root(store: Path) -> Path:
    top = store
    while True:
        inside = list(top.iterdir())
        if len(inside) == 1 and inside[0].is_dir():
            top = inside[0]
        else:
            return top


def _pins_text(pins: dict[str, str]) -> str:
    return "".join(f"{name}=={version}\n" for name, version in pins.items())


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def _repository(root: Path, monkeypatch, branch: dict[str, str]) -> Path:
    """A team's repository after `init --ci github`, in git: `main` (also `origin/main`, as the runner's
    checkout fetches it) pins this checkout's baseline with its lock committed; the pull request's branch
    commits `branch` (path -> text) over it. The candidate resolves to this checkout's committed locks (no
    index reached)."""
    team(root)
    assert (root / PINS_FILE).read_text() == PINS == _pins_text(MATRIX.baseline)
    (root / "locks").mkdir()
    shutil.copy(paths.SOURCE / "locks" / "baseline.txt", root / "locks" / "baseline.txt")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "the team's pins, lock and workflows")
    _git(root, "update-ref", "refs/remotes/origin/main", "main")
    _git(root, "checkout", "-q", "-b", "pull-request")
    for path, text in branch.items():
        (root / path).write_text(text)
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "the pull request")
    monkeypatch.setattr(resolve, "resolve", _resolve)
    for key in [k for k in os.environ if k.startswith("HARNESS_") and k != env_vars.BASELINE_REPORT]:
        monkeypatch.delenv(key)
    return root


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A bot's pull request: the pins file bumped to the candidate's versions, the lock left as main's."""
    return _repository(tmp_path / "repo", monkeypatch, {PINS_FILE: _pins_text(MATRIX.candidate)})


def _upgrade(root: Path, tmp_path: Path, monkeypatch, sessions: Sessions, *argv: str) -> tuple[int, Path]:
    """`upgrade-harness upgrade ARGV` in a copy of the repository, its entries' sessions faked the same way."""
    copy = tmp_path / "local"
    shutil.copytree(root, copy, dirs_exist_ok=True)
    with monkeypatch.context() as mp:
        mp.setattr(upgrade, "run_entries", sessions.run_entries)
        mp.setattr(upgrade, "run_sessions", sessions.run_sessions)
        mp.chdir(copy)
        return cli.main(["upgrade", *argv]), copy / "reports"


def _run_workflow(repository: Path, tmp_path: Path, monkeypatch, sessions: Sessions) -> Runner:
    """The pull-request workflow's jobs in order, one per matrix row: plan, entry, followups, followup, judge."""
    fake = tmp_path / "ci" / "fakebin"
    fake.mkdir(parents=True)
    (fake / "python").write_text(FAKE_PYTHON)
    (fake / "python").chmod(0o755)
    workflow = yaml.safe_load((repository / github_workflows.PR_FILE).read_text())
    runner = Runner(repository, tmp_path / "ci", workflow, sessions, monkeypatch)
    runner.outputs["plan"] = runner.run_job("plan")
    rows = json.loads(runner.outputs["plan"]["matrix"])["include"]
    assert [r["entry"] for r in rows] == ["baseline", "candidate"]
    for row in rows:
        runner.run_job("entry", row)
    runner.outputs["followups"] = runner.run_job("followups")
    follow = json.loads(runner.outputs["followups"]["matrix"])["include"]
    assert runner.outputs["followups"]["count"] == str(len(follow))
    for row in follow:
        runner.run_job("followup", row)
    assert runner.run_job("judge") == {}  # the judge job has no outputs; its status is its last step's
    assert runner.calls[0] == ["plan", *DIFF] and runner.calls[-1] == ["judge", "reports"]
    assert {c[0] for c in runner.calls} == {"plan", "run", "followups", "judge"}
    assert not any("--baseline-from" in c for c in runner.calls[1:])  # the later jobs read the plan
    assert (tmp_path / "ci" / "calls.jsonl.pip").read_text().splitlines() == [f"install {TOOL}"] * runner.runs
    ran = sorted(c[1] for c in runner.calls if c[0] == "run")
    assert ran == sorted([r["entry"] for r in rows] + [r["entry"] for r in follow] +
                         [r["then_entry"] for r in follow if r["then_entry"]])
    return runner


def _planned(tmp_path: Path) -> dict[str, matrix.Entry]:
    """The plan job's plan, as its artifact holds it."""
    return plan.read(tmp_path / "ci" / "artifacts" / "run-plan" / "reports" / plan.PLAN_FILE)


def _same_verdict(runner: Runner, tmp_path: Path, local: Path, local_code: int) -> None:
    verdict = tmp_path / "ci" / "artifacts" / "upgrade-reports" / "reports"
    for name in SUMMARIES:
        assert _timeless((verdict / name).read_text()) == _timeless((local / name).read_text()), name
    assert runner.steps["judge"]["steps.upgrade.outputs.status"] == str(local_code)  # the last step fails with it
    summary = (tmp_path / "ci" / "summary.md").read_text()
    assert _timeless(summary) == _timeless((local / "upgrade-summary.md").read_text()) + (
        "\n[HTML report](https://github.example/team/repo/actions/runs/42/artifacts/"
        f"{len(runner.artifacts)})\n")


@pytest.mark.parametrize("relocked", [False, True], ids=["bot-without-lock", "with-new-lock"])
def test_a_bump_run_job_by_job_gives_the_verdict_of_upgrade_on_its_diff(repository, tmp_path, monkeypatch, relocked):
    """A bot's bump of the pins file alone; or the same bump with the lock re-locked to it, which the baseline
    (main's pins, resolved for the run) does not read either."""
    if relocked:
        (repository / "locks" / "baseline.txt").write_text(_checkout_lock(MATRIX.candidate))
        _git(repository, "commit", "-q", "-am", "re-locked")
    local_sessions = Sessions(_sources(changed=True))
    local_code, local = _upgrade(repository, tmp_path, monkeypatch, local_sessions, *DIFF)
    assert local_code == 1
    ci_sessions = Sessions(_sources(changed=True))
    runner = _run_workflow(repository, tmp_path, monkeypatch, ci_sessions)
    planned = _planned(tmp_path)
    assert planned[matrix.BASELINE].pins == MATRIX.baseline and planned[matrix.CANDIDATE].pins == MATRIX.candidate
    assert (planned[matrix.BASELINE].pins_from, planned[matrix.CANDIDATE].pins_from) == (
        f"origin/main:{PINS_FILE}", PINS_FILE)
    assert runner.outputs["followups"]["count"] != "0"
    assert sorted(ci_sessions.runs) == sorted(local_sessions.runs)  # the same sessions, as jobs
    _same_verdict(runner, tmp_path, local, local_code)


def test_without_the_diff_a_plain_upgrade_on_the_branch_judges_its_bump_as_the_workflow_does(
        repository, tmp_path, monkeypatch, capsys):
    """Plain `upgrade` on a branch whose pins bump main's: judged as with the workflow's options (never the
    branch's pins as the baseline, refused for main's stale lock), and it says so."""
    with_diff, _ = _upgrade(repository, tmp_path / "diff", monkeypatch, Sessions(_sources(changed=True)), *DIFF)
    capsys.readouterr()
    code, _ = _upgrade(repository, tmp_path / "plain", monkeypatch, Sessions(_sources(changed=True)))
    said = capsys.readouterr()
    assert code == with_diff == 1, said.err
    assert "judging that bump, as the pull-request check does" in said.out
    assert f"--baseline-from main:{PINS_FILE} --candidate-from {PINS_FILE}" in said.out
    assert "no longer matches the baseline pins" not in said.err


def test_a_pull_request_that_changes_only_contracts_gets_a_verdict(tmp_path, monkeypatch):
    """Pins equal on both sides: one stack, judged (exit 0 when nothing changed), not refused."""
    repository = _repository(tmp_path / "repo", monkeypatch, {
        "contracts/test_more.py": "def test_more(check):\n    check.exact('y', 2, 2)\n"})
    local_code, local = _upgrade(repository, tmp_path, monkeypatch, Sessions(_sources(changed=False)), *DIFF)
    assert local_code == 0
    runner = _run_workflow(repository, tmp_path, monkeypatch, Sessions(_sources(changed=False)))
    planned = _planned(tmp_path)
    assert list(planned) == [matrix.BASELINE, matrix.CANDIDATE]  # no bump to attribute
    assert planned[matrix.BASELINE].pins == planned[matrix.CANDIDATE].pins == MATRIX.baseline
    _same_verdict(runner, tmp_path, local, local_code)
