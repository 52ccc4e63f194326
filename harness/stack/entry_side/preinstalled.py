"""Packages a host has installed outside the entry's environment, ahead of it on sys.path, that the entry would
import instead of the versions its lock installed.

A TPU host brings its own JAX: /opt/device-scrub holds jax, jaxlib, libtpu, numpy, scipy... and PYTHONPATH names
it, so every entry imports those (that JAX drives the TPU), whatever the environment holds. Where the lock
pins the same versions, the entry runs what it locked. Where it pins others (a candidate that bumps numpy),
the report would record the preinstalled version and the verdict would judge a bump that never ran: the entry
stops before its suite instead, naming each package, where it comes from, and the pin that would match.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from harness.stack import boundary

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*(#.*)?$")  # a lock's pin without a marker
# Run in the entry's Python, where the harness is installed with its lock: the contract side's own lookup.
_FIND = ("import json, sys\n"
         "from harness.contract.environment import first_found\n"
         "print(json.dumps(first_found(json.loads(sys.argv[1]))))\n")


def pins(lock_text: str) -> dict[str, str]:
    """The lock's exact pins (name -> version) that hold everywhere (a pin with a marker is left out)."""
    found = {}
    for line in lock_text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


def shadowed(locked: dict[str, str], imported: dict[str, tuple[str, str]], venv: str) -> str | None:
    """What the entry would import instead of its lock's versions, said with the fix; None when nothing.
    `imported`: name -> (version, the folder it comes from) as the entry's Python finds it first."""
    inside = os.path.realpath(venv) + os.sep
    wrong = [(name, locked[name], version, where) for name, (version, where) in sorted(imported.items())
             if name in locked and version != locked[name] and not (os.path.realpath(where) + os.sep).startswith(inside)]
    if not wrong:
        return None
    said = "; ".join(f"{name} {version} from {where} instead of the locked {name}=={pin}"
                     for name, pin, version, where in wrong)
    return (f"this entry would not run its locked stack: packages installed outside its environment come first on "
            f"sys.path (PYTHONPATH={boundary.given('PYTHONPATH') or ''}): {said}. The report would record the "
            f"preinstalled versions and the verdict would judge a bump that never ran: pin "
            f"{' '.join(f'{name}=={version}' for name, _, version, _ in wrong)} (the preinstalled versions), or run "
            "without that PYTHONPATH entry.")


def check(venv: str, lock: Path) -> str | None:
    """Ask the entry's Python, in the environment its suite gets, which versions of the lock's packages it finds
    first; the problem when any is another version from outside the environment (None: none, or not known)."""
    locked = pins(lock.read_text())
    python = os.path.join(venv, "bin", "python")
    try:
        done = subprocess.run([python, "-c", _FIND, json.dumps(sorted(locked))], capture_output=True, text=True,
                              env=boundary.child_environment(), timeout=120)
        imported = {name: tuple(found) for name, found in json.loads(done.stdout).items()}
    except (OSError, ValueError, subprocess.SubprocessError):
        return None  # the suite itself then says what is wrong with the environment
    return shadowed(locked, imported, venv)
