"""Every command's command line, declared once: the run options it takes (harness.run_options, which the
child processes and the contract side read too) and the options of its own, here. Every argument parser
of the host's commands is derived from these declarations (parser()); harness.stack.commands.frame runs
a command with them."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness import run_options
from harness.errors import HarnessError
from harness.stack import project
from harness.stack.ci import github_workflows, init_ci, tool_source
from harness.stack.commands.frame import HelpShown
from harness.stack.pins import pins_from
from harness.stack.sensitivity import scope


@dataclasses.dataclass(frozen=True)
class Option:
    """One of a command's own options (a flag, or a positional argument's name) and add_argument's keywords."""

    flags: tuple[str, ...]
    argparse: Mapping = dataclasses.field(default_factory=dict)


def _own(*flags: str, **keywords) -> Option:
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


ADOPTED_REPORTS = _own("--reports", type=Path, metavar="DIR",
                       help="adopt the verdict `upgrade --reports DIR` wrote there (default: reports/)")
RUN_DIRECTORY = _own("directory", type=Path, metavar="DIR")

COMMANDS: dict[str, Usage] = {
    # The tool: `upgrade-harness COMMAND ...` (harness.cli; its commands' names are given by it).
    "upgrade-harness": Usage(prog="upgrade-harness", description=(
        "Does bumping JAX / jaxlib / Optax / Flax change what your training relies on? Run in a project with a "
        "[tool.upgrade-harness] table."), own=(
        _own("command", help="what to do (see the README)"),
        _own("rest", nargs=argparse.REMAINDER, help="the command's own options"))),
    # Which project's contracts and pins one run uses, split out of any command's line.
    "project": Usage(run_options=run_options.PROJECT, prog="upgrade-harness", strict=True),
    "upgrade": Usage(run_options=run_options.UPGRADE),
    "plan": Usage(run_options=run_options.UPGRADE),
    "golden": Usage(run_options=run_options.GOLDEN, prog="golden", strict=True),
    "lock": Usage(description="Write the locks of the locked entries (a team's project: its baseline's, in its "
                              "locks directory): their pins fully resolved, with uv."),
    "judge": Usage(own=(RUN_DIRECTORY,), description="DIR: one run's reports and its upgrade-plan.json"),
    "list": Usage(description="The project's entries (baseline, candidate, the single-package ones), each with its "
                              "pins."),
    "run": Usage(description="One entry's contracts (`upgrade-harness list` names the entries), its report in "
                             "reports/ENTRY.json; what follows `--` goes to pytest.", own=(
        _own("entry", metavar="ENTRY"), _own("pytest", nargs=argparse.REMAINDER, metavar="-- PYTEST_ARGS"))),
    "followups": Usage(own=(RUN_DIRECTORY,), description="DIR: one run's reports and its upgrade-plan.json"),
    "accept": Usage(prog="nox -s accept --", description=(
        "Adopt the judged candidate as the new baseline: pins, locks, golden values, golden/CHANGELOG.md."), own=(
        _own("--reason", help="why the changes are accepted (written to golden/CHANGELOG.md)"),
        ADOPTED_REPORTS)),
    "team-accept": Usage(prog="upgrade-harness accept", description=(
        "Adopt the judged candidate as the baseline: once your pins file pins it, re-lock and record your golden "
        "values."), own=(
        _own("--reason", help="why the changes are accepted (written into each changed golden file: a pull-request "
                              "check lists it beside every value the branch re-recorded)"),
        ADOPTED_REPORTS)),
    "init": Usage(prog="upgrade-harness init", description=(
        "`upgrade-harness init`: make a team's repository a project the harness can judge."), own=(
        _own("--baseline-from", metavar="PATH", help=(
            "the file that pins your stack exactly (default: the first of "
            f"{', '.join(pins_from.BASELINE_FILES)} that does)")),
        _own("--contracts", default="contracts", metavar="DIR", help="your contracts' directory"),
        _own("--builtin", choices=("report", "all", "judge", "off"), default="report", help=(
            "the built-in contracts: report the changes of those covering what your code calls without deciding "
            "the exit status (default), report every family (all), judge them like your own, or off (false)")),
        _own("--no-builtin", action="store_const", const="off", dest="builtin", help="the same as --builtin off"),
        _own(f"--{pins_from.OUTSIDE_INDEX_KEY}", choices=project.OUTSIDE_INDEX, default="refuse",
             dest="outside_index", help=(
                 "ignore: your baseline's file may also point outside the package index (index options, URLs, "
                 "paths, -e, git sources); those lines are not installed, the rest of what it pins is, from the "
                 "index (default: refuse such a file)")),
        _own("--ci", choices=init_ci.PROVIDERS, help=(
            f"also write the CI workflows: github writes {github_workflows.PR_FILE} (pull requests that change "
            f"your pins) and {github_workflows.NIGHTLY_FILE} (the newest releases every night)")),
        _own(tool_source.FLAG, dest="tool_from", metavar="REQUIREMENT",
             help="what CI installs as the tool, pinned (default: where the running tool came from)"),
        _own("--force", action="store_true", help="with --ci: replace workflow files written before"))),
    "sensitivity": Usage(prog="nox -s sensitivity --", description=(
        "`nox -s sensitivity`: mutate Optax's in-scope modules with cosmic-ray and run the matching contracts."),
        own=(
            _own("--sample", type=int, default=None, help="judge N mutants drawn with --seed (default: all)"),
            _own("--seed", type=int, default=0),
            _own("--shard", default="1/1", help="I/N: judge the I-th of N shares of the selection"),
            _own("--workers", type=int, default=1, help="mutants run at once (cosmic-ray HTTP workers)"),
            _own("--module", action="append", default=[], metavar="PATH", choices=sorted(scope.MODULES),
                 help="judge only this module's mutants (repeatable), e.g. optax/_src/transform.py"),
            _own("--list", action="store_true", help="list the selected mutants and stop"),
            _own("--out", default=None, help="report path (default: reports/sensitivity.json)"))),
    "latest": Usage(prog="python -m harness.stack.commands.latest_cli",
                    description="The nightly's release set: resolve it, record it once judged.", subcommands={
        "resolve": Usage(description="resolve the newest releases and decide whether to judge them", own=(
            _own("--state", type=Path, required=True, help="the last judged set (may be missing)"),
            _own("--out", type=Path, required=True, help="where to write tonight's set"),
            _own("--pre", action="store_true", help=run_options.specs()["pre"].argparse["help"]))),  # upgrade's
        "record": Usage(description="write the set the upgrade judged as the new state", own=(
            _own("--report", type=Path, required=True, help="the candidate's report"),
            _own("--out", type=Path, required=True, help="the state file to write")))}),
}


