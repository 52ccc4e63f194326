"""How many library mutants a team's own contracts catch, judged with the numerical-noise allowance and at the
golden ulps alone: does judging a bump against its noise (harness.numerical_noise) cost the team detection?

  PYTHON benchmarks/team_mutants.py --project DIR --callable optax.adamw ... [--sample 60] [--seed 0]

PYTHON is an environment with the team's baseline stack, the harness and cosmic-ray (e.g. the project's
`.nox/golden` environment with `cosmic-ray==8.7.0` added); DIR a team's project whose golden values were recorded
with their noise (`upgrade-harness golden`). For each named callable, the lines of its definition in the installed
Optax are mutated with cosmic-ray's operators (its own `init` enumeration); a seeded sample of those mutants is
applied one at a time to a private copy of Optax (first on PYTHONPATH: the environment is never touched) and the
team's contracts are run once per mutant, recording what they observe (golden's observe mode). Each mutant's
observations are then judged by the harness's own `check` against the team's golden values twice: as on the
recording's stack (the golden ulps alone) and as on another stack (within 4x each value's noise). A mutant is
caught when a check fails or raises. It prints both counts and every mutant caught one way only.

A measurement, not a test: it asserts nothing. docs/your-own-contracts.md gives its figures and command.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE_INI = Path(__file__).resolve().parents[1] / "harness" / "contract" / "pytest.ini"


def _spans(names: list[str]) -> dict[Path, list[tuple[int, int]]]:
    """Each callable's (first, last) source lines, by the Optax file that defines it."""
    found: dict[Path, list[tuple[int, int]]] = {}
    for name in names:
        module, _, attr = name.rpartition(".")
        obj = getattr(importlib.import_module(module), attr)
        obj = inspect.unwrap(obj)
        lines, first = inspect.getsourcelines(obj)
        found.setdefault(Path(inspect.getsourcefile(obj)).resolve(), []).append((first, first + len(lines) - 1))
    return found


def _mutants(spans: dict[Path, list[tuple[int, int]]]) -> list[tuple[Path, object]]:
    """cosmic-ray's mutations of each file, kept where they lie within a callable's lines."""
    from cosmic_ray.commands.init import _all_work_items  # the enumeration `cosmic-ray init` makes

    found = []
    for path, lines in sorted(spans.items()):
        for item in _all_work_items([path], {}):
            (mutation,) = item.mutations
            if any(first <= mutation.start_pos[0] <= last for first, last in lines):
                found.append((path, mutation))
    return found


def _apply(copy_root: Path, optax_root: Path, path: Path, mutation) -> str | None:
    """The mutant written into the private copy; its one-line diff, or None when it mutates nothing."""
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    target = copy_root / "optax" / path.relative_to(optax_root)
    code = path.read_text()
    operator = cosmic_ray.plugins.get_operator(mutation.operator_name)(**mutation.operator_args)
    mutated = mutate_code(code, operator, mutation.occurrence)
    if mutated is None or mutated == code:
        return None
    target.write_text(mutated)
    before, after = code.splitlines(), mutated.splitlines()
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    return f"{target.relative_to(copy_root)}:{mutation.start_pos[0]}: {changed[0][0].strip()} -> {changed[0][1].strip()}" \
        if changed else f"{mutation.operator_name} at line {mutation.start_pos[0]}"


