"""`nox -s upgrade -- ...` (`upgrade-harness upgrade ...` in a team's project): the options, read and
checked before anything runs."""

from __future__ import annotations

import argparse

from harness import platforms
from harness.errors import HarnessError
from harness.stack.commands import options
from harness.stack import boundary
from harness.stack.environments import envs
from harness.stack.workspace import Workspace

JOBS = 2  # entries run at once unless --jobs says otherwise, or the host's accelerator takes one process


def prog(ws: Workspace, command: str) -> str:
    """The usage names the command that was typed: this checkout's session, or the team's command."""
    return f"nox -s {command} --" if ws.is_checkout else f"upgrade-harness {command}"


def parse(ws: Workspace, argv, command: str = "upgrade") -> argparse.Namespace:
    """`command`: upgrade, or plan (its first step alone, for CI), which takes the same options."""
    args = options.parse(command, argv, prog(ws, command))  # its own options, and the project's
    args.jobs_why = None  # why --jobs was not needed to run them one at a time
    if args.jobs is None:  # --platform names where JAX runs (platforms.entries_at_once); else the host's default
        args.jobs_why = boundary.one_process_at_a_time() if args.platform is None else None
        args.jobs = 1 if args.jobs_why else JOBS
    if args.jobs < 1:
        raise HarnessError(f"--jobs {args.jobs}: give at least 1.")
    args.jobs = platforms.entries_at_once(args.platform, args.jobs)
    if args.envs_size_limit is not None:
        try:
            args.envs_size_limit = envs.parse_size(args.envs_size_limit)
        except ValueError as exc:
            raise HarnessError(f"--envs-size-limit: {exc}.") from None
    return args
