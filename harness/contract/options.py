"""The plugin's command-line options, and the one rule for what makes a pytest run a harness run.

Plain Python on purpose (no NumPy, no Hypothesis): the plugin is a pytest11 entry point, so this
module is imported by every pytest process where the tool is installed, a team's own runs included.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import host_emulation, run_options
from harness.contract import job


def add(parser) -> None:
    """The pytest options a harness run is given, their defaults from the variables an entry's session sets
    (harness.run_options declares both; those of its job, group JOB, from the job file: harness.contract.job),
    and the suite's own arguments."""
    group = parser.getgroup("upgrade-harness")
    for name, spec in run_options.specs().items():
        if spec.pytest is None:
            continue
        shown = {k: v for k, v in spec.argparse.items() if k in ("help", "metavar")}
        if spec.env is None:  # a flag the golden session passes as an argument
            group.addoption(spec.pytest, action="store_true", **shown)
            continue
        if spec.group == run_options.JOB:  # given by hand, over the job's (harness.contract.job)
            group.addoption(spec.pytest, default=None, **shown)
            continue
        default = getattr(run_options.RunOptions(), name)
        group.addoption(spec.pytest, default=os.environ.get(spec.env, default), **shown)
    group.addoption("--harness-own-contracts", default=None,
                    help="the project's own contract directories (their families are the project's own)")
    group.addoption("--harness-record-golden", action="store_true", help="record golden values")
    group.addoption("--harness-accepted-by", default=None, metavar="COMMAND",
                    help="with --harness-accept-changes: the command that accepts the changes (accept, golden "
                         "--accept-changes), written into each changed golden file's provenance")
    group.addoption("--harness-accept-reason", default=None, metavar="TEXT",
                    help="with --harness-accept-changes: why the values change, written beside the command")
    group.addoption("--harness-observe-noise", action="store_true",
                    help="with --harness-record-golden: a perturbed compilation's recording (harness.numerical_noise): "
                         "every value recorded is written, whatever failed, for the real recording to measure against")
    group.addoption("--harness-noise-from", action="append", default=[], metavar="DIR",
                    help="with --harness-record-golden: a golden directory the same contracts recorded when compiled "
                         "to round differently; each value's largest move there is recorded as its noise")
    group.addoption("--harness-host-noise-from", action="append", default=[], metavar="DIMENSION=DIR",
                    help="with --harness-record-golden: a golden directory the same contracts recorded on an emulated "
                         "host that differs in DIMENSION (harness.host_emulation); each value's largest move there "
                         "is recorded as its host noise in that dimension")
    group.addoption("--harness-except", default=None, metavar="FILE",
                    help="leave out the check ids listed in FILE (one a line): an emulated host's recording leaves "
                         "out the checks whose values that host never moved, but for this turn's sample "
                         "(harness.stack.entry_side.host_map); a check not listed runs, a new one too")
    group.addoption("--harness-multi-device", action="store_true",
                    help="this is the multi-device family's own process (harness.devices): collect its module, "
                         "which every other run leaves out")


def host_noise_from(config) -> dict[str, list[str]]:
    """--harness-host-noise-from's folders by dimension (DIMENSION=DIR, repeatable)."""
    found: dict[str, list[str]] = {}
    for given in config.getoption("--harness-host-noise-from") or ():
        dimension, sep, folder = given.partition("=")
        if not sep or dimension not in host_emulation.DIMENSION_NAMES:
            raise pytest.UsageError(f"--harness-host-noise-from {given!r}: give DIMENSION=DIR, DIMENSION one of "
                                    f"{', '.join(sorted(host_emulation.DIMENSION_NAMES))}")
        found.setdefault(dimension, []).append(folder)
    return found


def harness_run(config) -> bool:
    """Whether this run is the harness's (a report, a recording or a chosen harness profile): only then
    are the harness's Hypothesis profile loaded and the contract machinery (NumPy and all) imported up
    front. Any other run is a team's own, which the plugin leaves alone."""
    return bool(config.getoption("--harness-report") or config.getoption("--harness-record-golden")
                or config.getoption("--harness-profile"))


def profile(config) -> str:
    """The harness profile a harness run uses: --harness-profile (or HARNESS_PROFILE), else `ci` under
    CI and `dev` otherwise."""
    return config.getoption("--harness-profile") or ("ci" if os.environ.get("CI") else "dev")


def ids_in(path) -> frozenset[str]:
    """The check ids a list file holds, one a line (--harness-only, --harness-except, an emulated host's LEFT_OUT);
    OSError when it cannot be read."""
    return frozenset(line.strip() for line in Path(path).read_text().splitlines() if line.strip())


def selection(config) -> list[str] | None:
    """The check ids listed in the --harness-only file (or the job's selection), or None when there is none."""
    path = job.options(config).only
    if not path:
        return None
    try:
        return sorted(ids_in(path))
    except OSError as exc:
        raise pytest.UsageError(f"the selection (--harness-only, else the entry's job): cannot read {path} "
                                f"({exc.strerror or exc})") from None


def excepted(config) -> frozenset[str]:
    """The check ids the --harness-except file lists (none without one)."""
    path = config.getoption("--harness-except")
    if not path:
        return frozenset()
    try:
        return ids_in(path)
    except OSError as exc:
        raise pytest.UsageError(f"--harness-except: cannot read {path} ({exc.strerror or exc})") from None


def builtin_tests(config) -> frozenset[str] | None:
    """The built-in tests a team's selection keeps (--harness-builtin-tests, else the job's): test ids and check
    ids, whose families run only those; None when every family taken runs whole."""
    path = job.options(config).builtin_tests
    if not path:
        return None
    try:
        return frozenset(line.strip() for line in Path(path).read_text().splitlines() if line.strip())
    except OSError as exc:
        raise pytest.UsageError(f"the built-in tests kept (--harness-builtin-tests, else the entry's job): cannot "
                                f"read {path} ({exc.strerror or exc})") from None


def own_contracts(config) -> list[Path]:
    """The project's own contract directories (--harness-own-contracts): their items are its own families'."""
    return [Path(p) for p in (config.getoption("--harness-own-contracts") or "").split(os.pathsep) if p]
