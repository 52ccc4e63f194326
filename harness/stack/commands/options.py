"""Every command, declared once at the end of its own module in this package (a Declaration): its name, its
command line (the run options it takes, harness.run_options, which the child processes and the contract side
read too, and options of its own), what runs it and its nox session. `upgrade-harness` (harness.cli), the
sessions (harness.stack.sessions) and every argument parser (parser()) are derived from the declarations
(declared()); harness.stack.commands.frame runs a command. Also the project options any command line carries
(split(), environment()). Nothing outside this package reads an argparse namespace: a command hands on
harness.run_options.RunOptions and typed requests of its own."""

from __future__ import annotations

import argparse
import dataclasses
import enum
import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness import run_options
from harness.errors import HarnessError
from harness.run_options import RunOptions
from harness.stack.commands.frame import HelpShown
from harness.stack.workspace import Workspace


@dataclasses.dataclass(frozen=True)
class Option:
    """One of a command's own options (a flag, or a positional argument's name) and add_argument's keywords."""

    flags: tuple[str, ...]
    argparse: Mapping = dataclasses.field(default_factory=dict)


def own(*flags: str, **keywords) -> Option:
    return Option(flags, keywords)


@dataclasses.dataclass(frozen=True)
class Usage:
    """One command's line: the run options it takes (a harness.run_options command) and its own options."""

    own: tuple[Option, ...] = ()
    run_options: str | None = None
    prog: str | None = None  # None: the caller names it (`nox -s X --` in the checkout, `upgrade-harness X`)
    description: str | None = None
    # Options split out of another command's line: no --help, no abbreviations (pytest's own --co must not be
    # taken for --contracts).
    strict: bool = False
    subcommands: Mapping[str, Usage] = dataclasses.field(default_factory=dict)  # their description: their help


class Session(enum.Enum):
    """A command's nox session: none, one in nox's own process (python=False), or one in a Python of the
    matrix's version (its environment installs what the command runs), which explains how to get one."""

    NONE = "none"
    HOST = "host"
    STACK = "stack"


class Route(enum.Enum):
    """How `upgrade-harness NAME` runs a command: not at all (this checkout's own); here, before any project
    exists (init); here, in the project (its session would only call it); through the project's nox session
    of its name; through the session of the entry it names (`run ENTRY`)."""

    NONE = "none"
    WITHOUT_PROJECT = "without-project"
    HERE = "here"
    SESSION = "session"
    ENTRY_SESSION = "entry-session"


@dataclasses.dataclass(frozen=True)
class Invocation:
    """One run of a command: the project's workspace, the arguments after the command's name, where it was
    typed (paths the user typed are read from there), and the nox session running it (None: `upgrade-harness`
    runs it in its own process)."""

    ws: Workspace
    argv: tuple[str, ...]
    invoked_from: Path
    session: Any = None


@dataclasses.dataclass(frozen=True)
class Declaration:
    """A command, as its module declares it: `summary` is its line in `nox -l` and its session's docstring;
    `run` returns the exit status (0, 1 changed, 2 cannot judge) and raises HarnessError for bad input;
    `team_usage`, where a team's project reads another command line (accept)."""

    name: str
    summary: str
    usage: Usage
    run: Callable[[Invocation], int] | None  # None: `run ENTRY`, which each entry's own session runs
    session: Session = Session.NONE
    route: Route = Route.NONE
    team_usage: Usage | None = None

    @property
    def tool_usage(self) -> Usage:
        """The command line `upgrade-harness NAME` reads (in a team's project)."""
        return self.team_usage or self.usage


def declared() -> dict[str, Declaration]:
    """Every command, by name: the `COMMANDS` each module of this package ends with (adding a command is
    adding a module)."""
    package = importlib.import_module(__package__)
    found: dict[str, Declaration] = {}
    for module in pkgutil.iter_modules(package.__path__):
        for command in getattr(importlib.import_module(f"{__package__}.{module.name}"), "COMMANDS", ()):
            if command.name in found:
                raise AssertionError(f"the command {command.name!r} is declared twice ({module.name})")
            found[command.name] = command
    return dict(sorted(found.items()))


def tool_commands() -> dict[str, Declaration]:
    """The commands `upgrade-harness` runs."""
    return {name: command for name, command in declared().items() if command.route is not Route.NONE}


# The tool: `upgrade-harness COMMAND ...` (harness.cli; its commands' names are given by it).
TOOL = Usage(prog="upgrade-harness", description=(
    "Does bumping JAX / jaxlib / Optax / Flax change what your training relies on? Run in a project with a "
    "[tool.upgrade-harness] table."), own=(
    own("command", help="what to do (see the README)"),
    own("rest", nargs=argparse.REMAINDER, help="the command's own options")))
