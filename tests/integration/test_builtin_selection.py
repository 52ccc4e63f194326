"""Which built-in contracts a team's run takes: in report mode only the families covering the Optax
callables its code calls (the usage scan and the coverage ledger), every family with `--builtin all` or in
judge mode, never the Flax families for code that does not import flax; the choice is in the report key
and the verdict says it. Nothing here installs a stack: the selection is read from source.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/selection/test_builtin_selection.py."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from harness import devices, env_vars
from harness.stack import paths, project
from harness.stack.pins import matrix
from harness.stack.run import report_key
from harness.stack.selection import builtin_modules
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


WITH_FLAX = {**NO_FLAX, "flax": "0.12.12"}
# A team's Flax NNX classifier: the callables its code calls (a CNN trained through nnx.Optimizer, an Orbax
# checkpoint of its state), the project of docs/your-own-contracts.md ("What runs by default").
CLASSIFIER = """\
    import jax
    import optax
    import orbax.checkpoint as ocp
    from flax import nnx


    def make(total_steps):
        schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-2, 2, total_steps)
        inner = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-4))
        return optax.MultiSteps(inner, every_k_schedule=2)


    def loss_fn(model, x, y):
        labels = optax.smooth_labels(jax.nn.one_hot(y, 10), 0.1)
        return optax.softmax_cross_entropy(model(x), labels).mean()


    def train(model, steps):
        optimizer = nnx.Optimizer(model, make(steps), wrt=nnx.Param)
        return optimizer


    def probe(params, updates):
        return optax.apply_updates(params, updates)


    def save(path, model):
        ocp.StandardCheckpointer().save(path, nnx.state(model))
    """
# Built-in checks a project like this pays for (it paid 764-778 when whole families ran). 300 until the ledger took
# in the rest of its step (issue 45): the nnx.Optimizer and jax.nn.one_hot it calls add their wrappers and
# activations tests (31 checks: 309 in all at cb9c1c0).
LIMIT = 340


@pytest.mark.long_running(70)  # collects the real suite twice (JAX, Flax and Optax imported)
def test_a_teams_builtin_checks_are_the_tests_of_what_it_calls_at_most_300(team, tmp_path):
    """The checks pytest collects for the classifier's selection, on the real suite with the plugin's
    deselection (the entry's job tells it the kept tests): those of the tests the ledger names for its callables,
    and the training and checkpoints families whole; 300 at most. Where `nox -s tests` handed its baseline
    report over, the same count from the checks that report holds."""
    team(code=CLASSIFIER, pins=WITH_FLAX)
    selection = _load().selection
    assert {c.callable for c in selection.called} == {
        "optax.warmup_cosine_decay_schedule", "optax.chain", "optax.clip_by_global_norm", "optax.adamw",
        "optax.MultiSteps", "optax.smooth_labels", "optax.softmax_cross_entropy",  # apply_updates: out of scope
        "flax.nnx.Optimizer", "jax.nn.one_hot"}  # the step's other libraries, in the ledger since issue 45
    assert [c.family for c in selection.chosen] == ["checkpoints", "training"]  # in the order the files hold them
    kept = tmp_path / "kept.txt"
    kept.write_text("".join(f"{t}\n" for t in selection.tests))
    family_of = {m.name.rsplit(".", 1)[1]: m.family for m in builtin_modules.modules()}
    collected = Counter(family_of[Path(line.split("::")[0]).stem] for line in _collect_all(
        tmp_path, list(selection.modules), f"--harness-builtin-tests={kept}"))
    total = sum(collected.values())
    assert total <= LIMIT, collected
    assert set(collected) == set(selection.families) - {devices.FAMILY}  # the families its selection names
    # The two families its libraries take run whole: every check of their modules.
    whole = Counter(family_of[Path(line.split("::")[0]).stem] for line in _collect_all(tmp_path, [
        m.name for m in builtin_modules.modules() if m.family in ("training", "checkpoints")]))
    assert collected["training"] == whole["training"] > 0 and collected["checkpoints"] == whole["checkpoints"] > 0
    print(f"\nthe classifier's built-in checks: {total} ({dict(sorted(collected.items()))})")
    given = os.environ.get(env_vars.BASELINE_REPORT)
    if given:  # the baseline `nox -s tests` ran: the same checks are there, counted the same
        ids = [c["id"] for c in json.loads(Path(given).read_text())["checks"]]
        tests, partial = frozenset(selection.tests), {t.split("/")[0] for t in selection.tests}
        in_report = Counter(i.split("/")[0] for i in ids if i.split("/")[0] in selection.families
                            and (i.split("/")[0] not in partial or i in tests or i.split("[")[0] in tests))
        assert in_report == collected


def _collect_all(where: Path, modules: list[str], *args: str) -> list[str]:
    """The node ids pytest collects from the built-in `modules` (the installed harness), the plugin loaded."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-c", str(paths.SUITE_INI), "--rootdir",
         str(paths.PACKAGE.parent), "-p", "no:randomly", "-p", "harness.contract.plugin", "--noconftest", *args,
         "--pyargs", *modules],
        cwd=where, capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                        if not k.startswith("HARNESS_")})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]
