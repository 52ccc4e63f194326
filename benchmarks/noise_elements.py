"""Element by element, how a team's golden trees move under a real stack bump and under library mutants, against
the noise its perturbed compilations measured: can any allowance pass the one and catch the others?

  PYTHON benchmarks/noise_elements.py --golden DIR/golden --perturbed DIR/.nox/golden/golden-noise/unoptimized \\
      --perturbed DIR/.nox/golden/golden-noise/reassociated --moved jax=OBS1 --moved clip-mutant=OBS2 ...

--golden is the project's golden directory (the baseline's values); --perturbed the folders `upgrade-harness golden`
leaves in its environment, what each perturbed compilation observed (harness.numerical_noise); each --moved a folder
of what the contracts observed elsewhere (another stack, a mutated Optax), written by the contracts' observe mode as
benchmarks/team_mutants.py runs them (`pytest ... -p harness.contract.plugin --harness-own-contracts contracts
--harness-record-golden --harness-observe-noise` with HARNESS_GOLDEN_DIR=OBS, in the environment to observe).

For each float leaf of two or more elements it prints, per observation: the worst move against the leaf's allowance
(4x the leaf's noise plus its golden ulps, as judged), the elements beyond their golden ulps, and those beyond an
allowance of 4x each element's own noise plus its golden ulps. A measurement, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from harness.contract.encoding import decode_array
from harness.numerical_noise import FACTOR

GOLDEN_ULPS = 8


def _arrays(folder: Path) -> dict[str, tuple[np.ndarray, np.dtype]]:
    """Every float array value a folder's golden files hold, by family and key: in float64, with the dtype it was
    computed in (bfloat16 leaves left out: NumPy has no spacing for them)."""
    found = {}
    for path in sorted(folder.glob("*.json")):
        for key, entry in json.loads(path.read_text()).get("values", {}).items():
            if "dtype" not in entry or "fact" in entry or "error" in entry:
                continue
            try:
                value = np.asarray(decode_array(entry))
            except (KeyError, TypeError, ValueError):
                continue
            dtype = np.dtype(entry["dtype"]) if entry["dtype"] != "bfloat16" else None  # its own, not the JSON's
            if dtype is not None and np.issubdtype(dtype, np.floating) and value.size > 1:
                found[f"{path.stem}:{key}"] = value.astype(np.float64), dtype
    return found


def _row(golden: np.ndarray, dtype, noise: np.ndarray, moved: np.ndarray) -> str:
    ulps = GOLDEN_ULPS * np.spacing(np.abs(golden).astype(dtype)).astype(np.float64)
    move = np.abs(moved - golden)
    leaf = FACTOR * noise.max() + ulps
    element = FACTOR * noise + ulps
    return f"{(move / leaf).max():5.2f} {int((move > ulps).sum()):4d} {int((move > element).sum()):4d}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="noise_elements", description=__doc__.splitlines()[0])
    parser.add_argument("--golden", type=Path, required=True)
    parser.add_argument("--perturbed", type=Path, action="append", required=True)
    parser.add_argument("--moved", action="append", required=True, help="NAME=FOLDER (repeatable)")
    args = parser.parse_args(argv)
    golden = _arrays(args.golden)
    perturbed = [_arrays(p) for p in args.perturbed]
    moved = {name: _arrays(Path(folder)) for name, _, folder in (m.partition("=") for m in args.moved)}
    print("per observation: worst move / leaf allowance, elements beyond golden ulps, beyond 4x their own noise")
    print(f"{'leaf':48s} {'size':>5s}  " + "  ".join(f"{name[:16]:>16s}" for name in moved))
    for key, (value, dtype) in golden.items():
        if not all(key in p for p in perturbed) or not all(key in m for m in moved.values()):
            continue
        noise = np.max([np.abs(p[key][0] - value) for p in perturbed], axis=0)
        cells = "  ".join(f"{_row(value, dtype, noise, m[key][0]):>16s}" for m in moved.values())
        print(f"{key[:48]:48s} {value.size:5d}  {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
