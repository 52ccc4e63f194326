"""The installed harness's distribution metadata (the *.dist-info beside the package), read back.

Read with packaging, not by matching text: build backends write the same requirement differently
(setuptools `extra == "contract"`, hatchling `extra == 'contract'`).
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.errors import HarnessError

DIST = "upgrade-harness"
_EXTRA = re.compile(r'extra == "([^"]+)"')


@dataclass(frozen=True)
class Metadata:
    """What the installed distribution says about itself, as pyproject.toml's [project] table has it."""
    name: str
    version: str
    summary: str
    requires_python: str | None
    dependencies: tuple[str, ...]
    optional: tuple[tuple[str, tuple[str, ...]], ...]  # (extra, its requirements)
    entry_points: tuple[tuple[str, str, str], ...]  # (group, name, object reference)

    def extra(self, name: str) -> tuple[str, ...]:
        return dict(self.optional).get(name, ())


def installed_distribution(package: Path) -> importlib.metadata.Distribution:
    """The distribution that installed `package`: its *.dist-info in the same directory."""
    for dist in importlib.metadata.distributions(path=[str(package.parent)]):
        if canonicalize_name(dist.metadata["Name"] or "") == DIST:
            return dist
    raise HarnessError(f"no {DIST} metadata (*.dist-info) beside {package}: the harness runs from a checkout or "
                       "as an installed package with its metadata; reinstall the tool into its environment.")


def metadata(dist: importlib.metadata.Distribution) -> Metadata:
    """Requirements split back into dependencies and extras (an extra's requirement without its marker)."""
    plain, optional = [], {extra: [] for extra in dist.metadata.get_all("Provides-Extra") or []}
    for line in dist.requires or []:
        requirement = Requirement(line)
        marker = str(requirement.marker or "")
        extra = _EXTRA.search(marker)
        if extra is None:
            plain.append(str(requirement))
            continue
        if extra.group(0) == marker:  # just `extra == "x"`: pyproject.toml's optional-dependencies say that
            requirement.marker = None
        optional.setdefault(extra.group(1), []).append(str(requirement))
    return Metadata(
        name=dist.metadata["Name"], version=dist.version, summary=dist.metadata["Summary"] or "",
        requires_python=dist.metadata["Requires-Python"], dependencies=tuple(plain),
        optional=tuple((extra, tuple(reqs)) for extra, reqs in optional.items()),
        entry_points=tuple((e.group, e.name, e.value) for e in dist.entry_points))
