"""Bisection across an import gap. A release that imports with neither side's jax leaves its checks a
range; here it is run beside its neighbour (the previous release, or the baseline's) at the newest older
jax with which both import (that jax's jaxlib, and a flax the resolver finds for it). The pair differs
only in the bisected package, so a check that tells them apart there first changed in that release. A
check they do not tell apart is then looked for between that release and the next one, at the same jax.

Only the probe runner touches the stack: this module decides which jax to try, when to stop, and what a
pair of reports says, so it is tested with a fake runner.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from packaging.version import Version

from harness.model.bisection import Bridge
from harness.model.enums import Outcome
from harness.model.report import CheckRecord, Report
from harness.verdict import bits

MAX_JAX = 8  # older jax releases tried at most, newest first: each one that resolves costs an environment


@dataclasses.dataclass(frozen=True)
class Ran:
    """One probe: its report (None when it did not install or import), what happened, its pins."""

    report: Report | None
    outcome: str  # "judged", "not installable", "not importable"
    pins: dict[str, str]


# (entry name, named pins, the other packages' pins) -> the probe's result
Runner = Callable[[str, dict[str, str], dict[str, str]], Ran]


@dataclasses.dataclass(frozen=True)
class Gap:
    """A release to bridge: its pins and its neighbour's (the bisected group's packages only)."""

    group: str
    packages: tuple[str, ...]  # the group's packages: a neighbour may differ from the release only in these
    release: str
    named: dict[str, str]
    against: str
    against_named: dict[str, str]
    later: str | None = None  # the next release, run beside it for the checks the pair does not tell apart
    later_named: dict[str, str] = dataclasses.field(default_factory=dict)


def differs(before: CheckRecord | None, after: CheckRecord | None) -> bool | None:
    """Whether a check tells two releases apart at the same pins: it passes on one and fails on the other,
    or fails on both with other observed values or another exception; None when one did not judge it."""
    judged = (Outcome.PASSED, Outcome.FAILED)
    if before is None or after is None or before.outcome not in judged or after.outcome not in judged:
        return None
    if before.outcome != after.outcome:
        return True
    if before.outcome == Outcome.PASSED:
        return False

    def failing(check: CheckRecord) -> list:
        return [(c.label, c.observed) for c in check.comparisons if not c.passed]

    return (failing(before) != failing(after) or before.exception != after.exception
            or bits.moved(before, after) is not None)


def _at(jax: str, jaxlibs: set[str]) -> dict[str, str]:
    """jax pinned, with the jaxlib of the same release when there is one (else the resolver picks one)."""
    return {"jax": jax, **({"jaxlib": jax} if jax in jaxlibs else {})}


def older_side(baseline: str, candidate: str) -> str:
    """The older of the two sides' jax: the search goes down from there (neither side's jax imports the gap)."""
    return min(baseline, candidate, key=Version)


def _beside(gap: Gap, ran: Ran, release: str, named: dict[str, str], jax: str, prefix: str,
            run: Runner) -> tuple[Ran | None, str]:
    """Another release of the group at the pins `ran` was judged at; None and why when it cannot be."""
    same = {p: ran.pins[p] for p in ("jax", "jaxlib") if p in ran.pins}
    other = run(f"{prefix}{gap.group}-{release}-jax-{jax}", {**named, **same}, ran.pins)
    moved = sorted(p for p, v in other.pins.items() if p not in gap.packages and ran.pins.get(p) != v)
    if other.report is None:
        return None, f"{release} {other.outcome}"
    if moved:
        return None, f"{release} resolves only with other {', '.join(moved)}"
    return other, ""


Told = dict[str, bool | None]  # per check: whether two releases tell it apart at one jax (None: not judged)


def bridge(gap: Gap, checks: list[str], jax_releases: list[str], jaxlibs: set[str], defaults: dict[str, str],
           prefix: str, run: Runner) -> tuple[Bridge, Told, Told]:
    """The release and its neighbour at the newest of `jax_releases` with which both import, and per check
    whether they differ there; for the checks they do not tell apart, the release and the next one (when
    `gap.later` names it and it imports there too). Empty when no jax does; the Bridge says which jax
    releases were tried and what each gave."""
    tried = []
    for jax in jax_releases:
        ran = run(f"{prefix}{gap.group}-{gap.release}-jax-{jax}", {**gap.named, **_at(jax, jaxlibs)}, defaults)
        if ran.report is None:
            tried.append(f"{jax}: {gap.release} {ran.outcome}")
            continue
        neighbour, why = _beside(gap, ran, gap.against, gap.against_named, jax, prefix, run)
        if neighbour is None:
            tried.append(f"{jax}: {why}")
            continue
        tried.append(f"{jax}: both import")
        told = {c: differs(neighbour.report.check(c), ran.report.check(c)) for c in checks}
        unseen = [c for c, v in told.items() if v is False]
        later, told_later = None, {}
        if unseen and gap.later is not None:
            later, why = _beside(gap, ran, gap.later, gap.later_named, jax, prefix, run)
            if later is None:
                tried.append(f"{jax}: {why}")
            else:
                told_later = {c: differs(ran.report.check(c), later.report.check(c)) for c in unseen}
        return (Bridge(gap.release, gap.against, jax, dict(ran.pins), tried, any(told.values()),
                       gap.later if later is not None else None), told, told_later)
    return Bridge(gap.release, gap.against, None, {}, tried, None), {}, {}
