"""The command frame (harness.stack.commands.frame) and the declarations every host parser is derived from
(harness.stack.commands.options): help is exit 0 with nothing run, a HarnessError is `<command>: <message>`
with its own exit status, anything else is a bug and keeps its traceback."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from harness import cli, run_options
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.stack import paths
from harness.stack.commands import accept, frame, options, upgrade


class _Changed(HarnessError):
    exit_status = 1  # an error of its own status: the frame returns that one, not always 2


def _never(args) -> int:
    raise AssertionError("the command ran after --help")


def _accept_command(run) -> frame.Command:
    return frame.Command("accept: refused", functools.partial(options.parse, accept.USAGE), run)


def test_help_prints_the_usage_and_runs_nothing(capsys):
    assert frame.execute(_accept_command(_never), ["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: nox -s accept --") and "--reason REASON" in out


def test_a_harness_error_is_the_commands_name_then_its_message_with_its_exit_status(capsys):
    def run(args):
        raise _Changed(f"no verdict ({args.reason})")

    assert frame.execute(_accept_command(run), ["--reason", "why"]) == 1
    assert capsys.readouterr().err == "accept: refused: no verdict (why)\n"


def test_bad_arguments_name_the_usage_and_exit_2(capsys):
    assert frame.execute(_accept_command(_never), ["--frobnicate"]) == EXIT_CANNOT_JUDGE
    err = capsys.readouterr().err
    assert "unrecognized arguments: --frobnicate" in err  # argparse's own line, with the usage
    assert err.endswith("accept: refused: nox -s accept: bad arguments ['--frobnicate']; see the usage above.\n")


def test_the_run_gets_what_parse_read_and_its_status_is_the_exit_status():
    seen = []
    command = frame.Command("x", lambda argv: [a.upper() for a in argv], lambda read: seen.append(read) or 7)
    assert frame.execute(command, ("a", "b")) == 7 and seen == [["A", "B"]]


def test_an_unexpected_exception_is_not_swallowed(capsys):
    def run(args):
        raise KeyError("a bug")

    with pytest.raises(KeyError, match="a bug"):
        frame.execute(_accept_command(run), [])
    assert capsys.readouterr().err == ""


def test_ctrl_c_is_an_exit_status_only_for_a_command_that_says_which():
    def interrupted(args):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        frame.execute(frame.Command("upgrade", list, interrupted), [])
    assert frame.execute(frame.Command("upgrade-harness upgrade", list, interrupted, interrupted=130), []) == 130


def test_the_tool_says_a_commands_refusal_with_the_commands_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no project here or above (tmp_path has no pyproject.toml with the table)
    assert cli.main(["list"]) == EXIT_CANNOT_JUDGE
    assert capsys.readouterr().err.startswith("upgrade-harness list: no pyproject.toml with a [tool.upgrade-harness]")


def test_init_help_goes_through_the_frame(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["init", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: upgrade-harness init")
    assert not (tmp_path / "pyproject.toml").exists()


USAGES = {"upgrade-harness": options.TOOL, "project": options.PROJECT,
          **{name: command.usage for name, command in options.declared().items()},
          **{f"{name} (a team's)": command.team_usage for name, command in options.declared().items()
             if command.team_usage is not None}}


@pytest.mark.parametrize("usage", USAGES.values(), ids=list(USAGES))
def test_every_declared_command_derives_a_parser_and_its_help(usage):
    """argparse refuses a flag declared twice for one command when the parser is built, and a help text it
    cannot format (a bare %) only when --help is asked for: both here, for every command."""
    made = options.parser(usage, prog="nox -s x --", choices={"command": sorted(options.tool_commands())})
    assert made.format_help().startswith(f"usage: {made.prog}")


def test_upgrade_takes_exactly_the_run_options_declared_for_it():
    made = options.parser(upgrade.USAGE, prog="nox -s upgrade --")
    flags = {f for action in made._actions for f in action.option_strings} - {"-h", "--help"}
    declared = {f for spec in run_options.specs().values() if run_options.takes(spec, run_options.UPGRADE)
                for f in spec.flags}
    assert flags == declared


def _parser_sites(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [f"{path.relative_to(paths.PACKAGE.parent)}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
            in ("ArgumentParser", "add_parser")]


def test_the_host_builds_argument_parsers_in_one_place_only():
    """Every parser of the host's commands is derived from the declarations: a new ArgumentParser( site
    elsewhere would be an option declared a second time. (harness.verdict, harness.contract and
    harness.coverage have their own `python -m` commands; the layers keep them from importing the host.)"""
    files = [paths.PACKAGE / "cli.py", *sorted((paths.PACKAGE / "stack").rglob("*.py"))]
    sites = [site for path in files for site in _parser_sites(path)]
    assert sites and all(site.startswith("harness/stack/commands/options.py:") for site in sites), sites


class _Session:
    """What frame.session reads of a nox session: its name."""

    name = "lock"


def test_a_sessions_harness_error_is_its_message_and_exit_status_not_a_nox_traceback(capsys):
    """nox turns an exception into a traceback and `session.error` into exit 1 (a changed contract's
    status): a session's bad input is `<session>: <message>` and exit 2, as `upgrade` gives."""
    @frame.session
    def lock(session) -> None:
        raise HarnessError("cannot resolve matrix entry 'baseline' (optax==0.2.66); check the pins.")

    with pytest.raises(SystemExit) as ended:
        lock(_Session())
    assert ended.value.code == EXIT_CANNOT_JUDGE
    assert capsys.readouterr().err == "lock: cannot resolve matrix entry 'baseline' (optax==0.2.66); check the pins.\n"
    assert lock.__name__ == "lock"  # nox names the session after the function


def test_a_session_that_ends_well_or_with_a_bug_is_left_to_nox(capsys):
    @frame.session
    def fine(session) -> None:
        return None

    @frame.session
    def buggy(session) -> None:
        raise KeyError("a bug")

    assert fine(_Session()) is None
    with pytest.raises(KeyError):  # nox prints its traceback: a bug, not bad input
        buggy(_Session())