# Which project's contracts and pins one run uses, split out of any command's line.
PROJECT = Usage(run_options=run_options.PROJECT, prog="upgrade-harness", strict=True)


def _add(parser: argparse.ArgumentParser, usage: Usage, choices: Mapping[str, Sequence[str]]) -> None:
    """The declared options of `usage` (its own, then the run options it takes) and its subcommands."""
    for option in usage.own:
        keywords = dict(option.argparse)
        if option.flags[0] in choices:
            keywords["choices"] = choices[option.flags[0]]
        parser.add_argument(*option.flags, **keywords)
    if usage.run_options:
        _add_run_options(parser, usage.run_options)
    if usage.subcommands:
        subparsers = parser.add_subparsers(dest="command", required=True)
        for name, sub in usage.subcommands.items():
            _add(subparsers.add_parser(name, help=sub.description), sub, choices)


def parser(usage: Usage, prog: str | None = None,
           choices: Mapping[str, Sequence[str]] | None = None) -> argparse.ArgumentParser:
    """The parser derived from a command's `usage`; `prog` names it when the usage does not, `choices` gives
    a positional argument's choices that only the caller knows (the tool's commands)."""
    strict = dict(add_help=False, allow_abbrev=False) if usage.strict else {}
    made = argparse.ArgumentParser(prog=usage.prog or prog, description=usage.description, **strict)
    _add(made, usage, choices or {})
    return made


def parse(usage: Usage, argv, prog: str | None = None) -> argparse.Namespace:
    """A command's options (`usage`), or HelpShown after --help, or HarnessError (exit 2) naming the bad
    arguments."""
    found = parser(usage, prog)
    try:
        return found.parse_args(list(argv))
    except SystemExit as exc:
        if exc.code == 0:  # --help was printed
            raise HelpShown() from None
        raise HarnessError(f"{found.prog.removesuffix(' --')}: bad arguments {list(argv)}; "
                           "see the usage above.") from exc


def prog(ws, command: str) -> str:
    """The usage names the command that was typed: this checkout's session, or the team's command."""
    return f"nox -s {command} --" if ws.is_checkout else f"upgrade-harness {command}"


def _add_run_options(parser: argparse.ArgumentParser, command: str) -> None:
    """The run options `command` takes (harness.run_options declares them), as `parser`'s arguments."""
    defaults = RunOptions()
    for name, spec in run_options.specs().items():
        if not run_options.takes(spec, command):
            continue
        extra = dict(spec.argparse)
        off_help = extra.pop("off_help", None)
        if spec.kind is bool:
            extra["action"] = "store_true"
        default = getattr(defaults, name)
        target = parser.add_mutually_exclusive_group() if len(spec.flags) > 1 else parser
        target.add_argument(spec.flags[0], dest=name, default=list(default) if default == () else default, **extra)
        if len(spec.flags) > 1:  # --builtin MODE or --no-builtin: one value
            target.add_argument(spec.flags[1], dest=name, action="store_const", const=run_options.OFF,
                                help=off_help)


def run_options_of(parsed: argparse.Namespace) -> RunOptions:
    """The run options a command's parser read (the ones it does not take stay at their defaults)."""
    given = {k: v for k, v in vars(parsed).items() if k in run_options.specs() and v is not None}
    if "contracts" in given:
        given["contracts"] = tuple(given["contracts"])
    return RunOptions(**given)


def split(argv, prog: str | None = None) -> tuple[RunOptions, list[str]]:
    """The project options (--contracts DIR, --builtin, --no-builtin, --baseline-from [REV:]PATH) out of a
    command line, and the rest left for the command itself; `prog`: the command typed, for argparse's usage
    line ("upgrade-harness upgrade")."""
    found = parser(PROJECT)
    found.prog = prog or found.prog
    try:
        known, rest = found.parse_known_args(list(argv))
    except SystemExit:  # argparse has printed what is wrong, e.g. --contracts without a directory
        raise HarnessError(f"bad arguments {list(argv)}; --contracts takes a directory, --baseline-from "
                           "a file or REV:PATH, --builtin takes judge, report or all (not with --no-builtin).") from None
    return run_options_of(known), rest


def environment(given: RunOptions, invoked_from: Path) -> dict[str, str]:
    """The variables that carry the project options to the sessions (empty when none is given): nox runs its
    sessions from the noxfile's directory, so paths are made absolute against where they were typed."""
    return run_options.environment(given, run_options.PROJECT, invoked_from)
