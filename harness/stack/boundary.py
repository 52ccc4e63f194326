"""Where the host side meets its process environment: the one module of harness/stack that reads os.environ.

A command (or a child session) reads what it was told here once, where it comes in, into typed objects
(the Workspace and its RunOptions) that are handed down; nothing below writes the process's own
environment to tell itself something. What crosses into a child process is built here from the
declaration (harness.run_options, harness.env_vars): the parent's environment without another run's own
variables, plus the options this run declares for its children. The rest are variables a user or CI sets
(documented where they are read): PYENV_ROOT, GITHUB_RUN_ID, GITHUB_OUTPUT, UV_OFFLINE, XLA_FLAGS...
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from harness import run_options
from harness.run_options import RunOptions


def variables() -> Mapping[str, str]:
    """This process's environment, read-only for the code that takes it (a report key, a workspace)."""
    return os.environ


def given(name: str) -> str | None:
    """One variable a user, CI or the parent process set (None: unset or empty)."""
    return os.environ.get(name) or None


def present(name: str) -> bool:
    """Whether a variable is set at all, even empty (a CI matrix column the row does not have)."""
    return name in os.environ


def options() -> RunOptions:
    """The run's options this process was told by its parent (a child session, the contract run)."""
    return run_options.from_environment(os.environ)


def child_environment(options: RunOptions | None = None, *groups: str,
                      extra: Mapping[str, str | None] = ()) -> dict[str, str]:
    """A child process's environment: this one's, without another run's own variables (its plan, selection,
    replay), plus `options`' declared variables of `groups` (default: the project options, which every
    child of a command reads) and `extra` (None: removed)."""
    env = run_options.inherited(os.environ)
    if options is not None:
        for group in groups or (run_options.PROJECT,):
            # The harness's own variables of these groups say what `options` say, nothing left from the shell
            # (a stale HARNESS_WHEEL); another tool's (UV_OFFLINE) stays as its user set it.
            for spec in run_options.specs(group).values():
                if spec.env and spec.env.startswith("HARNESS_"):
                    env.pop(spec.env, None)
            env.update(run_options.environment(options, group))
    for name, value in dict(extra).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


# What JAX's cloud_tpu_init sets in its own process, a TPU or not: TPU_SKIP_MDS_QUERY=1 where it finds no chip.
_SET_BY_JAX = frozenset({"TPU_SKIP_MDS_QUERY", "TPU_ML_PLATFORM", "TPU_ML_PLATFORM_VERSION"})


def one_process_at_a_time(environ: Mapping[str, str] | None = None) -> str | None:
    """Why entries must run one at a time on this host (None: they may run side by side): on a TPU host
    (Cloud TPU sets TPU_* variables: TPU_ACCELERATOR_TYPE, TPU_WORKER_ID...) libtpu lets one process hold the
    TPU, and a second entry's JAX fails to start ("The TPU is already in use by process ..."), unless
    JAX_PLATFORMS=cpu keeps JAX off it."""
    environ = os.environ if environ is None else environ
    if (environ.get("JAX_PLATFORMS") or "").strip().lower() == "cpu":
        return None
    tpu = sorted(name for name in environ if name.startswith("TPU_") and name not in _SET_BY_JAX)
    if not tpu:
        return None
    return f"a TPU host ({tpu[0]} is set): one process at a time can hold its TPU"


def invoked_from(session_dir: str, variable: str) -> Path:
    """The directory the user typed the command in: the `upgrade-harness` command's (told in `variable`), else
    nox's own invoked_from."""
    return Path(os.environ.get(variable) or session_dir)
