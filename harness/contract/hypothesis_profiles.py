"""Hypothesis profiles: dev (quick), ci (derandomized, the default under CI), nightly (many examples).

The `check` fixture deliberately spans all examples of a property (it keeps the worst error), so
the function-scoped-fixture health check is off. Deadlines are off everywhere: the first example of
a property pays for JAX's JIT compile, which says nothing about the contract. The profile is chosen
by --hypothesis-profile, else the HARNESS_PROFILE environment variable, else `ci` when CI is set and
`dev` otherwise.

No false alarms between entries: under `nox -s upgrade` every entry of a run draws with the same
seed (HARNESS_HYPOTHESIS_SEED), and a property that fails on the candidate only is replayed on the
baseline with the candidate's falsifying example (harness.contract.replay) before it is called a
change.
"""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, settings

from harness import env_vars

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
    return os.environ.get(env_vars.PROFILE) or ("ci" if os.environ.get("CI") else "dev")


def activate(config) -> dict:
    """Load the profile (--hypothesis-profile, else HARNESS_PROFILE) and describe it for the report."""
    import hypothesis
    from hypothesis import core

    chosen = config.getoption("--hypothesis-profile", None) or default_profile()
    if chosen not in PROFILES:
        import pytest

        raise pytest.UsageError(f"Hypothesis profile {chosen!r} is not one of the harness's: choose one of "
                                f"{', '.join(PROFILES)} (--hypothesis-profile or HARNESS_PROFILE).")
    # Loaded here even when --hypothesis-profile names it: Hypothesis's own plugin loads it later,
    # and the report must describe the profile that runs.
    settings.load_profile(chosen)
    current = settings()
    seed = config.getoption("--hypothesis-seed", None)
    if seed is None and not current.derandomize:
        # Random runs get one recorded seed for the whole session (the upgrade's, shared by its
        # entries), so a failure can be replayed with --hypothesis-seed.
        seed = int(os.environ[env_vars.SEED]) if os.environ.get(env_vars.SEED) else random.getrandbits(32)
        core.global_force_seed = seed
    return {
        "version": hypothesis.__version__,
        "profile": chosen,
        "derandomize": bool(current.derandomize),
        "seed": seed if seed is None or isinstance(seed, int) else str(seed),
        "max_examples": int(current.max_examples),
    }
