"""The commands are declared once, each at the end of its own module (harness.stack.commands.options): the
installed tool, the nox sessions and the usages are derived from the declarations, so a command added as a
module is a command everywhere."""

from __future__ import annotations

import importlib
import pkgutil

import nox
import pytest

from harness import cli
from harness.stack import commands, sessions
from harness.stack.commands import options

CALLED: list[options.Invocation] = []


def _hello(call: options.Invocation) -> int:
    CALLED.append(call)
    return 3


HELLO = options.Declaration("hello", "Say hello.", options.Usage(description="Say hello.", own=(
    options.own("--loud", action="store_true"),)), _hello, session=options.Session.HOST, route=options.Route.HERE)


@pytest.fixture
def with_hello(monkeypatch):
    """A new command module's declaration, as declared() would find it."""
    declared = options.declared()
    monkeypatch.setattr(options, "declared", lambda: {**declared, "hello": HELLO})
    CALLED.clear()


def test_every_module_of_the_package_declaring_commands_is_found():
    declared = options.declared()
    for module in pkgutil.iter_modules(commands.__path__):
        for command in getattr(importlib.import_module(f"harness.stack.commands.{module.name}"), "COMMANDS", ()):
            assert declared[command.name] is command, module.name
    assert set(declared) == {"init", "golden", "upgrade", "plan", "followups", "judge", "lock", "accept", "list",
                             "run", "sensitivity", "latest"}
    assert set(options.tool_commands()) == set(declared) - {"sensitivity", "latest"}  # this checkout's, the nightly's


@pytest.mark.parametrize("name", sorted(options.tool_commands()))
def test_every_command_of_the_tool_prints_its_usage_anywhere_and_runs_nothing(name, tmp_path, monkeypatch, capsys):
    """No project here (nor any command's session): the usage still, exit 0."""
    monkeypatch.chdir(tmp_path)
    assert cli.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: upgrade-harness {name}") and not list(tmp_path.iterdir())


def test_a_declared_command_is_a_command_of_the_tool_with_its_usage(with_hello, tmp_path, monkeypatch, capsys):
    assert cli.main(["--help"]) == 0
    assert "hello" in capsys.readouterr().out
    assert cli.main(["hello", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: upgrade-harness hello") and "--loud" in out and not CALLED
    monkeypatch.chdir(tmp_path)  # no project here: said, nothing run
    assert cli.main(["hello"]) == 2 and not CALLED
    assert "run `upgrade-harness init`" in capsys.readouterr().err


def test_a_declared_command_with_a_session_is_a_nox_session_running_it(with_hello, monkeypatch, tmp_path):
    monkeypatch.setattr(nox.registry, "_REGISTRY", dict(nox.registry.get()))
    sessions._command_session(HELLO)
    registered = nox.registry.get()["hello"]
    assert registered.__doc__ == "Say hello."

    class Session:
        name, posargs, invoked_from = "hello", ["--loud"], str(tmp_path)

    with pytest.raises(SystemExit) as ended:
        registered(Session())
    assert ended.value.code == 3  # its exit status survives nox (which maps every failure to 1)
    [call] = CALLED
    assert call.argv == ("--loud",) and call.invoked_from == tmp_path and call.session.name == "hello"
