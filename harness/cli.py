"""`upgrade-harness`: the installed command a team runs in its own repository.

  upgrade-harness init       write the [tool.upgrade-harness] table and a small noxfile.py
  upgrade-harness golden     record golden values from the baseline (--accept-changes to change them)
  upgrade-harness upgrade    baseline vs candidate, then the verdict (exit 0/1/2), options as `nox -s upgrade --`
  upgrade-harness lock       write the baseline's lock (locks/baseline.txt) from the pinned versions
  upgrade-harness accept     once your pins file pins the judged candidate: re-lock, record your golden values
  upgrade-harness run ENTRY  one entry's contracts (baseline, candidate) -> reports/ENTRY.json
  upgrade-harness list       the project's entries with their pins
  upgrade-harness judge DIR  the verdict on a directory of one run's reports (CI artifacts), as `upgrade` writes it
  upgrade-harness plan / followups DIR   an upgrade's other steps one by one, for CI (harness.stack.commands.fanout)

The commands are those harness.stack.commands declares with a route (options.tool_commands). Every
command but `init` works on the nearest directory upwards whose pyproject.toml has the table: `upgrade`,
`judge` and `list` in this process (their sessions would only call them), the others by running the
package's nox sessions (harness/stack/sessions.py) there. `COMMAND --help` prints the command's usage
here and starts nothing. `--contracts DIR` (repeatable),
`--builtin judge|report`, `--no-builtin` and `--baseline-from [REV:]PATH` go with any of them and override
the table for that run; `upgrade --candidate-from [REV:]PATH` judges the pins of a file (a branch's bump
against `--baseline-from origin/main:requirements.txt`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness import env_vars
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.stack.commands import frame, options
from harness.stack.commands.options import Declaration, Invocation, Route
from harness.stack.workspace import Workspace


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = options.tool_commands()
    if not argv or argv[0] in ("-h", "--help"):
        options.parser(options.TOOL, choices={"command": sorted(commands)}).print_help()
        return 0 if argv else EXIT_CANNOT_JUDGE
    name, rest = argv[0], argv[1:]
    if name not in commands:
        print(f"upgrade-harness: unknown command {name!r}; the commands are "
              f"{', '.join(commands)} (upgrade-harness --help).", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    # The command's own options are read by the command itself (here, or in its session).
    return frame.execute(frame.Command(f"upgrade-harness {name}", list,
                                       lambda typed: _run(commands[name], typed), interrupted=130), rest)


def _help(command: Declaration, rest: list[str]) -> None:
    """`upgrade-harness COMMAND --help` (before a `--`; for `run`, before its entry: pytest's options follow it):
    the command's usage, printed here, and HelpShown: no nox session starts to print it."""
    typed = rest[:rest.index("--")] if "--" in rest else rest
    if not {"-h", "--help"} & set(typed[:1] if command.route is Route.ENTRY_SESSION else typed):
        return
    usage = options.parser(command.tool_usage)
    usage.prog = f"upgrade-harness {command.name}"
    usage.print_help()
    raise frame.HelpShown()


def _run(command: Declaration, rest: list[str]) -> int:
    _help(command, rest)
    if command.route is Route.WITHOUT_PROJECT:
        return command.run(Invocation(Workspace.of(Path.cwd()), tuple(rest), Path.cwd()))
    return _in_project(command, rest)


def _in_project(command: Declaration, rest: list[str]) -> int:
    """Run the command in the project, told the project's root and this run's options: here (its session
    would only call it) or in its nox session."""
    from harness.stack import project

    root = project.find_root(Path.cwd())
    if root is None:
        raise HarnessError(f"no pyproject.toml with a [tool.{project.TABLE}] table in {Path.cwd()} or above; "
                           "run `upgrade-harness init` in your project's root first.")
    project.at(root)  # the table's problems (and a package of the team's named `harness`) before nox starts
    given, rest = options.split(rest, prog=f"upgrade-harness {command.name}")
    # nox runs in the project's root; paths the user typed (--reports DIR) are taken from the shell's directory.
    env = {**os.environ, env_vars.PROJECT: str(root), env_vars.INVOKED_FROM: str(Path.cwd()),
           **options.environment(given, Path.cwd())}
    if command.route is Route.HERE:  # as its session's process would have been told, and where the user typed it
        return command.run(Invocation(Workspace.from_environment(env), tuple(rest), Path.cwd()))
    sessions = Path(__file__).resolve().parent / "stack" / "sessions.py"
    nox = [sys.executable, "-m", "nox", "-f", str(sessions), "--envdir", str(root / ".nox")]
    if command.route is Route.ENTRY_SESSION:
        if not rest or rest[0].startswith("-"):
            raise HarnessError("run needs an entry name, e.g. `upgrade-harness run baseline` "
                               "(`upgrade-harness list` shows them).")
        _check_entry(rest[0], env)
        passed = rest[2:] if rest[1:2] == ["--"] else rest[1:]  # `run baseline -- -x` and `run baseline -x`
        cmd = [*nox, "-s", rest[0], "--", *passed]
    else:
        cmd = [*nox, "-s", command.name, "--", *rest]
    return subprocess.run(cmd, cwd=root, env=env, check=False).returncode


def _check_entry(name: str, env: dict[str, str]) -> None:
    """`run NAME` names an entry of the project's (nox would say only "Sessions not found"). A session told
    its job (a CI row: HARNESS_JOB) registers that job's one entry, whatever the table's pins give."""
    from harness.stack.pins import plan
    from harness.stack.workspace import Workspace

    if env.get(env_vars.JOB):
        return
    names = list(plan.told_entries(Workspace.from_environment(env)))
    if name not in names:
        raise HarnessError(f"there is no entry {name!r}; the entries are {', '.join(names)} "
                           "(`upgrade-harness list` shows their pins).")


if __name__ == "__main__":
    sys.exit(main())
