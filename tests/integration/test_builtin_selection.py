"""Which built-in contracts a team's run takes: in report mode only the families covering the Optax
callables its code calls (the usage scan and the coverage ledger), every family with `--builtin all` or in
judge mode, never the Flax families for code that does not import flax; the choice is in the report key
and the verdict says it. Nothing here installs a stack: the selection is read from source.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/selection/test_builtin_selection.py."""

from __future__ import annotations

import dataclasses
import sys

from harness import env_vars
from harness.stack import project
from harness.stack.pins import matrix
from harness.stack.run import report_key
from harness.stack.selection.select import Scope, select
from harness.stack.selection.team_code import TeamCode, Use
from harness.stack.workspace import Workspace
from unit.stack.selection.test_builtin_selection import (  # noqa: F401 (fixtures and helpers shared with it)
    NO_FLAX, OPTIM, _load, _team, team,
)


def test_the_selection_is_part_of_the_report_key(team, monkeypatch):
    root = team()
    monkeypatch.setattr(report_key, "find_python", lambda version: sys.executable)
    (root / "locks").mkdir()
    (root / "locks" / "baseline.txt").write_text("jax==0.11.2\n")
    entry = matrix.Entry("baseline", {"jax": "0.11.2"}, "", lock_file=str(root / "locks" / "baseline.txt"))
    ws = Workspace.from_environment()
    found = _load()

    def key(of):
        return report_key.key_of(ws, entry, of, {env_vars.PROFILE: "ci"}, 1)

    narrower = dataclasses.replace(found, selection=select(Scope.USED, TeamCode(
        (Use("optax.MultiSteps", "trainer/optim.py:7"),), imports_flax=False)))
    everything = dataclasses.replace(found, selection=select(Scope.ALL, found_code(found, ws)))
    assert key(narrower).changed(key(found)) == ["suite"]
    assert key(everything).changed(key(found)) == ["suite"]
    assert key(dataclasses.replace(found)).changed(key(found)) == []


def found_code(found, ws):
    return project.code_of(found, ws)