def _add(parser: argparse.ArgumentParser, usage: Usage, choices: Mapping[str, Sequence[str]]) -> None:
    """The declared options of `usage` (its own, then the run options it takes) and its subcommands."""
    for option in usage.own:
        keywords = dict(option.argparse)
        if option.flags[0] in choices:
            keywords["choices"] = choices[option.flags[0]]
        parser.add_argument(*option.flags, **keywords)
    if usage.run_options:
        run_options.add_arguments(parser, usage.run_options)
    if usage.subcommands:
        subparsers = parser.add_subparsers(dest="command", required=True)
        for name, sub in usage.subcommands.items():
            _add(subparsers.add_parser(name, help=sub.description), sub, choices)


def parser(command: str, prog: str | None = None,
           choices: Mapping[str, Sequence[str]] | None = None) -> argparse.ArgumentParser:
    """`command`'s parser, derived from its declaration; `prog` names it when the declaration does not,
    `choices` gives a positional argument's choices that only the caller knows (the tool's commands)."""
    usage = COMMANDS[command]
    strict = dict(add_help=False, allow_abbrev=False) if usage.strict else {}
    made = argparse.ArgumentParser(prog=usage.prog or prog, description=usage.description, **strict)
    _add(made, usage, choices or {})
    return made


def parse(command: str, argv, prog: str | None = None) -> argparse.Namespace:
    """`command`'s options, or HelpShown after --help, or HarnessError (exit 2) naming the bad arguments."""
    found = parser(command, prog)
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
