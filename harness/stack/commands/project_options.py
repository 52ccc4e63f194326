"""The options that say which project's contracts and pins one run uses, on any command line:
`--contracts DIR` (repeatable), `--builtin judge|report|all`, `--no-builtin`, `--baseline-from [REV:]PATH`
(declared in harness.run_options, group PROJECT). They reach every child session through the
environment, as absolute paths: nox runs its sessions from the noxfile's directory, not from where
the command was typed. Also the golden session's own options.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness import run_options
from harness.errors import HarnessError
from harness.stack.commands import frame, options as command_options


def split(argv: list[str], prog: str | None = None) -> tuple[argparse.Namespace, list[str]]:
    """These options out of a command line, and the rest left for the command itself; `prog`: the command
    typed, for argparse's usage line ("upgrade-harness upgrade")."""
    found = command_options.parser("project")
    found.prog = prog or found.prog
    try:
        return found.parse_known_args(list(argv))
    except SystemExit:  # argparse has printed what is wrong, e.g. --contracts without a directory
        raise HarnessError(f"bad arguments {list(argv)}; --contracts takes a directory, --baseline-from "
                           "a file or REV:PATH, --builtin takes judge, report or all (not with --no-builtin).") from None


def environment(options: argparse.Namespace, invoked_from: Path) -> dict[str, str]:
    """The variables that carry the options to the sessions (empty when none is given)."""
    return run_options.environment(run_options.from_namespace(options), run_options.PROJECT, invoked_from)


def parse_golden(argv: list[str], prog: str = "golden") -> argparse.Namespace:
    """`golden`'s options: its own flags and the project options; HarnessError naming them all otherwise,
    HelpShown after printing its usage (`prog`: the command typed)."""
    if "-h" in argv or "--help" in argv:
        usage = command_options.parser("golden")
        usage.prog = prog
        usage.print_help()
        raise frame.HelpShown()
    options, rest = split(argv)
    own = [s.flags[0] for s in run_options.specs(run_options.HOST).values() if run_options.GOLDEN in s.commands]
    try:
        known, unknown = command_options.parser("golden").parse_known_args(rest)
    except SystemExit:  # argparse has printed what is wrong, e.g. --reason without its text
        unknown = rest
    if unknown:
        raise HarnessError(f"unknown arguments {unknown}; it takes {', '.join(own)} (--reason TEXT), --contracts "
                           "DIR, --builtin judge|report|all, --no-builtin")
    return argparse.Namespace(**{**vars(known), **vars(options)})  # the project options as split() read them
