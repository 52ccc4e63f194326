"""Running the installed `upgrade-harness` command in a team's project, as the team's shell would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from harness.contract import shared_compilation_cache

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "nnx-regressor"
# The JAX compilation cache the teams of one test session share (tests/conftest.py sets it), as a team's CI
# shares one between its projects and runs: each team's first entries load what an earlier team compiled.
SHARED_COMPILATION_CACHE: list[Path] = []


def run_tool(tool: Path, project: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    # The team's shell, not this test session's: no HARNESS_* variable of the harness's own run leaks in.
    # UV_PYTHON and VIRTUAL_ENV (nox's, naming this test session's environment) are kept on purpose: a
    # user's shell may have them too, and no install of the harness's may land anywhere but its entry's.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    if SHARED_COMPILATION_CACHE:
        env[shared_compilation_cache.VARIABLE] = str(SHARED_COMPILATION_CACHE[0])
    return subprocess.run([str(tool), *args], cwd=project, env=env, capture_output=True, text=True, check=False,
                          timeout=timeout)


def said(done: subprocess.CompletedProcess) -> str:
    return f"exit {done.returncode}\n--- stdout\n{done.stdout[-6000:]}\n--- stderr\n{done.stderr[-4000:]}"
