"""The release set the nightly judges: the newest jax, jaxlib, optax and flax that install together, with
the numpy and Python they resolved with. The last judged set is kept between nights in a small JSON
state file, so a night with no new release runs no suites and a changed set is always judged.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.errors import HarnessError
from harness.model.report import STACK_VERSION_KEYS

PACKAGES = STACK_VERSION_KEYS[1:]  # jax, jaxlib, optax, flax, numpy: what a set pins besides python
STATE_KIND = "upgrade-harness release set"
STATE_VERSION = 1


@dataclasses.dataclass(frozen=True)
class ReleaseSet:
    """Exact versions of one stack; `resolved_at` says when, and is not part of the set's identity."""

    python: str  # major.minor: the interpreter's patch release does not make a new set
    jax: str
    jaxlib: str
    optax: str
    flax: str
    numpy: str
    resolved_at: str

    @classmethod
    def of(cls, versions: Mapping[str, str | None], python: str, resolved_at: str) -> ReleaseSet:
        """A set from package -> version (extra packages ignored); HarnessError when one is missing."""
        missing = [p for p in PACKAGES if not isinstance(versions.get(p), str) or not versions.get(p)]
        if missing or not python:
            raise HarnessError(f"a release set needs python and {', '.join(PACKAGES)}; "
                               f"missing {', '.join(missing) or 'python'}.")
        return cls(python=major_minor(python), resolved_at=resolved_at, **{p: versions[p] for p in PACKAGES})

    @property
    def versions(self) -> dict[str, str]:
        return {pkg: getattr(self, pkg) for pkg in PACKAGES}

    def same_releases(self, other: ReleaseSet) -> bool:
        return self.python == other.python and self.versions == other.versions

    @property
    def label(self) -> str:
        """'jax 0.12.0.1, optax 0.2.8, flax 0.12.12, numpy 2.5.5, Python 3.12'; jaxlib is named only
        when it is not jax's version (it normally follows jax)."""
        jax = self.jax if self.jaxlib == self.jax else f"{self.jax} (jaxlib {self.jaxlib})"
        return f"jax {jax}, optax {self.optax}, flax {self.flax}, numpy {self.numpy}, Python {self.python}"

    @property
    def day(self) -> str:
        return self.resolved_at[:10] if len(self.resolved_at) >= 10 else self.resolved_at or "an unknown date"


def major_minor(python: str) -> str:
    """'3.12.1' -> '3.12': a report records the full version, the matrix only major.minor."""
    return ".".join(python.split(".")[:2])


class Action(enum.Enum):
    NEW_SET = "run"  # judge it: the suites run
    SAME_AS_LAST = "skip"  # judged already: nothing to learn from running the suites again


@dataclasses.dataclass(frozen=True)
class Decision:
    """Whether tonight's set is judged, and the sentence that says why (for the log and job summary)."""

    action: Action
    text: str

    @property
    def runs(self) -> bool:
        return self.action is Action.NEW_SET


def _changes(current: ReleaseSet, last: ReleaseSet) -> str:
    moved = [f"{pkg} {last.versions[pkg]} → {current.versions[pkg]}" for pkg in PACKAGES
             if last.versions[pkg] != current.versions[pkg]]
    if last.python != current.python:
        moved.append(f"Python {last.python} → {current.python}")
    return ", ".join(moved)


def decide(current: ReleaseSet, last_judged: ReleaseSet | None) -> Decision:
    """Run unless the set is exactly the one judged last (any version differing, or no record, runs)."""
    if last_judged is None:
        return Decision(Action.NEW_SET, f"New release set: {current.label} (no release set was judged before).")
    if current.same_releases(last_judged):
        return Decision(Action.SAME_AS_LAST, f"Same release set as last judged on {last_judged.day}: "
                                             f"{current.label}. The suites did not run.")
    return Decision(Action.NEW_SET, f"New release set: {current.label} (since the set judged on "
                                    f"{last_judged.day}: {_changes(current, last_judged)}).")


def to_json(release_set: ReleaseSet) -> dict:
    return {"kind": STATE_KIND, "version": STATE_VERSION, "python": release_set.python,
            "versions": release_set.versions, "resolved_at": release_set.resolved_at}


def from_json(doc: object) -> ReleaseSet:
    """A state document as a set; HarnessError when it is not one this module wrote."""
    if not isinstance(doc, dict) or doc.get("kind") != STATE_KIND or doc.get("version") != STATE_VERSION:
        raise HarnessError(f"it is not a version-{STATE_VERSION} {STATE_KIND} file")
    versions, python, resolved_at = doc.get("versions"), doc.get("python"), doc.get("resolved_at")
    if not isinstance(versions, dict) or not isinstance(python, str) or not isinstance(resolved_at, str):
        raise HarnessError("it lacks python, versions or resolved_at")
    return ReleaseSet.of(versions, python, resolved_at)


def write_state(path: Path, release_set: ReleaseSet) -> None:
    atomic_write_text(path, json.dumps(to_json(release_set), indent=1) + "\n")


def read_state(path: Path) -> tuple[ReleaseSet | None, str | None]:
    """The last judged set and a note for the log: (None, None) when there is no state yet, (None, note)
    when the file is unreadable or garbled (the night then runs: judging twice beats never judging)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"the last judged release set ({path}) is unreadable ({exc.strerror or exc}); judging anyway."
    try:
        return from_json(json.loads(data)), None
    except (ValueError, HarnessError) as exc:  # bad JSON or UTF-8, or not a release set
        return None, f"the last judged release set ({path}) is garbled ({exc}); judging anyway."
