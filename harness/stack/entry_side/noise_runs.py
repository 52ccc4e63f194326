"""Before `golden` records a project's own contracts: the same contracts recorded again under each compilation
that rounds differently (harness.numerical_noise.PERTURBATIONS), each into a folder of its own, so that the
recording can keep every value's numerical noise beside it.

Only the project's own contracts: the built-in ones are judged at their golden ulps (their values are a few
operations each, where a stack's rounding moves nothing beyond them). A perturbed run that fails, or that the
stack's XLA refuses (a flag it does not know), records nothing for the values it did not reach: those are then
judged at their golden ulps on every stack, and the recording says which.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from harness import numerical_noise, run_options
from harness.model.enums import BuiltinMode
from harness.stack import boundary, paths, project
from harness.stack.entry_side import entry as stack_entry
from harness.stack.pins.matrix import Entry
from harness.stack.workspace import Workspace

FOLDER = "golden-noise"  # in the entry's environment: each perturbation's recording, made anew each time


def folders(venv: str) -> dict[str, Path]:
    """Each perturbation's recording folder in the environment `venv`."""
    return {p.name: Path(venv) / FOLDER / p.name for p in numerical_noise.PERTURBATIONS}


def record_perturbed(session, ws: Workspace, entry: Entry) -> list[Path]:
    """Record the project's own contracts under each perturbation (its environment already installed); the
    folders that hold a recording, for the real recording's --harness-noise-from. None without contracts of
    the project's own."""
    if not project.load(ws).own_contracts:  # this checkout, or a team recording only the built-in ones
        return []
    found = project.load(ws.with_options(run_options.RunOptions(builtin=BuiltinMode.OFF.value)))
    venv = session.virtualenv.location
    recorded = []
    for perturbation in numerical_noise.PERTURBATIONS:
        folder = folders(venv)[perturbation.name]
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        env = stack_entry.suite_environment(entry, str(folder / "report.json"), venv, folder, ws.is_checkout,
                                            rollback_reads=False, options=ws.options)
        env["XLA_FLAGS"] = numerical_noise.with_flag(boundary.variables().get("XLA_FLAGS", ""), perturbation)
        session.log(f"golden: measuring numerical noise: your contracts compiled with {perturbation.xla_flag}")
        log = folder / "run.log"
        try:
            with session.chdir(found.root), open(log, "w") as out:
                session.run("python", "-m", paths.SUITE_MAIN, *stack_entry.suite_arguments(found),
                            f"--basetemp={Path(venv) / 'pytest-tmp'}-{perturbation.name}", "--harness-record-golden",
                            "--harness-observe-noise", "-p", "no:cacheprovider", env=env, stdout=out, stderr=out)
        except Exception as exc:  # nox's CommandFailed: what the checks recorded before failing is kept
            session.log(f"golden: under {perturbation.xla_flag} the contracts did not all pass "
                        f"({getattr(exc, 'reason', exc)}); values they did not reach get no noise (log: {log})")
        if any(folder.glob("*.json")):
            recorded.append(folder)
    return recorded
