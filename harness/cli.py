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

Every command but `init` works on the nearest directory upwards whose pyproject.toml has the table:
`upgrade`, `judge` and `list` in this process (their sessions would only call them), the others by running
the package's nox sessions (harness/stack/sessions.py) there. `COMMAND --help` prints the command's usage
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
from harness.stack.commands import frame

COMMANDS = {  # command -> the nox session it runs (None: the command is not a session)
    "init": None, "golden": "golden", "upgrade": "upgrade", "lock": "lock", "run": None, "list": None,
    "judge": "judge", "plan": "plan", "followups": "followups", "accept": "accept",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        from harness.stack.commands import options

        options.parser("upgrade-harness", choices={"command": sorted(COMMANDS)}).print_help()
        return 0 if argv else EXIT_CANNOT_JUDGE
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"upgrade-harness: unknown command {command!r}; the commands are "
              f"{', '.join(COMMANDS)} (upgrade-harness --help).", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    # The command's own options are read by the command itself (init here, the others in their session).
    return frame.execute(frame.Command(f"upgrade-harness {command}", list, lambda typed: _run(command, typed),
                                       interrupted=130), rest)


USAGES = {"accept": "team-accept"}  # a command's declared usage (harness.stack.commands.options), where named apart


def _help(command: str, rest: list[str]) -> None:
    """`upgrade-harness COMMAND --help` (before a `--`; for `run`, before its entry: pytest's options follow it):
    the command's usage, printed here, and HelpShown: no nox session starts to print it."""
    typed = rest[:rest.index("--")] if "--" in rest else rest
    if not {"-h", "--help"} & set(typed[:1] if command == "run" else typed):
        return
    from harness.stack.commands import options

    usage = options.parser(USAGES.get(command, command))
    usage.prog = f"upgrade-harness {command}"
    usage.print_help()
    raise frame.HelpShown()


def _run(command: str, rest: list[str]) -> int:
    if command not in ("init", "upgrade", "judge"):  # theirs read their options (--help too) themselves
        _help(command, rest)
    if command == "init":
        from harness.stack.commands import init

        return init.main(rest, Path.cwd())
    return _run_session(command, rest)


IN_PROCESS = ("upgrade", "judge", "list")  # commands whose session would only call them: no nox process started


def _run_session(command: str, rest: list[str]) -> int:
    """Run the command's nox session in the project, told the project's root and this run's options; or,
    for `upgrade` and `judge`, what their session would run, here."""
    from harness.stack import project
    from harness.stack.commands import project_options

    root = project.find_root(Path.cwd())
    if root is None:
        raise HarnessError(f"no pyproject.toml with a [tool.{project.TABLE}] table in {Path.cwd()} or above; "
                           "run `upgrade-harness init` in your project's root first.")
    project.at(root)  # the table's problems (and a package of the team's named `harness`) before nox starts
    options, rest = project_options.split(rest, prog=f"upgrade-harness {command}")
    # nox runs in the project's root; paths the user typed (--reports DIR) are taken from the shell's directory.
    env = {**os.environ, env_vars.PROJECT: str(root), env_vars.INVOKED_FROM: str(Path.cwd()),
           **project_options.environment(options, Path.cwd())}
    if command in IN_PROCESS:
        return _in_process(command, rest, env)
    sessions = Path(__file__).resolve().parent / "stack" / "sessions.py"
    nox = [sys.executable, "-m", "nox", "-f", str(sessions), "--envdir", str(root / ".nox")]
    if command == "run":
        if not rest or rest[0].startswith("-"):
            raise HarnessError("run needs an entry name, e.g. `upgrade-harness run baseline` "
                               "(`upgrade-harness list` shows them).")
        _check_entry(rest[0], env)
        passed = rest[2:] if rest[1:2] == ["--"] else rest[1:]  # `run baseline -- -x` and `run baseline -x`
        cmd = [*nox, "-s", rest[0], "--", *passed]
    else:
        cmd = [*nox, "-s", COMMANDS[command], "--", *rest]
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


def _in_process(command: str, rest: list[str], env: dict[str, str]) -> int:
    """The command as its session runs it, told what the session would be told (the project, where the user
    typed it, this run's options) and handed the project's workspace."""
    from harness.stack.workspace import Workspace

    typed_in = env[env_vars.INVOKED_FROM]
    ws = Workspace.from_environment(env)  # as the session's process would have been told
    if command == "upgrade":
        from harness.stack.commands import upgrade

        return upgrade.upgrade(ws, rest, invoked_from=typed_in)
    if command == "list":
        from harness.stack.commands import entry_list

        return entry_list.show(ws, rest)
    from harness.stack.commands import fanout

    return fanout.judge_directory(ws, rest, invoked_from=typed_in)


if __name__ == "__main__":
    sys.exit(main())
