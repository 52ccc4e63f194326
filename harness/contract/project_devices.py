"""The devices a contract process runs on, when the project's code sets them: a data-parallel job's training module
sets `XLA_FLAGS=--xla_force_host_platform_device_count=4` before `import jax`, and its contracts import it.

JAX reads XLA_FLAGS once, when its backend starts; the plugin starts it only after collection
(harness.contract.session.Recorder), so the project's contracts run on the devices its module asks for, as in its
own pytest. Here too:

- the flags the harness gave the process (a perturbed compilation's, an emulated host's) survive a module that
  assigns XLA_FLAGS outright (`os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"`, as JAX's
  own examples do): put back before the project's, which wins for a flag given twice (XLA takes the last);
- a built-in contract is never judged on a CPU device count its golden values were not recorded on
  (harness.devices.BUILTIN_COUNT): in a process holding both (`golden --record-builtin`), each one is
  an error saying why, before it runs. `upgrade` runs them in a process of their own (harness.stack.entry_side.parts);
- `check.devices(n)`: the devices a contract's mesh needs, or an error saying how many it needed and found and how to
  give them, never a mesh of the devices there happen to be judged as sharded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import devices
from harness.contract import families

BUILTIN_DIR = Path(__file__).resolve().parents[1] / "builtin"
_GIVEN = pytest.StashKey[str]()  # XLA_FLAGS as the process was started with
_REFUSED = pytest.StashKey[str]()  # why a built-in check is not run here


class TooFewDevices(RuntimeError):
    """A project's contract needs more devices than JAX gives its process: it cannot be judged here."""


def needed(count: int) -> list:
    """JAX's first `count` devices (`check.devices`), or TooFewDevices naming both counts and the fix."""
    __tracebackhide__ = True
    import jax

    found = jax.devices()
    if len(found) < count:
        raise TooFewDevices(devices.too_few_for(count, len(found), jax.default_backend()))
    return found[:count]


class OtherDeviceCount(RuntimeError):
    """A built-in contract in a process whose CPU device count is not the one its golden values were recorded on."""


def given(config) -> None:
    """Remember XLA_FLAGS before any contract module is imported (at configure)."""
    config.stash[_GIVEN] = os.environ.get("XLA_FLAGS", "")


def keep_given(config, environ=os.environ) -> str:
    """After collection: the given flags the project's code dropped put back before its own; XLA_FLAGS then."""
    now = environ.get("XLA_FLAGS", "")
    dropped = [flag for flag in config.stash.get(_GIVEN, "").split() if flag not in now.split()]
    if dropped:
        environ["XLA_FLAGS"] = " ".join([*dropped, *now.split()])
    return environ.get("XLA_FLAGS", "")


def _cpu_devices() -> int | None:
    """How many devices JAX's CPU backend has, when the checks run on the CPU (starting JAX's backend); None on an
    accelerator (a count the project's XLA_FLAGS cannot change)."""
    import jax

    try:
        return len(jax.devices()) if jax.default_backend() == "cpu" else None
    except RuntimeError:  # no backend starts: each check raises it itself, where it is reported
        return None


def _builtin(item) -> bool:
    """A check of the harness's built-in contracts (its modules' folder), the data-parallel family's aside."""
    return Path(str(item.path)).resolve().is_relative_to(BUILTIN_DIR) and families.family(item) != devices.FAMILY


def refuse_builtin(items, count_of=_cpu_devices, environ=os.environ) -> int:
    """Mark each built-in check (the data-parallel family's aside: its process has devices of its own) that would
    run on a CPU device count other than the one its values were recorded on (the project's code set it, or the
    shell exported it to a run by hand); how many were refused. JAX's backend is asked only when one is kept."""
    builtin = [item for item in items if _builtin(item)]
    if not builtin:
        return 0
    found = count_of()
    if found is None or found == devices.BUILTIN_COUNT:
        return 0
    why = devices.builtin_on_other_count(found, environ.get("XLA_FLAGS", ""))
    for item in builtin:
        item.stash[_REFUSED] = why
    return len(builtin)


def refuse_at_setup(item) -> None:
    """A refused built-in check ends here, before it runs: an error (not judged), with why."""
    why = item.stash.get(_REFUSED, None)
    if why is not None:
        raise OtherDeviceCount(why)
