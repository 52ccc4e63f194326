"""examples/nnx-regressor end to end, as a team would use the harness: a scratch copy outside this
checkout, the harness installed from a read-only copy of the checkout into a tool environment of its
own (conftest's `tool`), `init`, golden values recorded, then upgrades against the default candidate.
A changed learning rate in the example's training code must be reported as a changed contract of the
example's own family, and restoring it must make the run clean again. Through all of it nothing is
written into the checkout the tool was installed from, and every entry installs the harness from one
wheel, built once.

Only the example's own contracts run here (`--no-builtin`): the built-in ones have their own tests,
and running them three more times would add minutes without testing anything new.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from support.team_run import EXAMPLE, run_tool, said

pytestmark = pytest.mark.long_running(72)  # installs the example's stacks and runs three upgrades

TRAIN = Path("regressor") / "train.py"
LR_LINE = "LEARNING_RATE = 3e-3"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("team") / "nnx-regressor"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__", ".nox", "reports", "golden", "locks"))
    return copy


def _summary(project: Path) -> dict:
    return json.loads((project / "reports" / "upgrade-summary.json").read_text())


def _installed_from(project: Path) -> set[Path]:
    """Where each entry environment's harness came from (its PEP 610 record: a file:// URL)."""
    records = project.glob(".nox/*/lib/python*/site-packages/upgrade_harness-*.dist-info/direct_url.json")
    return {Path(unquote(urlparse(json.loads(record.read_text())["url"]).path)) for record in records}


def test_the_example_project_end_to_end(tool, checkout_copy, project):
    done = run_tool(tool, project, "init")
    assert done.returncode == 0, said(done)
    assert "baseline from requirements.txt" in done.stdout
    table = (project / "pyproject.toml").read_text()
    assert 'baseline-from = "requirements.txt"' in table and 'contracts = ["contracts"]' in table
    assert (project / "noxfile.py").is_file()

    done = run_tool(tool, project, "golden", "--no-builtin")
    assert done.returncode == 0, said(done)
    recorded = json.loads((project / "golden" / "regressor.json").read_text())
    assert recorded["provenance"]["versions"]["optax"] == "0.2.6"  # from the example's requirements.txt
    assert len([k for k in recorded["values"] if k.startswith("loss/ministep")]) == 12
    assert (project / "locks" / "baseline.txt").is_file()  # written on first use, for the team to commit
    assert not (project / "golden" / "accumulation.json").exists()  # the built-in ones were switched off

    done = run_tool(tool, project, "upgrade", "--no-builtin")
    assert done.returncode == 0, said(done)  # the default candidate keeps the example's contracts
    summary = _summary(project)
    assert summary["entries"][0]["versions"]["optax"] == "0.2.8"  # the harness's default candidate
    assert [f["name"] for f in summary["own_families"]] == ["regressor"]
    assert summary["own_families"][0]["checks"] == 2 and not summary["own_families"][0]["changed"]
    assert "your contracts  regressor: 2 checks, unchanged on candidate" in done.stdout

    train = project / TRAIN
    original = train.read_text()
    assert original.count(LR_LINE) == 1
    train.write_text(original.replace(LR_LINE, "LEARNING_RATE = 4e-3"))
    done = run_tool(tool, project, "upgrade", "--no-builtin")
    assert done.returncode == 1, said(done)
    summary = _summary(project)
    assert summary["headline"].startswith("CHANGED: 1 check of your own contracts fails on the baseline itself "
                                          "(regressor/test_loss_trajectory)"), summary["headline"]
    assert summary["own_families"][0]["failing_on_baseline"] == ["regressor/test_loss_trajectory"]
    assert "regressor: 2 checks, 1 failing on the baseline itself" in done.stdout

    train.write_text(original)
    done = run_tool(tool, project, "upgrade", "--no-builtin")
    assert done.returncode == 0, said(done)
    assert _summary(project)["headline"].startswith("OK: no contract changed")

    wheels = list((project / ".nox" / "harness-wheel").glob("*/*.whl"))
    assert len(wheels) == 1, wheels  # the same harness all along: built once
    environments = {e.name for e in (project / ".nox").iterdir() if (e / "bin" / "python").exists()}
    assert environments >= {"baseline", "candidate"}
    assert _installed_from(project) == {wheels[0]}
    checkout_copy.assert_unchanged()
