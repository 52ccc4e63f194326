"""Checks the run's platform cannot run, refused before they run (harness.platforms says why).

A check names what it needs with `@pytest.mark.needs("float64", ...)`; on a platform that lacks it the
check is skipped with the reason "not on this platform: tpu has no float64", recorded in the report
like any skipped check, so the entry runs on instead of aborting inside XLA's compiler.
"""

from __future__ import annotations

import functools
import os
import sys

import pytest

from harness import platforms

MARKER = "needs"
DESCRIPTION = (f"{MARKER}(*what): what the check needs of its platform ({', '.join(platforms.NEEDS)}); "
               "refused, not run, where the platform lacks it")


def needs_of(item) -> set[str]:
    """Everything the item's `needs` markers name (a module's and the test's own)."""
    return {str(need) for mark in item.iter_markers(MARKER) for need in mark.args}


def module_refused(report) -> bool:
    """A module its platform cannot run, refused as it was collected (the data-parallel family on one chip)."""
    return bool(report.skipped) and platforms.NOT_HERE in str(report.longrepr)


def running_on() -> str | None:
    """The backend the process's checks run on, for the platform rules of harness.contract.tolerances; None
    where JAX was never imported (a check of NumPy values alone: no platform rule applies to it)."""
    return _backend_once() if "jax" in sys.modules else None


@functools.cache  # one backend a process: every comparison asks
def _backend_once() -> str | None:
    return backend()


def backend() -> str | None:
    """The backend the run's checks compile for (importing JAX; only asked when a check needs something)."""
    import jax

    return jax.default_backend()


def refuse(items, environ=os.environ, backend_of=_backend_once) -> int:
    """Mark each item needing what the platform lacks as skipped, with why; how many were refused. A need
    no platform knows is a usage error in the contract, named with its fix."""
    needing = [(item, needs_of(item)) for item in items]
    needing = [(item, needs) for item, needs in needing if needs]
    if not needing:
        return 0
    for item, needs in needing:
        unknown = needs - set(platforms.NEEDS)
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{MARKER}({', '.join(sorted(unknown))}) names no "
                                    f"need a platform can lack; use {', '.join(platforms.NEEDS)}")
    where = backend_of()
    try:
        lacking = platforms.lacks(where, environ)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    refused = 0
    for item, needs in needing:
        reason = platforms.refusal(needs, where, lacking)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
            refused += 1
    return refused
