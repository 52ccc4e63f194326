"""A team's first run, from nothing, as docs/your-own-contracts.md ("Your first run") tells it: a project
with training code, its own tests and exact pins, no harness files. The tool is installed from a
read-only copy of this checkout; `init` writes the table, the noxfile and contracts/; the team writes a
contract that records `float(loss)` of its float32 training loop; `upgrade --no-builtin` before any golden
value exists says it cannot judge (exit 2) and how to record them; `golden`; `upgrade --no-builtin` on
the default candidate says "bits changed" and exits 0 (a float32 loss moved by a few float32 ulps is not
a change); the same upgrade again reuses both reports (nothing that determines them changed) and gives
the same verdict (its time printed), and `--fresh` the same verdict again; the team's own `pytest` still passes;
and the checkout's copy is unchanged.

Each step's wall time is printed (pytest -s) for docs/your-own-contracts.md and docs/budget.md.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.team_run import EXAMPLE, run_tool, said

pytestmark = pytest.mark.long_running(50)  # installs four stacks, records golden values and upgrades three times

CONTRACT = '''
from regressor import train


def test_losses(check):
    """The loss of every mini-step of six optimizer steps, as a training script logs it."""
    for step, loss in enumerate(train.train(steps=6)):
        check.golden(f"loss/step{step}", float(loss))
'''
TEAMS_OWN_TEST = '''
from regressor import train


def test_the_schedule_warms_up():
    assert float(train.schedule()(0)) == 0.0 and float(train.schedule()(train.WARMUP_STEPS)) > 0.0
'''


def _without_reuse(summary: dict) -> dict:
    """The verdict as judged: where its reports came from set aside."""
    return {**summary, "baseline": {**summary["baseline"], "reused": None},
            "entries": [{**e, "reused": None} for e in summary["entries"]]}


def _timed(times: dict, step: str, done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    times[step] = time.perf_counter() - times.pop("_start")
    return done


def test_a_teams_first_run_from_nothing(tool, checkout_copy, tmp_path):
    project = tmp_path / "team"
    shutil.copytree(EXAMPLE / "regressor", project / "regressor", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(EXAMPLE / "requirements.txt", project / "requirements.txt")
    (project / "tests").mkdir()
    (project / "tests" / "test_train.py").write_text(TEAMS_OWN_TEST)
    times: dict = {}

    times["_start"] = time.perf_counter()
    done = _timed(times, "init", run_tool(tool, project, "init"))
    assert done.returncode == 0, said(done)
    assert (project / "contracts" / "conftest.py").is_file()
    (project / "contracts" / "test_losses.py").write_text(CONTRACT)
    shipped = subprocess.run([str(tool.parent / "python"), "-c", "from harness.stack import paths; "
                              "print(paths.BUILTIN_GOLDEN)"], cwd=project, capture_output=True, text=True,
                             check=True).stdout
    assert "site-packages" in shipped and list(Path(shipped.strip()).glob("*.json"))  # the tool's own golden values

    # Before any golden value is recorded nothing can be judged: said with the command that records them,
    # exit 2, no single-package entry run for it.
    times["_start"] = time.perf_counter()
    early = _timed(times, "upgrade --no-builtin before golden", run_tool(tool, project, "upgrade", "--no-builtin"))
    assert early.returncode == 2, said(early)
    assert ("CANNOT JUDGE: 1 check of your own contracts cannot be judged on the baseline (losses/test_losses): "
            "golden file ") in early.stdout and "with `upgrade-harness golden`" in early.stdout, said(early)
    assert "attributing" not in early.stdout and "--accept-changes" not in early.stdout

    times["_start"] = time.perf_counter()
    done = _timed(times, "golden --no-builtin", run_tool(tool, project, "golden", "--no-builtin"))
    assert done.returncode == 0, said(done)
    written = json.loads((project / "golden" / "losses.json").read_text())
    recorded = written["values"]
    assert {v["precision"] for v in recorded.values()} == {"float32"}  # float(loss) of a float32 loss
    # Recorded on each host this machine emulates too (harness.host_emulation), its host named beside the values.
    assert re.search(r"golden: host noise measured for \d+ of \d+ values on the emulated hosts \(", done.stdout), \
        said(done)
    assert written["provenance"]["host"]["cpu"] and written["provenance"]["host_noise_from"]
    assert not (project / "golden" / "accumulation.json").exists()  # the built-in ones' are the tool's own
    assert "upgrade-harness golden --accept-changes" not in done.stdout  # nothing to accept on a first recording

    times["_start"] = time.perf_counter()
    done = _timed(times, "upgrade --no-builtin", run_tool(tool, project, "upgrade", "--no-builtin"))
    assert done.returncode == 0, said(done)
    summary = json.loads((project / "reports" / "upgrade-summary.json").read_text())
    assert summary["headline"].startswith("OK"), summary["headline"]
    assert summary["bits_line"] and "bits" in summary["bits_line"], summary
    assert "losses: 1 check, unchanged on candidate, 1 with bits changed" in done.stdout, done.stdout[-3000:]
    assert " reused " not in done.stdout  # the golden values recorded since: neither earlier report holds

    # The same pins again: nothing that determines either report changed, so both are reused.
    times["_start"] = time.perf_counter()
    again = _timed(times, "upgrade --no-builtin again", run_tool(tool, project, "upgrade", "--no-builtin"))
    assert again.returncode == 0, said(again)
    ran = done.stdout.count(" started   ")  # baseline, candidate and the entries attributing the moved bits
    assert again.stdout.count(" reused    the report of ") == ran >= 2 and " started " not in again.stdout, said(again)
    reran = json.loads((project / "reports" / "upgrade-summary.json").read_text())
    assert reran["baseline"]["reused"]["entry"] == "baseline" and reran["entries"][0]["reused"]["entry"] == "candidate"
    assert _without_reuse(reran) == _without_reuse(summary)
    # Its time is printed, not asserted: a wall-time budget fails on a machine other jobs load (counts above).
    times["_start"] = time.perf_counter()
    fresh = _timed(times, "upgrade --no-builtin --fresh", run_tool(tool, project, "upgrade", "--no-builtin", "--fresh"))
    assert fresh.returncode == 0 and " reused " not in fresh.stdout, said(fresh)
    assert _without_reuse(json.loads((project / "reports" / "upgrade-summary.json").read_text())) == \
        _without_reuse(summary)

    times["_start"] = time.perf_counter()
    done = _timed(times, "pytest (the team's own)", subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, capture_output=True,
        text=True, timeout=600))
    assert done.returncode == 0, said(done)
    assert "1 passed" in done.stdout and "fixture 'check' not found" not in done.stdout

    checkout_copy.assert_unchanged()
    print("\nstep times: " + ", ".join(f"{step} {seconds:.0f} s" for step, seconds in times.items()))
