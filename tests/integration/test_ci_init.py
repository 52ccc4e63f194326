"""`upgrade-harness init --ci github`: the team's workflows pass the same linters as this project's, use its
pinned actions and minimal permissions, install one pinned tool, trigger on the table's own paths, and are
never written over an existing file without --force.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/ci/test_ci_init.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.stack.commands import init
from harness.stack.project import CODE

from unit.stack.ci.test_ci_init import (  # noqa: F401 (fixtures and helpers shared with it)
    PINS, TOOL, WRITTEN, _load, project, team,
)


def _tool(name):
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.fail(f"{name} is not installed here; `nox -s tests` installs it from locks/tests.txt")
    return str(path)


def test_init_writes_both_workflows_and_they_match_the_github_schema(project):
    assert all((project / p).is_file() for p in WRITTEN)
    done = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                           *(str(project / p) for p in WRITTEN)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_workflows_pass_zizmor_pedantic(project):
    done = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--pedantic", "--strict-collection",
                           *(str(project / p) for p in WRITTEN)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr




def test_the_install_step_hands_pip_the_requirement_as_one_argument(project, tmp_path):
    """The requirement has spaces (`name @ url`): the step must pass it whole."""
    step = next(s for s in _load(project, WRITTEN[0])["jobs"]["plan"]["steps"] if "pip\" install" in s.get("run", ""))
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "python").write_text('#!/bin/sh\nmkdir -p "$3/bin"\nprintf \'#!/bin/sh\\nprintf "%%s\\\\n" "$@" > "%s/pip-args"\\n\' '
                                 f'"{tmp_path}" > "$3/bin/pip"\nchmod +x "$3/bin/pip"\n')
    (fake / "python").chmod(0o755)
    env = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "RUNNER_TEMP": str(tmp_path / "temp"),
           "UPGRADE_HARNESS_FROM": TOOL}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "pip-args").read_text().splitlines() == ["install", TOOL]


@pytest.mark.parametrize("event, base_ref, expected", [("pull_request", "main", "origin/main"),
                                                       ("push", "", "origin/trunk")])
def test_the_plan_judges_the_base_branchs_pins_and_on_a_push_the_branchs_own(project, tmp_path, event, base_ref,
                                                                            expected):
    """A pull request: its pins against its base branch's. A push to the default branch (no base branch): that
    branch's pins against themselves, one stack, whose reports its jobs save for the pull requests to come."""
    (step,) = [s for s in _load(project, WRITTEN[0])["jobs"]["plan"]["steps"] if s.get("id") == "plan"]
    tool = tmp_path / "temp" / "upgrade-harness" / "bin" / "upgrade-harness"
    tool.parent.mkdir(parents=True)
    tool.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{tmp_path}/tool-args"\n')
    tool.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path / "temp"), "BASE_REF": base_ref,
           "GITHUB_REF_NAME": "trunk", "PINS_FILE": "requirements.txt"}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "tool-args").read_text().splitlines() == [
        "plan", "--baseline-from", f"{expected}:requirements.txt", "--candidate-from", "requirements.txt"]


def test_pull_requests_that_change_the_tables_paths_run_it_and_the_nightly_judges_the_newest_releases(tmp_path):
    root = team(tmp_path, "--contracts", "checks/optimizer", pins_file="deps/pins.txt")
    pr, nightly = (_load(root, p) for p in WRITTEN)
    on = pr.get("on", pr.get(True))  # PyYAML reads the key `on` as True
    # never pull_request_target: a fork's code gets no write token. And the same paths merged into the default
    # branch (no clone's origin/HEAD here: main), whose runs save the reports pull requests reuse.
    assert list(on) == ["pull_request", "push"]
    # the training code too (the table's pythonpath, "." by default): the files of it that the reuse key reads
    code = [f"**/*{suffix}" for suffix in CODE]
    assert on["pull_request"]["paths"] == ["deps/pins.txt", "pyproject.toml", "locks/**", "golden/**",
                                           "checks/optimizer/**", *code, ".github/workflows/upgrade-harness-pr.yml"]
    assert on["push"] == {"branches": ["main"], "paths": on["pull_request"]["paths"]}
    (step,) = [s for s in pr["jobs"]["plan"]["steps"] if s.get("id") == "plan"]
    # the pull request's pins against its base branch's (on the default branch, its own: one stack): the
    # branch and the path reach the script by env only
    assert step["run"].strip().endswith('upgrade-harness" plan --baseline-from "origin/${BASE_REF:-$GITHUB_REF_NAME}'
                                        ':$PINS_FILE" --candidate-from "$PINS_FILE"')
    assert step["env"] == {"BASE_REF": "${{ github.base_ref }}", "PINS_FILE": "deps/pins.txt"}
    assert not any("${{" in s.get("run", "") for job in pr["jobs"].values() for s in job["steps"])
    assert not any("if" in job and "actor" in job["if"] for job in pr["jobs"].values())  # bots' pull requests too
    night = nightly.get("on", nightly.get(True))
    assert set(night) == {"schedule", "workflow_dispatch"}
    steps = [s.get("run", "") for s in nightly["jobs"]["plan"]["steps"]]
    assert any(r.strip().endswith("plan --candidate latest") for r in steps)
    assert all(nightly["jobs"][j]["env"]["HARNESS_PROFILE"] == "nightly" for j in ("entry", "followup"))
    assert list(pr["jobs"]) == list(nightly["jobs"]) == ["plan", "entry", "followups", "followup", "judge"]
    # only the pull request's plan fetches the base branch; every later job reads the plan, not git
    fetched = {(w, name) for w, workflow in (("pr", pr), ("nightly", nightly)) for name, job in workflow["jobs"].items()
               for s in job["steps"] if "fetch-depth" in s.get("with", {})}
    assert fetched == {("pr", "plan")}
    assert next(s for s in pr["jobs"]["plan"]["steps"] if "fetch-depth" in s.get("with", {}))["with"] == {
        "persist-credentials": False, "fetch-depth": 0}
    assert not any("BASE_REF" in json.dumps(job) for name, job in pr["jobs"].items() if name != "plan")


