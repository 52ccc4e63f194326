"""An upgrade's steps one by one (CI's matrix jobs) and `judge DIR`: the same follow-ups and the same verdict as
`nox -s upgrade`, from real reports of the default matrix (upgrade_reports) written where and as each entry's
session writes them; a missing, foreign or corrupt report stops the judge naming the file and the fix.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_fanout.py."""

import json
import shutil
from pathlib import Path

import pytest

from harness.stack.pins import matrix, plan
from harness.stack.commands import fanout
from support.fake_libraries import Libraries
from harness.stack import paths
from harness.stack.workspace import Workspace
from harness.stack.run import api_diff as for_run
from harness.stack.api import sources


@pytest.fixture(autouse=True)
def libraries(tmp_path_factory, monkeypatch) -> Libraries:
    """The entries' libraries for the API diff: none unless a test says where (no index reached, no section)."""
    found = Libraries(tmp_path_factory.mktemp("libraries"))
    monkeypatch.setattr(for_run, "site_packages", found.site_packages)
    monkeypatch.setattr(sources, "fetch", found.fetch)
    # computed diffs kept apart from this checkout's (keyed by versions: the made-up packages carry real ones)
    monkeypatch.setattr(for_run, "CACHE", str(found.root / "cache"))
    return found


CHECKOUT = Workspace.of(paths.SOURCE)  # the judge and followups steps take their directory as an argument


def test_judge_needs_a_directory(tmp_path, capsys):
    assert fanout.judge_directory(CHECKOUT, [str(tmp_path / "absent")], None) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert fanout.judge_directory(CHECKOUT, [], None) == 2


def test_the_plans_locks_are_found_where_the_plan_is_moved(tmp_path):
    """A CI job downloads the plan elsewhere; a finished run publishes it out of its run directory."""
    made = tmp_path / "run" / "locks" / "candidate.txt"
    made.parent.mkdir(parents=True)
    made.write_text("jax==0.12.0.1\n")
    entry = matrix.Entry("candidate", {"jax": "0.12.0.1"}, "c", locked=False, lock_file=str(made))
    plan.write([entry], tmp_path / "run" / plan.PLAN_FILE)
    assert json.loads((tmp_path / "run" / plan.PLAN_FILE).read_text())[0]["lock_file"] == "locks/candidate.txt"
    shutil.move(tmp_path / "run", tmp_path / "moved")
    lock = Path(plan.read(tmp_path / "moved" / plan.PLAN_FILE)["candidate"].lock_file)
    assert lock == tmp_path / "moved" / "locks" / "candidate.txt" and lock.read_text() == "jax==0.12.0.1\n"
