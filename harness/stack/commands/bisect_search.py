"""The two halves of bisection that need no suite: the releases to probe (from the package index),
and the joint binary search over them. The search only sees an oracle (release index, checks) ->
changed / unchanged / unknown, so it is tested without running anything.

Releases are numbered 0 (the baseline's) .. n + 1 (the candidate's): every check is unchanged at 0
and changed at n + 1. A check's answer is the first release it changed in, assuming it changed once;
when the releases between its last unchanged and first changed release could not be judged (not
installable, not importable) the answer is that range, unless a bridge (bisect_bridge) judged the
first of them against its neighbour at an older jax. Then the text of each answer.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import urllib.request
from collections.abc import Callable

from packaging.version import InvalidVersion, Version

from harness.errors import HarnessError
from harness.model.bisection import Bridge, FirstChanged

INDEX_URL = "https://pypi.org/pypi/{package}/json"


def fetch_index(package: str) -> dict:
    """The package's PyPI JSON document (release -> files)."""
    try:
        with urllib.request.urlopen(INDEX_URL.format(package=package), timeout=30) as answer:
            return json.load(answer)
    except (OSError, ValueError) as exc:
        raise HarnessError(f"cannot list the releases of {package} from PyPI ({exc}); bisect when online.") from None


def _published(files: list[dict]) -> bool:
    """A release with at least one file that is not yanked (an empty or fully yanked one cannot be installed)."""
    return any(not f.get("yanked", False) for f in files)


def _installable(package: str, prerelease: bool, fetch: Callable[[str], dict]) -> list[tuple[Version, str]]:
    """The package's published releases with a valid version (pre-releases only when asked), as listed."""
    found = []
    for text, files in fetch(package).get("releases", {}).items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if (prerelease or not version.is_prerelease) and _published(files):
            found.append((version, text))
    return found


def releases(package: str, baseline: str, candidate: str, prerelease: bool = False,
             fetch: Callable[[str], dict] = fetch_index) -> list[str]:
    """The releases strictly between the baseline's and the candidate's, oldest first (newest first
    for a downgrade); pre-releases only when asked."""
    low, high = sorted((Version(baseline), Version(candidate)))
    found = [(v, text) for v, text in _installable(package, prerelease, fetch) if low < v < high]
    return [text for _, text in sorted(found, reverse=Version(candidate) < Version(baseline))]


def older_releases(package: str, than: str, count: int, prerelease: bool = False,
                   fetch: Callable[[str], dict] = fetch_index) -> list[str]:
    """The `count` newest published releases older than `than`, newest first (pre-releases only when asked)."""
    found = [(v, text) for v, text in _installable(package, prerelease, fetch) if v < Version(than)]
    return [text for _, text in sorted(found, reverse=True)[:count]]


def all_releases(package: str, fetch: Callable[[str], dict] = fetch_index) -> set[str]:
    return {text for text, files in fetch(package).get("releases", {}).items() if _published(files)}


@dataclasses.dataclass(frozen=True)
class Seen:
    """What one probe of a release said: per check True (changed), False (unchanged) or None (unknown),
    and a note (why it is unknown, or how the release was installed); `why_unknown`, when given, is
    what the checks it left unknown are told instead (the others judged there get the note)."""

    changed: dict[str, bool | None]
    note: str = ""
    why_unknown: str = ""


@dataclasses.dataclass
class _State:
    lo: int  # the last release known unchanged
    hi: int  # the first release known changed
    unknown: dict[int, str] = dataclasses.field(default_factory=dict)  # release -> why it is not known
    notes: dict[int, str] = dataclasses.field(default_factory=dict)

    def next_probe(self) -> int | None:
        """The release nearest the middle of the interval not yet known to be unknown."""
        left = [i for i in range(self.lo + 1, self.hi) if i not in self.unknown]
        middle = (self.lo + self.hi) / 2
        return min(left, key=lambda i: (abs(i - middle), i)) if left else None


