"""`golden --measure-host`: the host noise of a dimension the recording's host cannot emulate, measured on a host
that has it, beside the values as they were recorded (none of them changes).

A recording keeps beside each value how far the hosts it can emulate move it (harness.host_emulation). Native
16-bit arithmetic has no flag to emulate it: a recording on a CPU without `avx512_fp16` cannot tell how far a CPU
with it moves a float16 value, and there such a value fails its golden ulps with nothing to judge it by. Here a
host that differs from the recording's in that one dimension measures it: the same contracts recorded on it (a
folder of its own, `here`) against the golden directory's values, the largest absolute move of each value kept as
its host noise of that dimension, as an emulated host's would be (harness.contract.noise.measured), and the host
named in the file's provenance (`host_noise_from`). A later recording that cannot emulate the dimension keeps it
while the value is recorded the same (harness.contract.noise.unmeasured_host_noise).

A host that differs in more than one dimension is refused: a move there cannot be put down to one of them. One
that differs only in dimensions the recording emulated adds nothing: the recording measured them.

Run by the golden session in the entry's environment: `python -m harness.contract.host_measure GOLDEN HERE`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.contract.encoding import decode_array
from harness.contract.golden import dumps
from harness.contract.noise import measured
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.host_emulation import EMULATED, EMULATIONS, HOST_NOISE
from harness.model import host as hosts


# The dimensions a flag emulates: a recording that lists one under host_noise_from measured it itself. Another
# listed there (native 16-bit arithmetic) was measured by a host that has it: measuring again adds to it.
EMULATED_DIMENSIONS = frozenset(e.dimension for e in EMULATIONS)


@dataclasses.dataclass(frozen=True)
class Measured:
    """One golden file measured: its name, the dimension, how many of its values this host moved, and the largest
    move (None: the host computes its values as the recording's, or measured nothing new)."""

    name: str
    dimension: hosts.Dimension | None
    moved: int
    values: int
    largest: float | None
    written: bool
    said: str = ""


def _host(doc: dict) -> hosts.Host | None:
    return hosts.from_provenance((doc.get("provenance") or {}).get("host"))


def measure_file(path: Path, here_path: Path) -> Measured:
    """Add this host's move of each of `path`'s values (as `here_path` recorded them) to their host noise."""
    doc, here = json.loads(path.read_text()), json.loads(here_path.read_text())
    name = path.stem
    recording, this = _host(doc), _host(here)
    if recording is None or this is None:
        raise HarnessError(f"{path}: its provenance names no host (recorded before hosts were noted): record it again "
                           "with `golden` first, then measure this host.")
    differs = hosts.differences(recording, this)
    emulated = set((doc.get("provenance") or {}).get(EMULATED) or {})
    if not differs:
        return Measured(name, None, 0, 0, None, False, f"{name}: this host computes as the recording's "
                                                         f"({recording.text()}): nothing to measure")
    if len(differs) > 1:
        listed = ", ".join(sorted(d.value for d in differs))
        raise HarnessError(f"{path}: this host ({this.text()}) differs from the recording's ({recording.text()}) in "
                           f"{listed} ({hosts.difference_text(recording, this)}): a move here cannot be put down "
                           "to one of them. Make it compute as the recording's in all but one (OPENBLAS_CORETYPE="
                           f"{recording.blas or 'its kernel'} for the BLAS kernel) and run again.")
    dimension = next(iter(differs))
    if dimension.value in emulated and dimension in EMULATED_DIMENSIONS:
        return Measured(name, dimension, 0, 0, None, False,
                        f"{name}: {dimension.value} was measured by the recording's emulated hosts: nothing to add")
    values, moved, largest = doc.get("values") or {}, 0, None
    measured_values = 0
    for key, entry in values.items():
        other = (here.get("values") or {}).get(key)
        if not (isinstance(entry, dict) and isinstance(other, dict) and "values" in entry and "values" in other):
            continue
        move = measured([decode_array(other)], decode_array(entry))
        if move is None:
            continue
        measured_values += 1
        if move > 0:
            noise = dict(entry.get(HOST_NOISE) or {})
            noise[dimension.value] = max(move, float(noise.get(dimension.value, 0.0)))
            values[key] = {**entry, HOST_NOISE: dict(sorted(noise.items()))}
            moved += 1
            largest = move if largest is None else max(largest, move)
    provenance = doc.setdefault("provenance", {})
    before = dict(provenance.get(EMULATED) or {})
    named = sorted(set(before.get(dimension.value, [])) | {this.text()})
    provenance[EMULATED] = dict(sorted({**before, dimension.value: named}.items()))
    atomic_write_text(path, dumps(doc))
    return Measured(name, dimension, moved, measured_values, largest, True,
                    f"{name}: {dimension.value} ({hosts.difference_text(recording, this)}) moved {moved} of "
                    f"{measured_values} values" + (f", largest {largest:.3g}" if largest is not None else ""))


def measure(golden: Path, here: Path) -> list[Measured]:
    """Every golden file of `golden` (and of its copies of the built-in families) that `here` recorded too."""
    found = []
    for path in sorted([*golden.glob("*.json"), *golden.glob("builtin/*.json")]):
        here_path = here / path.relative_to(golden)
        if here_path.is_file():
            found.append(measure_file(path, here_path))
    if not found:
        raise HarnessError(f"this host recorded none of the families of {golden} (see the recording's log above).")
    return found


def main(argv: list[str]) -> int:
    golden, here = (Path(a) for a in argv)
    try:
        found = measure(golden, here)
    except HarnessError as exc:
        print(f"golden --measure-host: {exc}", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    for item in found:
        print(f"golden --measure-host: {item.said}")
    moved = sum(item.moved for item in found)
    print(f"golden --measure-host: {moved} values carry this host's move as their host noise; no value changed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
