"""The options that say which project's contracts and pins one run uses, on any command line:
`--contracts DIR` (repeatable), `--builtin judge|report`, `--no-builtin`, `--baseline-from PATH`.
They reach every child session through the environment (harness.env_vars), as absolute paths: nox
runs its sessions from the noxfile's directory, not from where the command was typed.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from harness import env_vars
from harness.errors import HarnessError
from harness.model.enums import BuiltinMode


def add(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contracts", action="append", type=Path, default=[], metavar="DIR",
                        help="a directory of your own contract modules (pytest files using the `check` fixture); "
                             "repeatable, added to the contracts of [tool.upgrade-harness]")
    builtin = parser.add_mutually_exclusive_group()
    builtin.add_argument("--builtin", choices=[BuiltinMode.JUDGE.value, BuiltinMode.REPORT.value],
                         help="judge: the built-in contracts' changes decide the exit status too; report: they are "
                              "shown after yours, but only yours decide (overrides the table's builtin)")
    builtin.add_argument("--no-builtin", action="store_true",
                         help="run only your own contracts, not the built-in Optax/Flax ones")
    parser.add_argument("--baseline-from", type=Path, metavar="PATH",
                        help="read the baseline's pins from this requirements.txt, uv.lock or pyproject.toml")


def split(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """These options out of a command line, and the rest left for the command itself."""
    # No abbreviations: pytest's own --co must not be taken for --contracts.
    parser = argparse.ArgumentParser(prog="upgrade-harness", add_help=False, allow_abbrev=False)
    add(parser)
    try:
        return parser.parse_known_args(list(argv))
    except SystemExit:  # argparse has printed what is wrong, e.g. --contracts without a directory
        raise HarnessError(f"bad arguments {list(argv)}; --contracts takes a directory, --baseline-from "
                           "a file, --builtin takes judge or report (not with --no-builtin).") from None


def environment(options: argparse.Namespace, invoked_from: Path) -> dict[str, str]:
    """The variables that carry the options to the sessions (empty when none is given)."""
    env = {}
    if options.contracts:
        env[env_vars.CONTRACT_DIRS] = os.pathsep.join(str((invoked_from / d).resolve()) for d in options.contracts)
    if options.no_builtin:
        env[env_vars.BUILTIN] = BuiltinMode.OFF.value
    elif options.builtin:
        env[env_vars.BUILTIN] = options.builtin
    if options.baseline_from:
        env[env_vars.BASELINE_FROM] = str((invoked_from / options.baseline_from).resolve())
    return env
