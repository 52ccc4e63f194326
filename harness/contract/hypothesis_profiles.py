"""The harness's Hypothesis profiles: dev (quick), ci (derandomized, the default under CI), nightly
(many examples).

Registered under the harness's own names (`upgrade-harness-dev`, ...) and only in a harness run
(harness.contract.options.harness_run): the plugin is loaded by every pytest process where the tool
is installed, and `dev`, `ci` and `default` are names a team's runs and Hypothesis itself use. The
user-facing names stay dev/ci/nightly (--harness-profile, HARNESS_PROFILE, the report).

The `check` fixture deliberately spans all examples of a property (it keeps the worst error), so
the function-scoped-fixture health check is off. Deadlines are off everywhere: the first example of
a property pays for JAX's JIT compile, which says nothing about the contract. The profile is chosen
by --harness-profile, else the HARNESS_PROFILE environment variable, else `ci` when CI is set and
`dev` otherwise (harness.contract.options.profile). Hypothesis's own --hypothesis-profile keeps
meaning Hypothesis's profiles; a harness run refuses it, since the report must describe the profile
that runs.

No false alarms between entries: under `nox -s upgrade` every entry of a run draws with the same
seed (its job's: harness.contract.job), and a property that fails on the candidate only is replayed on the
baseline with the candidate's falsifying example (harness.contract.replay) before it is called a
change.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, settings

from harness.contract import job, options

PROFILES = {
    "dev": dict(max_examples=15, derandomize=False, database=None),
    "ci": dict(max_examples=60, derandomize=True, database=None),
    "nightly": dict(max_examples=600, derandomize=False, database=None),
}
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], print_blob=True)
PREFIX = "upgrade-harness-"


def hypothesis_name(profile: str) -> str:
    """The name Hypothesis knows a harness profile by: `ci` -> `upgrade-harness-ci`."""
    return PREFIX + profile


def register() -> None:
    for name, values in PROFILES.items():
        settings.register_profile(hypothesis_name(name), **values, **_COMMON)


def run_seed(config) -> int:
    """A random run's one recorded seed for the whole session: the upgrade's, shared by its entries (their
    job's), else a fresh one; a failure can be replayed with --hypothesis-seed."""
    told = job.options(config).seed
    return told if told is not None else random.getrandbits(32)


def activate(config) -> dict:
    """Register and load the harness profile of a harness run, and describe it for the report."""
    import hypothesis
    from hypothesis import core

    chosen = options.profile(config)
    if chosen not in PROFILES:
        raise pytest.UsageError(f"Hypothesis profile {chosen!r} is not one of the harness's: choose one of "
                                f"{', '.join(PROFILES)} (--harness-profile or HARNESS_PROFILE).")
    theirs = config.getoption("--hypothesis-profile", None)
    if theirs:
        # Hypothesis's plugin would load its profile too, before or after this one (plugins configure in
        # no fixed order), and the report would describe a profile that may not be the one that ran.
        raise pytest.UsageError(
            f"--hypothesis-profile {theirs} loads Hypothesis's own profile {theirs!r}, but this harness run "
            f"uses the harness's profile {chosen!r} and reports it: choose the harness's profile with "
            f"--harness-profile ({', '.join(PROFILES)}) or HARNESS_PROFILE, and drop --hypothesis-profile.")
    register()
    settings.load_profile(hypothesis_name(chosen))
    current = settings()
    seed = config.getoption("--hypothesis-seed", None)
    if seed is None and not current.derandomize:
        seed = run_seed(config)
        core.global_force_seed = seed
    return {
        "version": hypothesis.__version__,
        "profile": chosen,
        "derandomize": bool(current.derandomize),
        "seed": seed if seed is None or isinstance(seed, int) else str(seed),
        "max_examples": int(current.max_examples),
    }
