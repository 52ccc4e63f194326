"""optax, flax and jax as an entry's report ran them, without its environment: their wheels unpacked
(no dependencies, nothing imported) into the project's `.nox/api-sources/`: what the API diff reads
whenever an entry's environment does not hold exactly those versions (CI's follow-ups job, where each
entry ran in a job of its own; a run whose environments were rebuilt, pruned or, its reports reused,
never made). The same wheels the entry installed, so the same sources its environment holds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.stack.api import reader
from harness.stack.selection.usage import LIBRARIES
from harness.stack.environments.interpreters import find_python
from harness.stack.pins import matrix

FOLDER = "api-sources"  # in the project's .nox/: one folder per set of versions
_DONE = ".harness-complete"
# Options of a lock that say where its packages come from (uv writes them with --emit-index-url).
_INDEX_OPTIONS = ("--index-url", "--extra-index-url", "--find-links", "--no-index", "-i", "-f")


def index_options(entry: matrix.Entry) -> list[str]:
    """The index options the entry's lock names (none: uv's own configuration, as for the entry)."""
    try:
        lines = Path(entry.lock_file).read_text().splitlines() if entry.lock_file else []
    except OSError:
        return []
    return [word for line in lines if line.strip().startswith(_INDEX_OPTIONS) for word in line.split()]


def fetch(root: Path, entry: matrix.Entry, versions: dict[str, str | None], offline: bool = False) -> Path:
    """A folder under `root`/.nox holding `versions`' optax, flax and jax as installed packages (with their
    dist-info), fetched once; HarnessError when uv cannot get them."""
    pins = [f"{name}=={versions[name]}" for name in LIBRARIES if versions.get(name)]
    target = root / ".nox" / FOLDER / "-".join(p.replace("==", "-") for p in pins)
    if (target / _DONE).is_file():
        return target
    uv = reader.uv_binary()
    shutil.rmtree(target, ignore_errors=True)
    reader.run_uv([uv, "pip", "install", "--quiet", "--no-deps", "--no-python-downloads", "--target", str(target),
                   "--python", find_python(entry.python), *index_options(entry), *pins],
                  f"get {', '.join(pins)} to read their API", offline)
    (target / _DONE).write_text(" ".join(pins) + "\n")
    return target
