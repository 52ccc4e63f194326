"""The libraries' changelogs as a ledger: each release's entries that change an in-scope callable's behaviour,
with the built-in contract that sees each one, or why none does ("not seen", reported like a callable gap).

Coverage over callables and parameters says what the suite calls; this says what upstream has actually
changed and whether the suite looks there. The entries were read from each release's changelog, its merged
pull requests and, where a release says nothing, the diff of the callables' source between its tags
(`harness/coverage/changelogs/<package>.toml`, each entry with its source). A release with no in-scope entry
is listed too, with 0, so a release missing from the file is a finding, not a silence.
"""

from __future__ import annotations

import dataclasses
import enum
import tomllib
from collections.abc import Iterable
from pathlib import Path

from harness.errors import HarnessError

FOLDER = Path(__file__).resolve().parent / "changelogs"


class ChangeKind(enum.StrEnum):
    """What an entry changes about its callables."""

    VALUE = "value"
    GRADIENT = "gradient"
    NONFINITE = "nonfinite"
    DTYPE = "dtype"
    DEFAULT = "default"
    RAISES = "raises"
    SIGNATURE = "signature"
    STATE = "state"
    SHAPE = "shape"
    ADDED = "added"
    REMOVED = "removed"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One upstream change to in-scope callables, and the contracts that see it (or why none does)."""

    release: str
    source: str  # the pull request, commit or changelog line the text is from
    text: str  # upstream's wording
    callables: tuple[str, ...]  # ledger names
    kind: ChangeKind
    where: str  # the inputs or arguments where behaviour changes
    seen_by: tuple[str, ...]  # built-in contracts, "family/test_name"
    not_seen: str | None  # why no contract exercises it
    confidence: str

    @property
    def seen(self) -> bool:
        return bool(self.seen_by)


@dataclasses.dataclass(frozen=True)
class Release:
    version: str
    previous: str
    source: str  # where the release's list was read
    entries: tuple[Entry, ...]


@dataclasses.dataclass(frozen=True)
class Changelog:
    package: str
    releases: tuple[Release, ...]

    @property
    def entries(self) -> list[Entry]:
        return [e for r in self.releases for e in r.entries]

    def summary(self) -> str:
        """"9 releases 0.2.0-0.2.8, 128 entries: 102 seen, 26 not seen"."""
        seen = sum(e.seen for e in self.entries)
        span = f"{self.releases[0].version}-{self.releases[-1].version}" if self.releases else "none"
        return (f"{len(self.releases)} releases {span}, {len(self.entries)} entries: {seen} seen, "
                f"{len(self.entries) - seen} not seen")


def read(package: str, folder: Path = FOLDER) -> Changelog:
    """The package's changelog ledger; a malformed file is a HarnessError naming the entry and its fix."""
    path = folder / f"{package}.toml"
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read the changelog ledger ({exc})") from None
    entries: dict[str, list[Entry]] = {}
    for i, e in enumerate(raw.get("entry", [])):
        try:
            entry = Entry(release=e["release"], source=e["source"], text=e["text"], callables=tuple(e["callables"]),
                          kind=ChangeKind(e["kind"]), where=e.get("where", ""), seen_by=tuple(e.get("seen_by", ())),
                          not_seen=e.get("not_seen"), confidence=e.get("confidence", ""))
        except (KeyError, ValueError) as exc:
            raise HarnessError(f"{path}: entry {i + 1} ({e.get('text', '?')!r}): {exc}; each entry needs release, "
                               f"source, text, callables and a kind among {', '.join(ChangeKind)}") from None
        entries.setdefault(entry.release, []).append(entry)
    releases = tuple(Release(r["version"], r["previous"], r["source"], tuple(entries.pop(r["version"], ())))
                     for r in raw.get("release", []))
    if entries:
        raise HarnessError(f"{path}: entries of releases with no [[release]] table: {', '.join(sorted(entries))}")
    counted = {r["version"]: r.get("in_scope_entries") for r in raw.get("release", [])}
    wrong = [f"{r.version} says {counted[r.version]}, lists {len(r.entries)}" for r in releases
             if counted[r.version] != len(r.entries)]
    if wrong:
        raise HarnessError(f"{path}: in_scope_entries does not match the entries: {'; '.join(wrong)}")
    return Changelog(package, releases)


def findings(changelog: Changelog, in_scope: Iterable[str], contract_ids: set[str]) -> list[str]:
    """What is wrong with the ledger against the coverage ledger and the contracts that exist: an entry naming
    a callable out of scope, a contract that does not exist, neither or both of seen_by and not_seen."""
    scope, found = set(in_scope), []
    for e in changelog.entries:
        where = f"{changelog.package} {e.release} {e.source}"
        found += [f"{where}: {name} is not an in-scope callable of the coverage ledger" for name in e.callables
                  if name not in scope]
        found += [f"{where}: seen_by {c}: no such built-in contract" for c in e.seen_by if c not in contract_ids]
        if e.seen == bool(e.not_seen):
            found.append(f"{where}: give either seen_by (the contracts that see it) or not_seen (why none does)")
    return found
