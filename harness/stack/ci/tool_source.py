"""Where the workflows install the tool from: the exact version the team runs, never "the newest", so a
CI verdict is the verdict of the tool the team reviewed and pinned.

Without `--tool-from`, it is the running tool's own origin (its PEP 610 direct_url.json): a git URL at
the commit installed, a wheel's URL, or the index version. A local path or an editable checkout cannot
be reached from a runner: then `--tool-from` must say what to install.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack.environments import installed

FLAG = "--tool-from"
EXAMPLE = "'upgrade-harness @ git+https://github.com/OWNER/upgrade-harness@COMMIT'"


@dataclasses.dataclass(frozen=True)
class ToolSource:
    """A pip requirement that installs one exact version of the tool, and how it was chosen (for the file's header)."""

    requirement: str
    origin: str


def given(spec: str) -> ToolSource:
    """`--tool-from SPEC`: a requirement for the tool pinned to one version (==X) or one URL."""
    try:
        requirement = Requirement(spec)
    except InvalidRequirement as exc:
        raise HarnessError(f"{FLAG} {spec!r} is not a pip requirement ({exc}); e.g. {FLAG} {EXAMPLE}.") from None
    if canonicalize_name(requirement.name) != installed.DIST:
        raise HarnessError(f"{FLAG} {spec!r} names {requirement.name}, not {installed.DIST}; e.g. {FLAG} {EXAMPLE}.")
    pinned = requirement.url or (len(requirement.specifier) == 1 and next(iter(requirement.specifier)).operator == "==")
    if not pinned:
        raise HarnessError(f"{FLAG} {spec!r} is not one version: CI would install whatever is newest. Pin it "
                           f"(upgrade-harness==X.Y.Z) or give a URL at a commit, e.g. {FLAG} {EXAMPLE}.")
    return ToolSource(spec, f"given with {FLAG}")


def _distribution() -> importlib.metadata.Distribution | None:
    package = Path(installed.__file__).resolve().parents[2]  # the `harness` package running now
    try:
        return installed.installed_distribution(package)
    except HarnessError:
        return None


def _from_direct_url(dist: importlib.metadata.Distribution) -> ToolSource | None:
    """The running tool's URL origin as a requirement; None for an index install (no direct_url.json)."""
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    found = json.loads(text)
    url = found.get("url", "")
    vcs = found.get("vcs_info")
    if vcs and vcs.get("commit_id") and not url.startswith("file:"):
        return ToolSource(f"{installed.DIST} @ {vcs['vcs']}+{url}@{vcs['commit_id']}",
                          f"the commit the running tool was installed from ({dist.version})")
    if "archive_info" in found and url.startswith("https://"):
        return ToolSource(f"{installed.DIST} @ {url}", f"the archive the running tool was installed from ({dist.version})")
    where = url.removeprefix("file://") or "a local path"
    raise HarnessError(f"the running upgrade-harness was installed from {where}, which a CI runner cannot reach; "
                       f"say what CI installs (the same version) with {FLAG}, e.g. {FLAG} {EXAMPLE}.")


def running() -> ToolSource:
    """The tool that runs `init`, as a requirement CI can install."""
    dist = _distribution()
    if dist is None:
        raise HarnessError(f"the running upgrade-harness has no install metadata (a checkout on PYTHONPATH?); say what "
                           f"CI installs with {FLAG}, e.g. {FLAG} {EXAMPLE}.")
    return _from_direct_url(dist) or ToolSource(f"{installed.DIST}=={dist.version}",
                                                f"the version of the running tool, from the package index")
