"""Bisection across an import gap. A release that imports with neither side's jax leaves its checks a
range; here it is run beside its neighbour (the previous release, or the baseline's) at the newest older
jax with which both import (that jax's jaxlib, and a flax the resolver finds for it). The pair differs
only in the bisected package, so a check that tells them apart there first changed in that release.

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


def bridge(gap: Gap, checks: list[str], jax_releases: list[str], jaxlibs: set[str], defaults: dict[str, str],
           prefix: str, run: Runner) -> tuple[Bridge, dict[str, bool | None]]:
    """The pair at the newest of `jax_releases` with which both import, and per check whether it tells
    them apart there (empty when no jax does); the Bridge says which jax releases were tried and why not."""
    tried = []
    for jax in jax_releases:
        ran = run(f"{prefix}{gap.group}-{gap.release}-jax-{jax}", {**gap.named, **_at(jax, jaxlibs)}, defaults)
        if ran.report is None:
            tried.append(f"{jax}: {gap.release} {ran.outcome}")
            continue
        same = {p: ran.pins[p] for p in ("jax", "jaxlib") if p in ran.pins}
        neighbour = run(f"{prefix}{gap.group}-{gap.against}-jax-{jax}", {**gap.against_named, **same}, ran.pins)
        moved = sorted(p for p, v in neighbour.pins.items() if p not in gap.packages and ran.pins.get(p) != v)
        if neighbour.report is None or moved:
            why = neighbour.outcome if neighbour.report is None else f"resolves only with other {', '.join(moved)}"
            tried.append(f"{jax}: {gap.against} {why}")
            continue
        tried.append(f"{jax}: both import")
        told = {c: differs(neighbour.report.check(c), ran.report.check(c)) for c in checks}
        visible = any(told.values())
        return Bridge(gap.release, gap.against, jax, dict(ran.pins), tried, visible), told
    return Bridge(gap.release, gap.against, None, {}, tried, None), {}
