"""What one platform's verdict said of each check, kept for the same pins, so that a verdict on another
platform can name what only one of them shows (harness.verdict.across_platforms): a change a TPU's compiler
makes and the CPU's does not, or the reverse.

Same pins: the baseline's and the candidate's imported versions and the suite's own version, as their reports
say; a record of other pins is never read. Beside each record, the baseline's report (gzipped): the chip's own
drift is its values against the CPU's baseline for the same pins.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.model import codec, report_io
from harness.model.report import Report

FOLDER = ".platforms"  # in the published reports directory, beside the report cache


@dataclasses.dataclass(frozen=True)
class PlatformMarks:
    """One platform's verdict on one pair of stacks, check by check."""

    platform: str  # the baseline's JAX backend: cpu, tpu, gpu
    device: str  # what it ran on: "1 TPU v5 lite"
    pins: str  # same_pins() of the pair judged
    judged_at: str  # when (the candidate report's end)
    changed: dict[str, str]  # check id -> its mark, for every check whose contract changed
    not_here: list[str]  # checks refused as not on this platform (harness.platforms)


def same_pins(base: Report, candidate: Report) -> str:
    """The pair's identity: both stacks' imported versions and the harness that judged them."""
    said = [base.environment.versions, candidate.environment.versions,
            base.environment.packages.get("upgrade-harness"), candidate.environment.packages.get("upgrade-harness")]
    return hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()[:20]


def _record(folder: Path, pins: str, platform: str) -> Path:
    return folder / f"{pins}-{platform}.json"


def _baseline(record: Path) -> Path:
    return record.with_suffix(".baseline.json.gz")


def write(folder: Path, marks: PlatformMarks, baseline_file: Path) -> None:
    """Keep this platform's marks and its baseline report for the pins (replacing an earlier run's): the report's
    file as the run wrote it, compressed (0.08 s for 7 MB; encoding the report again took 0.2-0.3 s every run)."""
    folder.mkdir(parents=True, exist_ok=True)
    record = _record(folder, marks.pins, marks.platform)
    _baseline(record).write_bytes(gzip.compress(Path(baseline_file).read_bytes(), 6))
    atomic_write_text(record, json.dumps(codec.to_json(marks), indent=1) + "\n")


def others(folder: Path, pins: str, platform: str) -> list[PlatformMarks]:
    """The other platforms' records for the same pins (an unreadable one is skipped: it only informs)."""
    found = []
    for path in sorted(folder.glob(f"{pins}-*.json")) if folder.is_dir() else []:
        if path == _record(folder, pins, platform):
            continue
        try:
            found.append(codec.from_json(PlatformMarks, json.loads(path.read_text())))
        except (OSError, ValueError, TypeError, KeyError):
            continue
    return found


def baseline_of(folder: Path, marks: PlatformMarks) -> Report | None:
    """The baseline report a platform's record keeps, or None when it cannot be read."""
    try:
        return report_io.parse(json.loads(gzip.decompress(_baseline(_record(folder, marks.pins, marks.platform))
                                                          .read_bytes())), "a platform's baseline")
    except (OSError, ValueError, report_io.ReportProblem):
        return None
