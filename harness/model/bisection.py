"""reports/bisect.json: which release of the blamed package first changed each contract
(`nox -s upgrade -- --bisect`, harness.stack.commands.bisect). Written by the host side, read by the verdict.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.errors import HarnessError
from harness.model.codec import from_json, to_json

BISECT_FILE = "bisect.json"


@dataclasses.dataclass(frozen=True)
class Probe:
    """One run of the changed checks on one intermediate release (the other packages as `pins` say)."""

    entry: str  # the report's name, e.g. bisect-optax-0.2.7
    group: str  # the package group bisected: jax (with jaxlib), optax, ...
    release: str
    pins: dict[str, str]  # empty when the release did not resolve
    checks: list[str]  # the check ids it ran
    outcome: str  # "judged", "not installable", "not importable"
    changed: list[str]  # the checks whose contract changed there
    note: str | None
    seconds: float


@dataclasses.dataclass(frozen=True)
class Bridge:
    """A release that imports with neither side's jax, run beside its neighbour at an older jax (the
    newest with which both import, with its jaxlib and a flax that resolves with it): the pair differs
    only in the bisected package, so a check that tells them apart changed in that release."""

    release: str
    against: str  # its neighbour: the previous release, or the baseline's
    jax: str | None  # the jax both were judged at; None when no jax tried imports both
    pins: dict[str, str]  # the release's pins there (the neighbour's differ only in the bisected group)
    tried: list[str]  # each jax tried, newest first, and what it gave: "0.11.1: 0.2.7 not importable"
    visible: bool | None  # whether the check tells the two apart there; None when not judged there
    later: str | None = None  # the next release, run there too for the checks the pair did not tell apart
    changed_in: str | None = None  # the release the check first differs in there (release or later); None: none


@dataclasses.dataclass(frozen=True)
class FirstChanged:
    """The release a check first changed in: exact (first == last) or a range the probes could not narrow."""

    check_id: str
    group: str
    package: str
    first: str  # the earliest release it may have changed in
    last: str  # the release it is known changed in; == first when exact
    text: str  # "optax 0.2.7", or "optax 0.2.7–0.2.8 (0.2.7 not importable with jax 0.11.2)"
    bridge: Bridge | None = dataclasses.field(default=None, metadata={"omit_if_none": True})  # across a gap

    @property
    def judged_at(self) -> str | None:
        """The jax the answer was judged at when its release imports with neither side's jax."""
        return self.bridge.jax if self.bridge is not None and self.bridge.changed_in is not None else None

    @property
    def exact(self) -> bool:
        return self.first == self.last


@dataclasses.dataclass(frozen=True)
class Bisection:
    """Every changed check's first release, the probes that found them, and how long it took."""

    baseline: dict[str, str]
    candidate: dict[str, str]
    releases: dict[str, list[str]]  # group -> its releases strictly between baseline and candidate
    checks: list[FirstChanged]
    probes: list[Probe]
    seconds: float
    notes: list[str] = dataclasses.field(default_factory=list)

    def first_changed(self) -> dict[str, str]:
        """check id -> where it first changed (two blamed groups: both, joined)."""
        found: dict[str, list[str]] = {}
        for result in self.checks:
            found.setdefault(result.check_id, []).append(result.text)
        return {check: "; ".join(texts) for check, texts in found.items()}


def write(path: Path, bisection: Bisection) -> None:
    atomic_write_text(path, json.dumps(to_json(bisection), indent=1, ensure_ascii=False) + "\n")


def read(path: str | Path) -> Bisection:
    try:
        return from_json(Bisection, json.loads(Path(path).read_text()))
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise HarnessError(f"the bisection {path} is unreadable ({exc}); run `nox -s upgrade -- --bisect` again.") \
            from None
