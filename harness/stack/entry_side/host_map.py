"""Which checks another host can change, as the recording measured it, and the checks a run on an emulated host
takes: those, and a rotating share of the rest.

`golden` records every contract again on each host this machine can emulate and keeps beside each value the
largest move of each dimension (its `host_noise`, harness.host_emulation): that is the measured map of which
values a host changes. A run's report says which golden values each check compared (`golden:<key>`), so a check
whose values moved in a dimension is host-sensitive in it. A run on an emulated host (`nox -s tests`) runs the
checks sensitive in its dimension, and of the others one bucket of SAMPLE_OF by a stable hash of the check's id,
the bucket turning with each commit: a check that becomes host-sensitive without its recording saying so (a
statement that no longer holds on another kernel, a value recorded where the kernel could not be emulated) is
run there within SAMPLE_OF commits, and every check once in SAMPLE_OF.

`golden` takes the same map from the report of the baseline's last judging run: each emulated host records the
checks its dimension moved, the turn's sample and every check that report does not hold (a new one); the values it
leaves out keep the host noise their file held while they are recorded the same (harness.contract.noise).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from harness import devices
from harness.host_emulation import HOST_NOISE, SAMPLE_OF
from harness.model.report import CheckRecord
from harness.stack.pins import pin_files

GOLDEN_LABEL = "golden:"


@dataclasses.dataclass(frozen=True)
class Selection:
    """The checks a run on one emulated host takes, and why: `sensitive` its dimension moved when recorded,
    `sampled` this turn's bucket of the others."""

    dimension: str
    sensitive: tuple[str, ...]
    sampled: tuple[str, ...]
    total: int
    bucket: int

    @property
    def checks(self) -> list[str]:
        return sorted({*self.sensitive, *self.sampled})

    def said(self) -> str:
        return (f"{len(self.checks)} of {self.total} checks: {len(self.sensitive)} whose golden values the "
                f"{self.dimension} dimension moved when recorded, and {len(self.sampled)} of the others (bucket "
                f"{self.bucket + 1} of {SAMPLE_OF}, turning with each commit)")


def emulable(checks: list[CheckRecord]) -> list[CheckRecord]:
    """The checks a run on an emulated host can take: the data-parallel family's process is not emulated."""
    return [c for c in checks if c.family != devices.FAMILY]


def moved_keys(golden: Path) -> dict[str, dict[str, frozenset[str]]]:
    """family -> golden key -> the dimensions its host noise holds (only the keys some host moved)."""
    found: dict[str, dict[str, frozenset[str]]] = {}
    for path in sorted(golden.glob("*.json")):
        try:
            values = json.loads(path.read_text()).get("values") or {}
        except (OSError, ValueError):
            continue  # an unreadable file fails its own checks where it is read
        moved = {key: frozenset(entry[HOST_NOISE]) for key, entry in values.items()
                 if isinstance(entry, dict) and isinstance(entry.get(HOST_NOISE), dict) and entry[HOST_NOISE]}
        if moved:
            found[path.stem] = moved
    return found


def sensitive(checks: list[CheckRecord], golden: Path, *more: Path) -> dict[str, frozenset[str]]:
    """check id -> the dimensions in which some golden value it compared moved when recorded: in `golden`, or in
    any of the `more` directories of the same layout (a team's copies of the built-in families, the values the
    tool ships), a key's dimensions the union of what each holds."""
    moved: dict[str, dict[str, frozenset[str]]] = {}
    for directory in (golden, *more):
        for family, keys in moved_keys(directory).items():
            known = moved.setdefault(family, {})
            for key, dimensions in keys.items():
                known[key] = known.get(key, frozenset()) | dimensions
    found: dict[str, frozenset[str]] = {}
    for check in checks:
        keys = moved.get(check.family, {})
        dimensions = frozenset(d for c in check.comparisons if c.label.startswith(GOLDEN_LABEL)
                               for d in keys.get(c.label[len(GOLDEN_LABEL):], ()))
        if dimensions:
            found[check.id] = dimensions
    return found


def bucket_of(check_id: str) -> int:
    """The check's bucket: the same on every machine and every run."""
    return int(hashlib.sha256(check_id.encode()).hexdigest(), 16) % SAMPLE_OF


def turn(root: Path) -> int:
    """This run's bucket: the commit's count of ancestors in the repository at `root` (0 outside one), so a run
    of one commit always takes the same checks."""
    done = pin_files.git(root, "rev-list", "--count", "HEAD")
    text = done.stdout.decode().strip() if done.returncode == 0 else ""
    return int(text) % SAMPLE_OF if text.isdigit() else 0


def select(checks: list[CheckRecord], moved: dict[str, frozenset[str]], dimension: str, bucket: int) -> Selection:
    """The checks of a run (the native run's report's) a run on a host emulating `dimension` takes, `moved` the
    dimensions each check's values moved in (`sensitive`)."""
    ids = [c.id for c in checks]
    hit = tuple(sorted(i for i in ids if dimension in moved.get(i, ())))
    sampled = tuple(sorted(i for i in ids if i not in hit and bucket_of(i) == bucket))
    return Selection(dimension, hit, sampled, len(ids), bucket)


def left_out(checks: list[CheckRecord], selection: Selection) -> list[str]:
    """The checks of `checks` the selection does not take: what an emulated host's recording leaves out
    (--harness-except), so that a check the report does not hold (a new one) runs there."""
    taken = set(selection.checks)
    return sorted(c.id for c in checks if c.id not in taken)


def write_ids(ids: list[str], path: Path) -> Path:
    """Check ids, one a line, as --harness-only and --harness-except read them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{check}\n" for check in ids))
    return path


def write(selection: Selection, path: Path) -> Path:
    """The selection as the contract side's --harness-only reads it: one check id a line."""
    return write_ids(selection.checks, path)
