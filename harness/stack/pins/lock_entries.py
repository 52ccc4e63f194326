"""What every lock a team's tool writes (uv.lock, poetry.lock) is checked for alike, whatever its layout: each
package's name and version where they are written, and the team's set the entries install from it, in which
jax, jaxlib, optax, flax and numpy come from the package index at one version each and no other package is
locked twice for every platform. Each lock reads its own layout (harness.stack.pins.uv_lock, poetry_lock) and
says how to make it again."""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.errors import HarnessError
from harness.stack.pins.requirement_files import Outside

NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)  # PEP 508

Bad = Callable[[int, str], HarnessError]  # (line, what is wrong) -> the lock's error, with its fix


def name_of(raw, line: int, bad: Bad) -> str:
    """A [[package]]'s name, normalized; `bad` at `line` when it is not a package name."""
    if not isinstance(raw, str) or not NAME.match(raw):
        raise bad(line, f"a package's name {raw!r} is not a package name")
    return canonicalize_name(raw)


def check_version(name: str, version, line: int, bad: Bad) -> str:
    """A [[package]]'s version, a PEP 440 version string; `bad` at `line` when it is not."""
    if not isinstance(version, str):
        raise bad(line, f"{name}'s version {version!r} is not a version string")
    try:
        Version(version)
    except InvalidVersion:
        raise bad(line, f"{name}'s version {version!r} is not a version (PEP 440, e.g. \"0.2.8\")") from None
    return version


def refuse_stack_from_elsewhere(where: str, name: str, source) -> None:
    """One of the harness's packages locked from another place than the package index: never the one judged."""
    raise HarnessError(f"{where}: {name} is locked from {source}, not the package index: the harness installs the "
                       f"baseline from the index, which would not be the {name} you run. Lock it from the index if "
                       "the index has the same build.")


def from_source(where: str, name: str, kind: str, location: str) -> Outside:
    """A package from a git, path, directory, file or URL source: outside the package index, never installed."""
    return Outside(where, f"{name} from {kind} {location}", f"a {kind} source, not the package index")


def from_other_index(where: str, name: str, version: str | None, index: str) -> Outside:
    """A package from another index than the package index: installed from the index uv uses when ignored."""
    return Outside(where, f"{name} {version}", f"another package index ({index})")


def stack_pins(shown: str, stack: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    """The harness's packages at their one locked version each ({name: [(version, where)]}); a fork (a package
    locked at several versions, by platform or Python) refused."""
    for name, versions in stack.items():
        if len({version for version, _ in versions}) > 1:
            listed = ", ".join(f"{version} ({where})" for version, where in versions)
            raise HarnessError(f"{shown} locks {name} at {len(versions)} versions ({listed}, a fork by platform or "
                               "Python); give a requirements file with one exact pin instead.")
    return {name: versions[0][0] for name, versions in stack.items()}


def refuse_twice_everywhere(shown: str, everywhere: dict[str, list[str]], relock: str) -> None:
    """A package locked more than once without a marker (each `where` it is): the lock is damaged."""
    for name, wheres in everywhere.items():
        if len(wheres) > 1:
            raise HarnessError(f"{shown} locks {name} twice for every platform ({', '.join(wheres)}); {relock}.")
