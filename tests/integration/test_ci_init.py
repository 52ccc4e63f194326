"""`upgrade-harness init --ci github`: the team's workflows pass the same linters as this project's, use its
pinned actions and minimal permissions, install one pinned tool, trigger on the table's own paths, and are
never written over an existing file without --force.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/ci/test_ci_init.py."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
