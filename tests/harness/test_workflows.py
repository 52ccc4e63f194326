"""The GitHub workflows pass maintained linters, and the nightly fans out over exactly the matrix."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.stack import matrix

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def _tool(name):
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.fail(f"{name} is not installed here; `nox -s tests` installs it from locks/tests.txt")
    return path


def test_there_are_two_workflows():
    assert [p.name for p in WORKFLOWS] == ["nightly.yml", "upgrade-pr.yml"]


def test_workflows_match_the_github_schema():
    done = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                           *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflows_pass_zizmor():
    done = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", str(ROOT / ".github" / "workflows")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_nightly_fans_out_over_the_tagged_nox_sessions():
    listed = subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-l", "--json", "-t", "matrix"],
                            capture_output=True, text=True, cwd=ROOT, check=True)
    sessions = [s["session"] for s in json.loads(listed.stdout)]
    assert sessions == list(matrix.entries())
    nightly = (ROOT / ".github" / "workflows" / "nightly.yml").read_text()
    assert "python -m nox -l --json -t matrix" in nightly
    assert "fromJSON(needs.entries.outputs.entries)" in nightly


def test_pr_workflow_runs_the_upgrade_and_keeps_one_comment():
    text = (ROOT / ".github" / "workflows" / "upgrade-pr.yml").read_text()
    assert "python -m nox -s upgrade" in text and "upgrade-harness-verdict" in text
    assert "harness/stack/matrix.py" in text and "locks/**" in text
