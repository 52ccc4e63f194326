"""What each entry installs as the harness itself (--no-deps: its dependencies are in the entry's lock).

In this checkout, or a tool installed editable from one: the checkout, editable. A tool installed from
a path or a git URL: the same path or commit (pip's record of where it came from, PEP 610). Otherwise
the same release from the package index.
"""

from __future__ import annotations

import importlib.metadata
import json
from urllib.parse import unquote, urlparse

from harness.stack import paths

DIST = "upgrade-harness"


def install_args() -> list[str]:
    if (paths.SOURCE / "pyproject.toml").is_file():
        return ["-e", str(paths.SOURCE)]
    try:
        dist = importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        return [DIST]
    origin = json.loads(dist.read_text("direct_url.json") or "null") or {}
    url = origin.get("url", "")
    vcs = origin.get("vcs_info")
    if vcs:
        return [f"{DIST} @ {vcs['vcs']}+{url}@{vcs['commit_id']}"]
    if url.startswith("file://"):
        return [unquote(urlparse(url).path)]
    return [f"{DIST}=={dist.version}"]