@dataclasses.dataclass(frozen=True)
class Span:
    """A check's first changed release: exactly `last` when first == last, else somewhere in first..last."""

    first: int
    last: int
    unknown: dict[int, str]  # why each release before `last` in the span is not known
    notes: dict[int, str]  # how the releases that decided it were probed (when it was not plainly)


def search(count: int, checks: list[str], probe: Callable[[int, list[str]], Seen]) -> dict[str, Span]:
    """Binary search over releases 1..count for all checks at once: each round probes the release most
    checks want next, with every check whose interval holds it; one run, however many checks."""
    states = {check: _State(0, count + 1) for check in checks}
    while True:
        wanted = [i for i in (s.next_probe() for s in states.values()) if i is not None]
        if not wanted:
            break
        index = collections.Counter(wanted).most_common(1)[0][0]
        batch = [c for c, s in states.items() if s.lo < index < s.hi and index not in s.unknown]
        seen = probe(index, batch)
        for check in batch:
            state, changed = states[check], seen.changed.get(check)
            if changed is None:
                state.unknown[index] = seen.why_unknown or seen.note or "not judged"
                continue
            state.hi, state.lo = (index, state.lo) if changed else (state.hi, index)
            if seen.note:
                state.notes[index] = seen.note
    return {check: Span(s.lo + 1, s.hi, {i: why for i, why in s.unknown.items() if s.lo < i < s.hi},
                        {i: n for i, n in s.notes.items() if i in (s.lo, s.hi)}) for check, s in states.items()}


def failures(failed: list[tuple[str, str]]) -> str:
    """'not importable with jax 0.11.2 nor with jax 0.12.0.1'."""
    if len({outcome for outcome, _ in failed}) == 1:
        return f"{failed[0][0]} with " + " nor with ".join(pins for _, pins in failed)
    return ", ".join(f"{outcome} with {pins}" for outcome, pins in failed)


def answer(check: str, group: str, package: str, versions: list[str], span: Span,
           bridge: Bridge | None = None) -> FirstChanged:
    """The check's first changed release, or the range, and what was said of the releases that decided it."""
    first, last = versions[span.first], versions[span.last]
    said = [*span.unknown.values(), *(span.notes[i] for i in sorted(span.notes))]
    if bridge is not None and bridge.changed_in is not None:  # judged beside its neighbour at an older jax
        first = last = bridge.changed_in
        said = [bridge_said(bridge, package), span.unknown.get(span.first, ""), span.notes.get(span.first - 1, "")]
    elif bridge is not None:
        said.append(bridge_said(bridge, package))
    said = [s for s in said if s]
    text = f"{package} {first}" if first == last else f"{package} {first}–{last}"
    text += f" ({'; '.join(dict.fromkeys(said))})" if said else ""
    return FirstChanged(check, group, package, first, last, text, bridge)


def bridge_said(bridge: Bridge, package: str) -> str:
    """What the answer says of the bridge, for the check it was recorded for (its `visible`, `changed_in`)."""
    x, w, at = bridge.release, bridge.against, f"at jax {bridge.jax}, where {bridge.release} imports"
    if bridge.jax is None:
        tried = f"tried {'; '.join(bridge.tried)}" if bridge.tried else "the package index lists none"
        return f"no older jax imports both {package} {x} and {w} ({tried})"
    if bridge.changed_in == x:
        return f"judged against {package} {w} {at}"
    if bridge.changed_in is not None:
        return f"judged against {package} {x} {at}; there {x} does not differ from {w}"
    if bridge.visible is None:
        return f"{at}, the check was not judged on both {w} and {x}: unknown"
    beyond = f" nor {x} and {bridge.later}" if bridge.later else ""
    return (f"{at}, the check does not tell {package} {w} and {x} apart{beyond}: the change is not visible there, "
            "unknown")
