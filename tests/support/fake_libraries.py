"""The entries' optax, flax and jax as the API diff (harness.stack.run.api_diff) finds them, made up and
small: in their environments here, from the wheels of the versions their reports ran, or not at all.
Each entry's packages carry the versions its report of the default matrix ran (upgrade_reports), so the
diff's check that a site holds what the report ran passes. The candidate's optax adds a parameter to
MultiSteps and removes a function; its jax module uses 3.12-only syntax (`type` statements)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.environments import envs

from support import upgrade_reports

OPTAX = {
    "baseline": """
        from optax._src.wrappers import MultiSteps, gone
        __all__ = ["MultiSteps", "gone"]
    """,
    "candidate": """
        from optax._src.wrappers import MultiSteps
        __all__ = ["MultiSteps"]
    """,
}
WRAPPERS = {
    "baseline": "class MultiSteps:\n    def __init__(self, opt, every_k_schedule):\n        pass\ndef gone(): ...\n",
    "candidate": ("class MultiSteps:\n    def __init__(self, opt, every_k_schedule, accumulator_dtype=None):\n"
                  "        pass\n"),
}
JAX = "from jax._src.api import jit\n"
JAX_API = {  # a 3.12 type statement: Python 3.11 cannot parse this module
    "baseline": "type Fun = object\ndef jit(fun, static_argnums=None): ...\n",
    "candidate": "type Fun = object\ndef jit(fun, static_argnums=None, donate_argnums=None): ...\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))


def site(root: Path, entry: str) -> Path:
    """A site-packages folder with `entry`'s made-up optax, flax and jax at its report's versions."""
    found = root / entry / "site-packages"
    if found.is_dir():
        return found
    versions = upgrade_reports.load(entry)["environment"]["versions"]
    side = "baseline" if versions["optax"] == upgrade_reports.load("baseline")["environment"]["versions"]["optax"] \
        else "candidate"
    _write(found, {"optax/__init__.py": OPTAX[side], "optax/_src/wrappers.py": WRAPPERS[side],
                   "flax/__init__.py": "", "flax/nnx/__init__.py": "def split(node): ...\n",
                   "jax/__init__.py": JAX, "jax/_src/__init__.py": "", "jax/_src/api.py": JAX_API[side]})
    for name in ("optax", "flax", "jax"):
        (found / f"{name}-{versions[name]}.dist-info").mkdir()
    return found


class Libraries:
    """Where the API diff finds each entry's libraries: `envs` (their environments here), `wheels` (fetched
    from the versions their reports ran), neither by default (no API diff, nothing fetched)."""

    def __init__(self, root: Path) -> None:
        self.root, self.envs, self.wheels, self.fetched = root, False, False, []

    def site_packages(self, env: Path) -> Path | None:
        """`env` is named as nox names it, a hash of the entry's name under a long path (a deep temporary
        folder): the entry is the one whose name gives that directory."""
        if not self.envs:
            return None
        entry = next((name for name in upgrade_reports.ENTRIES if envs.dir_name(env.parent, name) == env.name),
                     env.name)
        return site(self.root, entry)

    def fetch(self, project_root: Path, entry, versions: dict, offline: bool = False) -> Path:  # noqa: ANN001 - a matrix entry
        if not self.wheels:
            raise HarnessError("no package index in this test")
        self.fetched.append(entry.name)
        return site(self.root, entry.name)
