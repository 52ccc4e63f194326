"""`nox -s upgrade -- ...` (`upgrade-harness upgrade ...` in a team's project): the options, read and
checked before anything runs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from harness.errors import HarnessError
from harness.stack import cli_args, paths, project_options


def parse(argv, command: str = "upgrade") -> argparse.Namespace:
    """`command`: upgrade, or plan (its first step alone, for CI), which takes the same options."""
    # The usage names the command that was typed: this checkout's session, or the team's command.
    prog = f"nox -s {command} --" if paths.IS_CHECKOUT else f"upgrade-harness {command}"
    parser = argparse.ArgumentParser(prog=prog, add_help=True)
    parser.add_argument("--candidate", help='candidate pins, e.g. "jax==X jaxlib==X optax==Y"; a version may be '
                                            '"latest", and "--candidate latest" takes the newest jax, jaxlib, '
                                            "optax and flax that install together")
    parser.add_argument("--pre", action="store_true", help="let `latest` take pre-releases")
    parser.add_argument("--jobs", type=int, default=2, help="entries run at once (default 2)")
    parser.add_argument("--reports", type=Path, help="write reports here instead of reports/ (one run per directory)")
    parser.add_argument("--bisect", action="store_true",
                        help="for each changed contract, find the release that first changed it (runs the "
                             "changed checks on the releases between baseline and candidate)")
    parser.add_argument("--offline", action="store_true",
                        help="never use the network: environments and uv's cache must already hold every stack")
    project_options.add(parser)
    args = cli_args.parse(parser, argv)
    if args.jobs < 1:
        raise HarnessError(f"--jobs {args.jobs}: give at least 1.")
    return args


def check_writable(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise HarnessError(
            f"reports directory {directory} is not writable ({exc.strerror or exc}); "
            "fix its permissions (or remove the file in its place) and run again."
        ) from None
