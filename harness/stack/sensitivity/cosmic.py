"""Driving cosmic-ray: its configuration, the test command a mutant is judged by, its workers.

Every cosmic-ray process and every test run gets the worker's environment: the contract suite's
variables (report, golden values, Hypothesis's derandomized `ci` profile, JAX's persistent compilation
cache shared by all mutants), and the worker's copy of optax first on PYTHONPATH.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import subprocess
import time
from pathlib import Path

from harness import env_vars
from harness.errors import HarnessError
from harness.stack import boundary, paths

SESSION_FILE = "session.sqlite"


def test_command(python: Path, root: Path, files: list[Path]) -> str:
    """pytest on the families' contract files: -x (the first failure kills the mutant), no cache."""
    args = [str(python), "-m", "pytest", "-c", str(paths.SUITE_INI), "--rootdir", str(root), "-q", "-x",
            "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "harness.contract.plugin",
            *(str(f) for f in files)]
    return shlex.join(args)


def worker_environment(suite_env: dict[str, str], work: Path, venv: Path) -> dict[str, str]:
    """The environment of worker `work`: its optax copy first on the path, its own report and temp dir."""
    return {**boundary.child_environment(extra=suite_env),
            "PYTHONPATH": str(work), env_vars.REPORT: str(work / "report.json"),
            "PYTEST_ADDOPTS": f"--basetemp={work / 'pytest-tmp'}",
            "PATH": f"{venv / 'bin'}{os.pathsep}{boundary.given('PATH') or ''}", "VIRTUAL_ENV": str(venv)}


def write_config(path: Path, modules: tuple[str, ...], command: str, timeout: float,
                 worker_urls: list[str]) -> Path:
    """cosmic-ray's configuration of one group; module paths relative to a worker's directory."""
    # JSON's strings and arrays are TOML's too: no TOML writer needed on the host.
    lines = ["[cosmic-ray]", f"module-path = {json.dumps(list(modules))}", f"timeout = {float(timeout)}",
             "excluded-modules = []", f"test-command = {json.dumps(command)}", "",
             "[cosmic-ray.distributor]", f"name = {json.dumps('http' if worker_urls else 'local')}"]
    if worker_urls:
        lines += ["", "[cosmic-ray.distributor.http]", f"worker-urls = {json.dumps(worker_urls)}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def http_workers(venv: Path, environments: list[tuple[Path, dict[str, str]]]):
    """cosmic-ray's HTTP workers (its handler, on 127.0.0.1), one per (work directory, environment); yields
    their URLs and stops them (only these processes) when the block ends."""
    started: list[subprocess.Popen] = []
    urls = []
    try:
        for work, env in environments:
            port = free_port()
            log = open(work / "http-worker.log", "w")
            command = [str(venv / "bin" / "python"), "-m", "harness.stack.sensitivity.http_worker", str(port)]
            started.append(subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT))
            urls.append(f"http://127.0.0.1:{port}")
        for url, proc in zip(urls, started):
            _wait_listening(int(url.rsplit(":", 1)[1]), proc)
        yield urls
    finally:
        for proc in started:
            proc.terminate()
        for proc in started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            if proc.poll() is None:
                proc.kill()


def _wait_listening(port: int, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise HarnessError(f"cosmic-ray's http-worker on port {port} exited ({proc.returncode}); see its "
                               "http-worker.log in the sensitivity work directory")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.2)
    raise HarnessError(f"cosmic-ray's http-worker on port {port} did not start listening in {seconds:.0f} s")
