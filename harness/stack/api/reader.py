"""The API diff run under the matrix's Python: griffe parses with the interpreter it runs in, and jax
writes 3.12-only syntax (jax's api.py, core.py, config.py, lax_numpy.py, loops.py do not parse under 3.11).
So the diff runs as a subprocess (harness.stack.api.worker) in a small environment of that Python holding
only griffe, at the host's own griffe version (locks/runner.txt pins it): made once with uv under
`.nox/api-reader/`, reused while that version holds. Nothing is installed into an entry's environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from harness.errors import HarnessError
from harness.model import api_diff
from harness.stack import paths
from harness.stack.environments import host_libraries, uv_program
from harness.stack.environments.interpreters import find_python

_MARK = ".harness-api-reader"  # in the environment: the griffe requirement it was made with
# Loads the harness package from where the host runs it, and nothing else of the host's site-packages.
_BOOT = """import importlib.util, sys
package = sys.argv[1]
spec = importlib.util.spec_from_file_location("harness", package + "/__init__.py", submodule_search_locations=[package])
sys.modules["harness"] = module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from harness.stack.api import worker
sys.exit(worker.main(sys.argv[2:]))
"""


def requirement() -> str:
    """The host's griffe, pinned: what the reader environment holds. HarnessError when the host has none
    (`judge DIR` and `followups` have no preflight to say so first)."""
    try:
        return f"griffe=={metadata.version('griffe')}"
    except metadata.PackageNotFoundError:
        raise HarnessError(host_libraries.problem() or f"griffe is not installed for {sys.executable}; install "
                           "the runner tools with `.venv/bin/pip install -r locks/runner.txt`.") from None


def _interpreter(home: Path) -> Path:
    return home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def uv_binary() -> str:
    """uv (the runner's own, else one on PATH), or HarnessError saying how to get it."""
    found = uv_program.uv()
    if found is None:
        raise HarnessError("uv is not installed; install the runner tools with `pip install -r locks/runner.txt`.")
    return found


def run_uv(cmd: list[str], what: str, offline: bool = False) -> None:
    """Run a uv command; HarnessError naming `what` could not be done, with uv's last words, when it fails.
    `offline`: from uv's cache only (`upgrade --offline`, RunOptions.offline)."""
    cmd = [*cmd, "--offline"] if offline else cmd
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise HarnessError(f"could not {what} ({'; '.join(tail) or f'exit status {done.returncode}'}); "
                           "check that uv can reach the package index, then run again.")


def environment(homes: Path, python: str, offline: bool = False) -> Path:
    """The interpreter of the reader environment for Python `python` under `homes`, made when missing."""
    home, pin = homes / f"python{python}", requirement()
    mark = home / _MARK
    if mark.is_file() and mark.read_text().strip() == pin and _interpreter(home).is_file():
        return _interpreter(home)
    uv = uv_binary()
    shutil.rmtree(home, ignore_errors=True)
    run_uv([uv, "venv", "--quiet", "--no-python-downloads", "--python", find_python(python), str(home)],
         f"make the Python {python} environment the API diff reads sources with", offline)
    run_uv([uv, "pip", "install", "--quiet", "--python", str(_interpreter(home)), pin], f"install {pin} into {home}",
           offline)
    mark.write_text(pin + "\n")
    return _interpreter(home)


def run(homes: Path, python: str, request: dict, offline: bool = False) -> api_diff.ApiDiff:
    """The API diff `request` describes (harness.stack.api.worker), computed under Python `python`."""
    interpreter = environment(homes, python, offline)
    with tempfile.TemporaryDirectory(prefix="api-diff-") as tmp:
        asked, out = Path(tmp) / "request.json", Path(tmp) / api_diff.API_DIFF_FILE
        asked.write_text(json.dumps(dict(request, output=str(out))))
        done = subprocess.run([str(interpreter), "-I", "-c", _BOOT, str(paths.PACKAGE), str(asked)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0 or not out.is_file():
            tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            print(done.stderr, file=sys.stderr, end="")
            raise HarnessError(f"the API diff failed under Python {python} ({tail[0]})")
        return api_diff.read(out)
