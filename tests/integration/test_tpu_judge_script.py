"""examples/tpu-host/judge.sh, the TPU host's recipe (docs/accelerators.md), run here with a stand-in for the tool:
it ends with the harness's status, the largest of the steps it ran on either side (it ended with its last `tar`'s,
2 after a good recording and 0 after CHANGED), and each side's archive holds that side's golden values (the CPU's
are the golden directory itself: cpu.tgz held none). The chip itself is not needed: the tool is the stand-in."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

from harness.stack import paths

SCRIPT = paths.SOURCE / "examples" / "tpu-host" / "judge.sh"
# `upgrade-harness` as judge.sh calls it: `init` writes a table; `golden` records a built-in copy (and the chip's
# values under platforms/); `golden` and `upgrade` exit with the status each side is told.
STAND_IN = """#!/usr/bin/env bash
side=$(basename "$PWD")
case "$1" in
  init) printf '[tool.upgrade-harness]\\npythonpath = ["."]\\n' > pyproject.toml ;;
  golden) mkdir -p golden/builtin "golden/platforms/$side"; echo '{}' > golden/builtin/clipping.json
          [ "$side" = cpu ] || echo '{}' > "golden/platforms/$side/clipping.json"
          status=GOLDEN_$side; exit "${!status:-0}" ;;
  upgrade) echo "VERDICT  as told"; echo '# verdict' > reports/upgrade-summary.md; echo '{}' > reports/upgrade-summary.json
           status=UPGRADE_$side; exit "${!status:-0}" ;;
esac
"""


def _run(work: Path, out: Path, steps: str, **statuses: str) -> subprocess.CompletedProcess:
    tool = work / "tool" / "bin" / "upgrade-harness"
    if not tool.exists():
        tool.parent.mkdir(parents=True)
        tool.write_text(STAND_IN)
        tool.chmod(0o755)
    out.mkdir(exist_ok=True)
    env = {**os.environ, "STEPS": steps, "OUT": str(out), **statuses}
    return subprocess.run(["bash", str(SCRIPT), str(work)], cwd=paths.SOURCE, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_script_ends_with_the_harness_status_of_the_steps_it_ran(tmp_path):
    work = tmp_path / "w"
    done = _run(work, tmp_path / "out1", "golden upgrade", UPGRADE_tpu="1")
    assert done.returncode == 1, done.stdout + done.stderr  # the chip's verdict CHANGED, the CPU's OK
    assert _run(work, tmp_path / "out2", "golden", GOLDEN_cpu="2").returncode == 2  # a recording that failed
    refused = _run(work, tmp_path / "out3", "upgrade")  # never judged against values it did not write
    assert refused.returncode == 2 and "cpu: upgrade not run: no golden values were recorded on cpu (golden exit 2" \
        in refused.stdout, refused.stdout
    assert not (work / "cpu" / "upgrade.log").exists() and (work / "tpu" / "upgrade.log").exists()
    assert _run(work, tmp_path / "out4", "golden").returncode == 0  # recorded again
    assert _run(work, tmp_path / "out5", "upgrade").returncode == 0  # the earlier recording's status is not this one's
    assert _run(work, tmp_path / "out6", "upgrade", UPGRADE_cpu="1").returncode == 1
    assert _run(work, tmp_path / "out7", "golden upgrade", GOLDEN_tpu="1").returncode == 2  # in one command too
    assert "tpu: upgrade not run" in _run(work, tmp_path / "out8", "upgrade").stdout


def test_each_sides_archive_holds_its_own_golden_values(tmp_path):
    out = tmp_path / "out"
    assert _run(tmp_path / "w", out, "golden upgrade").returncode == 0
    with tarfile.open(out / "cpu.tgz") as cpu, tarfile.open(out / "tpu.tgz") as tpu:
        cpu_names, tpu_names = set(cpu.getnames()), set(tpu.getnames())
    assert "golden/builtin/clipping.json" in cpu_names and not any("platforms" in n for n in cpu_names)
    assert "golden/platforms/tpu/clipping.json" in tpu_names and "golden/builtin/clipping.json" not in tpu_names
    assert {"init.log", "golden.log", "upgrade.log", "reports/upgrade-summary.md"} <= cpu_names & tpu_names


def test_one_side_a_command_runs_only_that_side_and_keeps_the_others(tmp_path):
    """SIDES=cpu then SIDES=tpu: a step split into one platform a command, for a host that limits a command's
    time; each command's status is its side's, and a side's recording leaves the other side's project alone."""
    work = tmp_path / "w"
    assert _run(work, tmp_path / "out0", "golden", SIDES="cpu").returncode == 0
    assert (work / "cpu" / "golden.status").exists() and not (work / "tpu").exists()
    assert _run(work, tmp_path / "out1", "golden", SIDES="tpu", GOLDEN_tpu="2").returncode == 2
    assert (work / "cpu" / "golden" / "builtin" / "clipping.json").exists()  # the CPU's recording kept
    assert _run(work, tmp_path / "out2", "upgrade", SIDES="cpu", UPGRADE_tpu="1").returncode == 0  # the chip not run
    assert not (work / "tpu" / "upgrade.status").exists()
    assert _run(work, tmp_path / "out9", "upgrade", SIDES="tpu", UPGRADE_tpu="1").returncode == 2  # not recorded
    assert _run(work, tmp_path / "out10", "golden", SIDES="tpu").returncode == 0
    assert _run(work, tmp_path / "out3", "upgrade", SIDES="tpu", UPGRADE_tpu="1").returncode == 1
    assert sorted(p.name for p in (tmp_path / "out3").iterdir()) == ["tpu.tgz"]
