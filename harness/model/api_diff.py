"""How the public API of the stack's libraries changed from the baseline to an entry: optax's whole
public API, flax.nnx, and the jax names the contracts call. Computed on the host with griffe
(harness.stack.api), stored as `api-diff.json` in the run's reports, shown by the verdict.
Informational, except a removed callable or parameter that the contracts or the project's code use.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.errors import HarnessError
from harness.model import schema_check
from harness.model.codec import from_json, to_json

API_DIFF_FILE = "api-diff.json"
API_DIFF_SCHEMA_VERSION = 1


class ApiChangeKind(enum.StrEnum):
    """What changed about one public name; the breaking kinds come first."""

    REMOVED = "removed"
    MODULE_REMOVED = "module removed"
    PARAMETER_REMOVED = "parameter removed"
    PARAMETER_REQUIRED = "parameter now required"  # added without a default, or lost its default
    KEYWORD_ONLY = "made keyword-only"  # or otherwise no longer passable as before (positional-only...)
    PARAMETER_MOVED = "parameter moved"  # a positional parameter at another position
    KIND_CHANGED = "kind changed"  # a function became a class, an attribute...
    DEFAULT_CHANGED = "default changed"
    PARAMETER_ADDED = "parameter added"  # with a default: calls that do not pass it get the default
    ADDED = "added"
    MODULE_ADDED = "module added"

    @property
    def breaking(self) -> bool:
        """A call that worked on the baseline may fail or mean something else (griffe's breakages)."""
        return self not in (ApiChangeKind.PARAMETER_ADDED, ApiChangeKind.ADDED, ApiChangeKind.MODULE_ADDED)

    @property
    def removes(self) -> bool:
        """A callable, module or parameter is gone: a change of contract when something uses it."""
        return self in (ApiChangeKind.REMOVED, ApiChangeKind.MODULE_REMOVED, ApiChangeKind.PARAMETER_REMOVED)

    @property
    def rank(self) -> int:
        return list(ApiChangeKind).index(self)


@dataclasses.dataclass(frozen=True)
class ApiChange:
    """One change of one public name, in the user's terms (the shortest public path: optax.MultiSteps)."""

    package: str  # optax, flax, jax
    kind: ApiChangeKind
    symbol: str  # the public name, e.g. optax.MultiSteps
    parameter: str | None = None
    old: str | None = None  # the baseline's default / kind, as source text
    new: str | None = None  # the entry's
    doc: str = ""  # the entry's docstring for the parameter (or the name's first line)
    used_by_checks: list[str] = dataclasses.field(default_factory=list)  # "accumulation/test_state_layout"
    used_by_project: list[str] = dataclasses.field(default_factory=list)  # "regressor/train.py:41"

    @property
    def used(self) -> bool:
        return bool(self.used_by_checks or self.used_by_project)


@dataclasses.dataclass(frozen=True)
class PackageApiDiff:
    """One library's API on the baseline and on the entry."""

    package: str
    scope: str  # what was compared: "public API", "flax.nnx", "the 51 names the contracts use"
    old_version: str | None
    new_version: str | None
    changes: list[ApiChange]
    unread: list[str] = dataclasses.field(default_factory=list)  # names whose source could not be read
    problem: str | None = None  # why it was not compared (a package not installed, sources missing)


@dataclasses.dataclass(frozen=True)
class ApiDiff:
    """api-diff.json: the baseline's and one entry's public API compared, per library."""

    schema_version: int
    entry: str  # the entry compared with the baseline (the candidate)
    packages: list[PackageApiDiff]
    seconds: float  # the time the comparison took

    @property
    def changes(self) -> list[ApiChange]:
        """Every change, breaking first."""
        return sorted((c for p in self.packages for c in p.changes), key=lambda c: (c.kind.rank, c.symbol))

    @property
    def used_removals(self) -> list[ApiChange]:
        """Removed names or parameters that the contracts or the project's code use: a change of contract."""
        return [c for c in self.changes if c.kind.removes and c.used]


SCHEMA_PATH = Path(__file__).with_name("api_diff.schema.json")


def write(path: Path, diff: ApiDiff) -> None:
    atomic_write_text(path, json.dumps(to_json(diff), indent=1) + "\n")


def read(path: str | Path) -> ApiDiff:
    """The API diff at `path`, checked against its schema; HarnessError naming the fix."""
    try:
        doc = json.loads(Path(path).read_text())
        violation = schema_check.first_violation(doc, SCHEMA_PATH)
        if violation is not None:
            raise ValueError(f"at {violation.where}: {violation.message}")
        return from_json(ApiDiff, doc)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise HarnessError(f"the API diff {path} is unreadable ({exc}); delete it and judge again to "
                           "compute it anew.") from None
