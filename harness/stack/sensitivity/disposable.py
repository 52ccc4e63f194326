"""The environment mutants run in: the baseline's lock, the harness and cosmic-ray, in the sensitivity
session's own virtualenv, never an entry's. cosmic-ray rewrites a module file in place (truncating it),
and uv links installed files from its cache: mutating a linked file would change that file in the cache
and in every environment linked to it. So no installed file is ever mutated: each worker gets its own
copy of the packages it mutates (optax, and jax for jax.nn's module: new files, own inodes) in a work directory, put first on its PYTHONPATH.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.entry_side.entry import harness_requirement
from harness.stack.environments import harness_source
from harness.stack.environments.uv_program import uv
from harness.stack.workspace import Workspace
from harness.stack import boundary

LOCK = "sensitivity.txt"  # cosmic-ray and its dependencies, resolved against the baseline's lock


def check_disposable(venv: Path, entry_envs: list[Path]) -> None:
    """Refuse to work in an entry's environment (or one inside it): its files must never be mutated."""
    venv = venv.resolve()
    for env in entry_envs:
        env = env.resolve()
        if venv == env or env in venv.parents or venv in env.parents:
            raise HarnessError(f"the sensitivity environment {venv} overlaps the entry environment {env}: mutants "
                               "run only in an environment of their own; run `nox -s sensitivity`.")


def install(session, ws: Workspace, baseline_lock: Path) -> None:
    """The session's environment holds exactly the baseline's stack, the harness and cosmic-ray."""
    venv = Path(session.virtualenv.location)
    itself = harness_requirement(harness_source.install_args(ws), str(venv))
    args = ["pip", "sync", "--quiet", str(baseline_lock), str(ws.root / "locks" / LOCK), str(itself),
            "--python", str(venv / "bin" / "python")]
    installer = uv()
    if installer is None:
        session.error("uv is not installed; install the runner tools with `pip install -r locks/runner.txt`")
    env = boundary.child_environment(extra={"VIRTUAL_ENV": str(venv)})
    if subprocess.run([installer, *args, "--offline"], env=env, capture_output=True).returncode != 0:
        session.run_install(installer, *args, external=True, env={"VIRTUAL_ENV": str(venv)})


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    if not found:
        raise HarnessError(f"no site-packages in {venv}: remove it and run `nox -s sensitivity` again")
    return found[0]


def worker_copy(venv: Path, work: Path, packages: tuple[str, ...] = ("optax",)) -> Path:
    """A fresh copy of each of the environment's `packages` (optax; jax or flax when one of their modules is mutated) in
    `work` (which it empties first): the files a worker mutates. Returns `work`, the directory that goes first
    on the worker's PYTHONPATH."""
    site = site_packages(venv)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for package in packages:
        source = site / package
        if not source.is_dir():
            raise HarnessError(f"{package} is not installed in {venv}: remove it and run `nox -s sensitivity` again")
        shutil.copytree(source, work / package, copy_function=shutil.copy2)  # new files; mtimes kept for the .pyc
    return work


def is_private_copy(copy: Path, original: Path) -> bool:
    """Whether `copy` is a file of its own: not `original` itself nor a hard link to the same data."""
    a, b = copy.stat(), original.stat()
    return (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) and a.st_nlink == 1


def lock_work(venv: Path):
    """Hold the environment's work lock for this process's life (returns the open lock file): a second run,
    `--list` too, would rebuild the worker copies and session databases a running one is mutating in."""
    path = venv / "work.lock"
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise HarnessError(f"another `nox -s sensitivity` ({holder}) is running in {venv}; wait for it to end: "
                           "this run would rebuild the work directory it mutates in") from None
    handle.truncate(0)
    handle.write(f"pid {os.getpid()}")
    handle.flush()
    return handle
