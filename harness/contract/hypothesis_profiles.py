"""Hypothesis profiles: dev (quick), ci (derandomized, the default under CI), nightly (many examples).

The `check` fixture deliberately spans all examples of a property (it keeps the worst error), so
the function-scoped-fixture health check is off. Deadlines are off everywhere: the first example of a property pays for JAX's JIT compile, which
says nothing about the contract. The profile is chosen by --hypothesis-profile, else the
HARNESS_PROFILE environment variable, else `ci` when CI is set and `dev` otherwise.
"""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, settings

PROFILES = {
    "dev": dict(max_examples=15, derandomize=False, database=None),
    "ci": dict(max_examples=60, derandomize=True, database=None),
    "nightly": dict(max_examples=600, derandomize=False, database=None),
}
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], print_blob=True)


def register() -> None:
    for name, values in PROFILES.items():
        settings.register_profile(name, **values, **_COMMON)


def default_profile() -> str:
    return os.environ.get("HARNESS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")


def activate(config) -> dict:
    """Load the profile (unless --hypothesis-profile chose one) and describe it for the report."""
    import hypothesis
    from hypothesis import core

    chosen = config.getoption("--hypothesis-profile", None)
    if not chosen:
        chosen = default_profile()
        if chosen not in PROFILES:
            import pytest

            raise pytest.UsageError(
                f"HARNESS_PROFILE={chosen!r} is not a profile; choose one of {', '.join(PROFILES)}."
            )
        settings.load_profile(chosen)
    current = settings()
    seed = config.getoption("--hypothesis-seed", None)
    if seed is None and not current.derandomize:
        # Random runs get one recorded seed for the whole session, so a failure can be replayed
        # with --hypothesis-seed.
        seed = random.getrandbits(32)
        core.global_force_seed = seed
    return {
        "version": hypothesis.__version__,
        "profile": chosen,
        "derandomize": bool(current.derandomize),
        "seed": seed if seed is None or isinstance(seed, int) else str(seed),
        "max_examples": int(current.max_examples),
    }
