"""The one frame every command runs in (nox's `workflow.execute` style): read its options, run it, and turn
what a person can fix into a message and an exit status. A command's own code only raises."""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable
from typing import Any

from harness.errors import HarnessError


class HelpShown(Exception):
    """`--help`: the usage is printed, nothing runs (exit 0)."""


@dataclasses.dataclass(frozen=True)
class Command:
    """A command: its name (how its messages on stderr start), how its declared options are read
    (harness.stack.commands.options.parse, or a command's own steps around it), and what it runs with
    what they read."""

    name: str
    parse: Callable[[list[str]], Any]
    run: Callable[[Any], int]
    interrupted: int | None = None  # the exit status for Ctrl-C, when the command turns it into one


def execute(command: Command, argv) -> int:
    """Parse (help: 0), run, and a HarnessError as `<name>: <message>` on stderr with its exit status. Any
    other exception is a bug: it propagates with its traceback."""
    try:
        return command.run(command.parse(list(argv)))
    except HelpShown:
        return 0
    except HarnessError as exc:
        print(f"{command.name}: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        if command.interrupted is None:
            raise
        return command.interrupted


def session(func: Callable[[Any], None]) -> Callable[[Any], None]:
    """The same frame around a nox session: help shown ends it (exit 0); a HarnessError is `<session>:
    <message>` on stderr and ends the process with its exit status. nox itself would print a traceback, or
    make `session.error` exit 1, the status of a changed contract; bad input is 2, as `upgrade` gives it.
    The exit skips the sessions after it in the same nox call, and nox's summary."""
    @functools.wraps(func)
    def run(nox_session) -> None:
        try:
            func(nox_session)
        except HelpShown:
            return
        except HarnessError as exc:
            print(f"{nox_session.name}: {exc}", file=sys.stderr)
            raise SystemExit(exc.exit_status) from None
    return run
