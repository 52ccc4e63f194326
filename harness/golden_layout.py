"""Where a project's golden directory keeps each family's values: plain Python both sides read (the plugin
reads and writes them; the host tells a team whose baseline differs from the tool's which copies it lacks).

A family is a project's own (its --contracts modules) or built in, and two of one name are two families:
  <golden>/<name>.json           a project's own family, named as the project named it;
  <golden>/builtin/<name>.json   a team's copy of a built-in family (`upgrade-harness golden --record-builtin`),
                                 read before the values the tool ships;
  <golden>/<name>.json           in this checkout, the built-in families themselves (the values the tool ships);
  <golden>/platforms/<platform>/ the same layout again, recorded on an accelerator (`--platform tpu`): a chip's
                                 values are its own, and the CPU's (the directory itself) stay as they are.
An own family's file says so (OWN_MARK). Before copies had a folder of their own, `--record-builtin` wrote them
beside the own families' files, and no own family could take a built-in name: such a file (a built-in name, no
mark) is still read as the team's copy of that built-in family, unless an own family of that name runs too.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness import platforms

PLATFORMS = "platforms"  # the folder of the values recorded on each accelerator platform, inside a golden directory
BUILTIN_COPIES = "builtin"  # the folder of a team's copies of built-in families, inside its golden directory
OWN_MARK = "own"  # `"own": true` in a golden file: the values of one of the project's own families
# A golden entry's measured noise, beside its value and never part of it: the stack's (harness.numerical_noise)
# and the host's (harness.host_emulation). A recording that measures it anew changes no value.
MEASURED_NOISE = ("noise", "host_noise")
ACCEPTED = "accepted"  # a golden file's provenance: {"command", "reason"} of the recording that changed its values
# A golden file's provenance: the digest of its values (their measured noise left out) as its last recording wrote
# them. Values that no longer match it were edited by hand since (harness.stack.run.golden_changes says so).
VALUES_DIGEST = "values_digest"


def without_noise(entry):
    """A golden entry without its measured noise: what tells a changed value, on either side."""
    if isinstance(entry, dict) and any(f in entry for f in MEASURED_NOISE):
        return {k: v for k, v in entry.items() if k not in MEASURED_NOISE}
    return entry


def values_digest(values: dict) -> str:
    """The digest of a golden file's values as JSON holds them, their measured noise left out: the same on the side
    that writes the file and the host that reads it."""
    plain = {key: without_noise(entry) for key, entry in values.items()}
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def on_platform(golden: Path, platform: str | None) -> Path:
    """The golden directory of `platform`: the directory itself on the CPU (or none given), else its
    platforms/<platform>/ folder."""
    return golden if platform in (None, platforms.CPU) else golden / PLATFORMS / platform


def own_file(golden: Path, name: str) -> Path:
    return golden / f"{name}.json"


def builtin_copy(golden: Path, name: str) -> Path:
    """Where a team's copy of the built-in family `name` is recorded."""
    return golden / BUILTIN_COPIES / f"{name}.json"


def _document(path: Path) -> dict | None:
    """The golden file's JSON object; None when it cannot be read (its reader says why)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def marked_own(path: Path) -> bool:
    doc = _document(path)
    return bool(doc and doc.get(OWN_MARK) is True)


def earlier_copy(golden: Path, name: str) -> Path | None:
    """A copy of the built-in family `name` written where copies went before they had their folder: the file
    of that name beside the own families' files, without the own mark; None if there is none."""
    path = own_file(golden, name)
    return path if path.is_file() and not marked_own(path) else None


def team_copy(golden: Path, name: str, own_names: frozenset[str] = frozenset()) -> Path | None:
    """The team's copy of the built-in family `name`: in its folder, else an earlier copy, unless an own family
    of that name (`own_names`: the own families of the run) holds that file; None when the team has none."""
    path = builtin_copy(golden, name)
    if path.is_file():
        return path
    return None if name in own_names else earlier_copy(golden, name)


def keys(path: Path) -> set[str]:
    """The golden keys a file holds (none when it cannot be read)."""
    doc = _document(path)
    values = doc.get("values") if doc else None
    return set(values) if isinstance(values, dict) else set()
