"""The version matrix: the one place that says which stacks the harness compares.

Every other part (noxfile sessions, lock files, reports, the upgrade verdict) reads
the entries from here. Entries pin python, jax, jaxlib, optax, flax and numpy.
"""

from __future__ import annotations

import dataclasses
import re

from harness.errors import HarnessError
from harness.model.report import STACK_VERSION_KEYS

PYTHON = "3.12"
PACKAGES = STACK_VERSION_KEYS[1:]  # what an entry pins besides python: jax, jaxlib, optax, flax, numpy

# Packages that are bumped together when attributing a change: jaxlib follows jax.
GROUPS = {"jax": ("jax", "jaxlib"), "optax": ("optax",), "flax": ("flax",), "numpy": ("numpy",)}

BASELINE = "baseline"
CANDIDATE = "candidate"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One stack to run the contract suite in."""

    name: str
    pins: dict[str, str]
    description: str
    python: str = PYTHON
    locked: bool = True  # False for an ad-hoc candidate: resolved live, no lock file.

    @property
    def requirements(self) -> list[str]:
        return [f"{pkg}=={self.pins[pkg]}" for pkg in PACKAGES if pkg in self.pins]

    @property
    def pin_text(self) -> str:
        return " ".join(self.requirements)


_BASELINE_PINS = {
    "jax": "0.11.2",
    "jaxlib": "0.11.2",
    "optax": "0.2.6",
    "flax": "0.12.12",  # newest flax that resolves with jax 0.11.2
    "numpy": "2.5.5",
}
_CANDIDATE_PINS = {
    "jax": "0.12.0.1",
    "jaxlib": "0.12.0.1",
    "optax": "0.2.8",
    "flax": "0.12.12",
    "numpy": "2.5.5",
}


def bumped_groups(base: dict[str, str], other: dict[str, str]) -> list[str]:
    """The package groups whose pins differ between two stacks."""
    return [g for g, pkgs in GROUPS.items() if any(base.get(p) != other.get(p) for p in pkgs)]


def single_package_entries(base: Entry, candidate: Entry) -> list[Entry]:
    """One entry per bumped group, the rest at baseline: tells which package caused a change."""
    groups = bumped_groups(base.pins, candidate.pins)
    if len(groups) < 2:
        return []
    entries = []
    for group in groups:
        pins = dict(base.pins)
        pins.update({p: candidate.pins[p] for p in GROUPS[group] if p in candidate.pins})
        entries.append(
            Entry(
                name=f"{group}-only",
                pins=pins,
                description=f"baseline with only {'/'.join(GROUPS[group])} bumped to the candidate",
                locked=candidate.locked,
            )
        )
    return entries


_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([A-Za-z0-9_.+\-!]+)\s*$")


def parse_candidate(text: str) -> dict[str, str]:
    """Parse `--candidate "jax==X jaxlib==X optax==Y flax==Z"` into pins."""
    pins: dict[str, str] = {}
    for token in text.replace(",", " ").split():
        match = _REQ.match(token)
        if not match:
            raise HarnessError(
                f"--candidate: cannot read {token!r}. Write exact pins separated by spaces, "
                f'e.g. --candidate "jax==0.12.0.1 jaxlib==0.12.0.1 optax==0.2.8 flax==0.12.12".'
            )
        name = match.group(1).lower().replace("_", "-")
        if name not in PACKAGES:
            raise HarnessError(
                f"--candidate: {name!r} is not a package the matrix pins; "
                f"the candidate may pin {', '.join(PACKAGES)}."
            )
        pins[name] = match.group(2)
    if not pins:
        raise HarnessError('--candidate is empty; give pins such as "jax==0.12.0.1 jaxlib==0.12.0.1".')
    return pins


def entries(candidate_override: str | None = None) -> dict[str, Entry]:
    """All matrix entries by name, with the candidate replaced when an ad-hoc one is given."""
    baseline = Entry(BASELINE, dict(_BASELINE_PINS), "the pinned stack the golden values come from")
    if candidate_override:
        pins = dict(_BASELINE_PINS)
        pins.update(parse_candidate(candidate_override))
        candidate = Entry(CANDIDATE, pins, "ad-hoc candidate given with --candidate", locked=False)
    else:
        candidate = Entry(CANDIDATE, dict(_CANDIDATE_PINS), "the newest releases: the bump under review")
    skew_pins = dict(_BASELINE_PINS, jax=_CANDIDATE_PINS["jax"])
    result = {e.name: e for e in [baseline, candidate, *single_package_entries(baseline, candidate)]}
    if not candidate_override:
        result["jaxlib-skew"] = Entry(
            "jaxlib-skew", skew_pins, "new jax on the baseline jaxlib, a pairing jax allows"
        )
    return result


def upgrade_plan(all_entries: dict[str, Entry]) -> list[Entry]:
    """What `nox -s upgrade` runs: baseline, candidate, and the single-package entries."""
    base, cand = all_entries[BASELINE], all_entries[CANDIDATE]
    return [base, cand, *single_package_entries(base, cand)]