def _observe(project: Path, contracts: list[str], copy_root: Path, folder: Path, timeout: float) -> dict:
    """The team's contracts run once, recording what they observe into `folder`; their report."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    env = {**_environ(), "PYTHONPATH": str(copy_root), "HARNESS_GOLDEN_DIR": str(folder),
           "HARNESS_REPORT": str(folder / "report.json"), "HARNESS_PROFILE": "ci"}
    args = [sys.executable, "-m", "pytest", "-c", str(SUITE_INI), "--rootdir", str(project), "-q", "-p", "no:randomly",
            "-p", "no:cacheprovider", "-p", "harness.contract.plugin", "-o", f"pythonpath={project}",
            "--harness-own-contracts", ":".join(contracts), "--harness-record-golden", "--harness-observe-noise",
            f"--basetemp={folder / 'tmp'}", *contracts]
    try:
        subprocess.run(args, cwd=project, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    report = folder / "report.json"
    return json.loads(report.read_text()) if report.exists() else {}


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}


def _judged(golden: Path, observed: Path, report: dict, across: bool) -> list[str]:
    """The checks that fail: raised or failed while observing, or whose observations miss their golden values."""
    import numpy as np

    from harness.contract import precision
    from harness.contract.checks import Check
    from harness.contract.encoding import decode_array
    from harness.contract.golden import GoldenStore

    if report.get("timeout") or not report.get("checks"):
        return ["(the run timed out or wrote no report)"]
    failing = [c["id"] for c in report["checks"] if c["outcome"] != "passed"]
    for family_file in sorted(golden.glob("*.json")):
        family = family_file.stem
        recorded = json.loads(family_file.read_text())["values"]
        seen_file = observed / family_file.name
        seen = json.loads(seen_file.read_text())["values"] if seen_file.exists() else {}
        store = GoldenStore(golden)
        store.across_stacks = lambda _family: across
        check = Check(f"{family}/observed", family, store, own=True)
        check.defer_golden = True
        for key, entry in recorded.items():
            got = seen.get(key)
            if got is None:
                failing.append(f"{family}:{key} (not observed)")
            elif "fact" in entry:
                check.golden_fact(key, got.get("fact"))
            elif "error" in entry:
                if got.get("error") != entry["error"]:
                    failing.append(f"{family}:{key} (error {entry['error']} -> {got.get('error')})")
            else:
                value = decode_array(got).astype(precision.numpy_dtype(got["dtype"]))
                check.golden(key, np.asarray(value))
        failing += [f"{family}:{m.message.splitlines()[0][:120]}" for m in check.mismatches]
    return failing


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="team_mutants", description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--contracts", default="contracts", help="the team's contract directory, in the project")
    parser.add_argument("--callable", dest="callables", action="append", required=True,
                        help="a callable the team's code calls, e.g. optax.adamw (repeatable)")
    parser.add_argument("--sample", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args(argv)
    import optax

    project = args.project.resolve()
    optax_root = Path(optax.__file__).resolve().parent
    mutants = _mutants(_spans(args.callables))
    drawn = random.Random(args.seed).sample(mutants, min(args.sample, len(mutants)))
    print(f"{len(mutants)} mutants within the lines of {len(args.callables)} callables; {len(drawn)} drawn "
          f"(seed {args.seed})", flush=True)
    golden = project / "golden"
    counts = {"exact": 0, "noise": 0, "none": 0, "judged": 0}
    apart = []
    with tempfile.TemporaryDirectory(prefix="team-mutants-") as work:
        work = Path(work)
        copy_root = work / "copy"
        shutil.copytree(optax_root, copy_root / "optax")
        control = _observe(project, [str(project / args.contracts)], copy_root, work / "observed", args.timeout)
        print(f"control (no mutant): {len(_judged(golden, work / 'observed', control, across=False))} checks fail at "
              f"the golden ulps, {len(_judged(golden, work / 'observed', control, across=True))} with the noise "
              "allowance (both must be 0)", flush=True)
        for n, (path, mutation) in enumerate(drawn, 1):
            shutil.copy2(path, copy_root / "optax" / path.relative_to(optax_root))  # the pristine file back
            said = _apply(copy_root, optax_root, path, mutation)
            if said is None:
                continue
            report = _observe(project, [str(project / args.contracts)], copy_root, work / "observed", args.timeout)
            exact = _judged(golden, work / "observed", report, across=False)
            noise = _judged(golden, work / "observed", report, across=True)
            counts["judged"] += 1
            counts["exact"] += bool(exact)
            counts["noise"] += bool(noise)
            counts["none"] += not exact and not noise
            verdict = "both" if exact and noise else "exact only" if exact else "noise only" if noise else "neither"
            print(f"[{n}/{len(drawn)}] {verdict:10s} {said}", flush=True)
            if bool(exact) != bool(noise):
                apart.append((said, exact or noise))
            shutil.copy2(path, copy_root / "optax" / path.relative_to(optax_root))
    judged = counts["judged"]
    print(f"\ncaught at the golden ulps alone: {counts['exact']} of {judged}; with the noise allowance: "
          f"{counts['noise']} of {judged}; by neither: {counts['none']}")
    for said, why in apart:
        print(f"  caught one way only: {said}: {why[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