def test_a_pull_request_that_changes_the_training_code_runs_the_check(tmp_path):
    """Found: the workflow triggered on the pins, locks, golden values and contracts, not on the training code
    the contracts import (the table's pythonpath): a pull request changing src/trainer/optim.py ran nothing."""
    root = tmp_path / "team"
    (root / "src" / "trainer").mkdir(parents=True)
    (root / "tools").mkdir()
    team(root)
    table = (root / "pyproject.toml").read_text()
    (root / "pyproject.toml").write_text(table.replace('pythonpath = ["."]', 'pythonpath = ["src", "tools"]'))
    assert init.main(["--ci", "github", "--tool-from", TOOL, "--force"], root) == 0  # written again
    on = _load(root, WRITTEN[0])
    paths = on.get("on", on.get(True))["pull_request"]["paths"]
    assert "src/**/*.py" in paths and "tools/**/*.py" in paths and "src/**/*.toml" in paths
    assert "**/*.py" not in paths  # only the folders the contracts import from


def test_a_pull_request_that_edits_only_the_locks_sources_runs_the_check(tmp_path):
    """Found (issue 53): pins compiled by pip-tools from requirements.in: a pull request that edited only the source
    triggered nothing, so the tool's own "requirements.in and requirements.txt disagree" never reached it. Every
    file the pins are compiled from (beside the lock, and those its header names) now triggers it."""
    root = tmp_path / "team"
    (root / "deps").mkdir(parents=True)
    (root / "requirements.in").write_text("jax\noptax\nflax\n")
    (root / "deps" / "extra.in").write_text("numpy\n")
    header = "#\n# This file is autogenerated by pip-compile\n#    pip-compile --output-file=requirements.txt " \
             "requirements.in deps/extra.in\n#\n"
    (root / "requirements.txt").write_text(header + PINS)
    assert init.main(["--ci", "github", "--tool-from", TOOL], root) == 0
    on = _load(root, WRITTEN[0])
    paths = on.get("on", on.get(True))["pull_request"]["paths"]
    assert paths[:3] == ["requirements.txt", "requirements.in", "deps/extra.in"]
    alone = team(tmp_path / "plain")  # pins with no sources: nothing more
    plain = _load(alone, WRITTEN[0])
    assert not any(p.endswith(".in") for p in plain.get("on", plain.get(True))["pull_request"]["paths"])


def test_the_default_branch_is_the_clones_origin_head(tmp_path):
    from harness.stack.ci import init_ci

    assert init_ci.default_branch(tmp_path) == "main"  # not a repository: the usual name
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "symbolic-ref", "refs/remotes/origin/HEAD",
                    "refs/remotes/origin/trunk"], check=True)
    assert init_ci.default_branch(tmp_path) == "trunk"


def test_an_existing_workflow_is_refused_naming_it_and_force(tmp_path, capsys):
    root = team(tmp_path)
    (root / WRITTEN[1]).write_text("# the team's own edits\n")
    before = {p: (root / p).read_text() for p in WRITTEN}
    with pytest.raises(HarnessError, match=r"upgrade-harness-pr\.yml, .*upgrade-harness-nightly\.yml .*--force"):
        init.main(["--ci", "github", "--tool-from", TOOL], root)
    assert {p: (root / p).read_text() for p in WRITTEN} == before
    assert init.main(["--ci", "github", "--tool-from", TOOL, "--force"], root) == 0  # the table stays as it was
    assert (root / WRITTEN[1]).read_text() != before[WRITTEN[1]]
    assert "wrote .github/workflows/upgrade-harness-nightly.yml" in capsys.readouterr().out
