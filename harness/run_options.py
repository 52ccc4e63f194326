"""Every option of a run, declared once: a field of RunOptions whose Spec says how it is typed on which
command, which variable carries it to the child processes, and which pytest option the contract side
reads it from. The argument parsers (harness.stack.commands.options, which declares the commands' own options),
the child environments (harness.stack.run.entry_runs, harness.stack.commands.options) and the contract side's options
(harness.contract.options) are all derived from here.

Plain Python on purpose: the contract plugin imports it in every pytest process.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from harness import devices, env_vars, platforms, revision_path

# Who carries an option to the child processes: the `upgrade-harness` command and the sessions (PROJECT),
# an upgrade to its entries as variables (RUN: what another tool reads, UV_OFFLINE) or in the entry's job file
# (JOB: harness.model.entry_job, which an entry's session hands its pytest run as a file too: harness.contract.job),
# an entry's session to its pytest run (ENTRY); HOST options stay in the process.
PROJECT, RUN, JOB, ENTRY, HOST = "project", "run", "job", "entry", "host"
UPGRADE, GOLDEN = "upgrade", "golden"  # the commands with options of their own
OFF = "off"  # --no-builtin: the built-in contracts are not run (harness.model.enums.BuiltinMode.OFF)


@dataclasses.dataclass(frozen=True)
class Spec:
    """How one option is spelled and carried."""

    group: str
    flags: tuple[str, ...] = ()  # on the command line; a second flag stores OFF (--builtin / --no-builtin)
    commands: tuple[str, ...] = ()  # the commands that take the flags (PROJECT options: every command)
    env: str | None = None  # the variable that carries it to a child process
    kind: type = str  # str, Path, RevisionPath, tuple (paths, os.pathsep-separated), bool ("1"), int
    pytest: str | None = None  # the contract side's pytest option that reads it
    own_run: bool = False  # the run's own (its plan, selection, replay): never inherited by another run's children
    argparse: dict = dataclasses.field(default_factory=dict)  # add_argument's other keywords (help, choices...)


class RevisionPath:
    """A Spec kind: `PATH` or `REV:PATH` (harness.revision_path), carried with its path made absolute."""


def _option(default, **spec):
    return dataclasses.field(default=default, metadata={"spec": Spec(**spec)})


_BUILTIN_HELP = ("judge: every built-in contract runs and their changes decide the exit status too; report: those "
                 "covering the Optax callables your code calls run and are shown after yours, but only yours decide; "
                 "all: report every built-in contract (overrides the table's builtin)")


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """One run's options (defaults: not given)."""

    candidate: str | None = _option(None, group=HOST, flags=("--candidate",), commands=(UPGRADE,),
                                    env=env_vars.CANDIDATE, own_run=True, argparse=dict(help=(
                                        'candidate pins, e.g. "jax==X jaxlib==X optax==Y"; a version may be '
                                        '"latest", and "--candidate latest" takes the newest jax, jaxlib, optax '
                                        "and flax that install together")))
    candidate_from: Path | None = _option(None, group=HOST, flags=("--candidate-from",), commands=(UPGRADE,),
                                          kind=RevisionPath, argparse=dict(type=Path, metavar="[REV:]PATH", help=(
                                              "read the candidate's pins from this requirements.txt, uv.lock, poetry.lock or "
                                              "pyproject.toml, as --baseline-from reads the baseline's (REV:PATH "
                                              "too); not with --candidate")))
    pre: bool = _option(False, group=HOST, flags=("--pre",), commands=(UPGRADE,), kind=bool,
                        argparse=dict(help="let `latest` take pre-releases"))
    # None: harness.stack.commands.upgrade.parse_options decides (2; 1 where one process at a time holds the accelerator).
    jobs: int | None = _option(None, group=HOST, flags=("--jobs",), commands=(UPGRADE,), kind=int,
                               argparse=dict(type=int, help=(
                                   "entries run at once (default 2; 1 on a TPU host, whose TPU one process at a "
                                   "time can hold)")))
    reports: Path | None = _option(None, group=HOST, flags=("--reports",), commands=(UPGRADE,), kind=Path,
                                   argparse=dict(type=Path, help="write reports here instead of reports/ (one run "
                                                                 "per directory)"))
    bisect: bool = _option(False, group=HOST, flags=("--bisect",), commands=(UPGRADE,), kind=bool, argparse=dict(
        help="for each changed contract, find the release that first changed it (runs the changed checks on the "
             "releases between baseline and candidate)"))
    fresh: bool = _option(False, group=HOST, flags=("--fresh",), commands=(UPGRADE,), kind=bool, argparse=dict(
        help="run every entry, even one whose report an earlier run computed from the same inputs (by default "
             "that report is reused; the verdict says which and from when)"))
    offline: bool = _option(False, group=RUN, flags=("--offline",), commands=(UPGRADE,), env="UV_OFFLINE", kind=bool,
                            argparse=dict(help="never use the network: environments and uv's cache must already "
                                               "hold every stack"))
    # Bytes, once harness.stack.commands.upgrade.parse_options has read the size typed.
    envs_size_limit: float | None = _option(None, group=HOST, flags=("--envs-size-limit",), commands=(UPGRADE,),
                                          argparse=dict(metavar="SIZE", help=(
                                              "after the run, remove entry environments no current plan uses, least "
                                              "recently used first, while .nox/ holds more than SIZE (e.g. 10GiB, 0, "
                                              "off; default: the project's envs-size-limit, else 10GiB)")))
    contracts: tuple[Path, ...] = _option((), group=PROJECT, flags=("--contracts",), env=env_vars.CONTRACT_DIRS,
                                          kind=tuple, argparse=dict(action="append", type=Path, metavar="DIR", help=(
                                              "a directory of your own contract modules (pytest files using the "
                                              "`check` fixture); repeatable, added to the contracts of "
                                              "[tool.upgrade-harness]")))
    builtin: str | None = _option(None, group=PROJECT, flags=("--builtin", "--no-builtin"), env=env_vars.BUILTIN,
                                  argparse=dict(choices=["judge", "report", "all"], help=_BUILTIN_HELP, off_help=(
                                      "run only your own contracts, not the built-in Optax/Flax ones")))
    baseline_from: Path | None = _option(None, group=PROJECT, flags=("--baseline-from",), env=env_vars.BASELINE_FROM,
                                         kind=RevisionPath, argparse=dict(type=Path, metavar="[REV:]PATH", help=(
                                             "read the baseline's pins from this requirements.txt, uv.lock, poetry.lock or "
                                             "pyproject.toml; REV:PATH reads it as git revision REV holds it, e.g. "
                                             "origin/main:requirements.txt")))
    accept_changes: bool = _option(False, group=HOST, flags=("--accept-changes",), commands=(GOLDEN,), kind=bool,
                                   pytest="--harness-accept-changes",
                                   argparse=dict(help="allow changing recorded golden values, and record a "
                                                      "statement the baseline breaks as its departure"))
    reason: str | None = _option(None, group=HOST, flags=("--reason",), commands=(GOLDEN,), argparse=dict(
        metavar="TEXT", help="with --accept-changes: why the values change, written into each changed golden file "
                             "(a pull-request check lists it beside every value the branch re-recorded)"))
    record_builtin: bool = _option(False, group=HOST, flags=("--record-builtin",), commands=(GOLDEN,), kind=bool,
                                   argparse=dict(help="record the built-in contracts' values too (a baseline "
                                                      "unlike the tool's)"))
    measure_host: bool = _option(False, group=HOST, flags=("--measure-host",), commands=(GOLDEN,), kind=bool,
                                 argparse=dict(help=(
                                     "record nothing: measure how far this host moves the recorded values, in the "
                                     "one dimension it differs from their recording's host that no flag emulates "
                                     "(native 16-bit arithmetic), and keep it as their host noise")))
    platform: str | None = _option(None, group=PROJECT, flags=("--platform",), env=env_vars.PLATFORM, argparse=dict(
        choices=list(platforms.PLATFORMS), help=(
            "where each entry's contracts run: cpu (default) or an accelerator's JAX platform (tpu, gpu); judged "
            "against the golden values recorded on that platform (golden/platforms/PLATFORM/, made by `golden "
            "--platform PLATFORM` on the machine), its entries one at a time on the chip")))
    multi_device_platform: str | None = _option(None, group=PROJECT, flags=("--multi-device-platform",),
                                                env=env_vars.MULTI_DEVICE_PLATFORM, argparse=dict(
                                                    choices=list(platforms.PLATFORMS), help=(
                                                        "where the data-parallel family runs in each entry: cpu "
                                                        f"(default: {devices.COUNT} simulated CPU devices) or an "
                                                        f"accelerator platform (its real devices, at least "
                                                        f"{devices.COUNT})")))
    # Given to a contract run by hand (`nox -s baseline -- --harness-phases`): where its time went; given to
    # an upgrade, where the whole run's went, each entry's own phases included (harness.stack.run.run_profile).
    phases: bool = _option(False, group=HOST, flags=("--harness-phases",), commands=(UPGRADE,), kind=bool,
                           pytest="--harness-phases", argparse=dict(
        help="print where the run's time went: start-up, collection, JAX compiling, Hypothesis, the contract "
             "bodies, report writing (harness.contract.phases); for an upgrade, each of its phases and entries"))
    # A run's plan: the entries a session registers when it is not given a job (harness.stack.sessions).
    plan: Path | None = _option(None, group=RUN, env=env_vars.PLAN, kind=Path, own_run=True)
    # Set by an upgrade for its entries in their job files (harness.model.entry_job), never typed.
    run_id: str | None = _option(None, group=JOB, env=env_vars.RUN_ID)
    seed: int | None = _option(None, group=JOB, env=env_vars.SEED, kind=int)
    reports_dir: Path | None = _option(None, group=JOB, env=env_vars.REPORTS_DIR, kind=Path)
    only: Path | None = _option(None, group=JOB, env=env_vars.ONLY, kind=Path, own_run=True, pytest="--harness-only",
                                argparse=dict(help="file of check ids (family/test[params]) to run; the rest are "
                                                   "deselected"))
    # The built-in tests a team's selection keeps of the families it takes in part (harness.stack.selection): a
    # file of test ids ("masks/test_bad_mask") and check ids, one a line; pytest deselects those families' other
    # tests. Set by the entry's session for its pytest run, from the project's selection.
    builtin_tests: Path | None = _option(None, group=JOB, env=env_vars.BUILTIN_TESTS, kind=Path, own_run=True,
                                         pytest="--harness-builtin-tests", argparse=dict(help=(
                                             "file of built-in test ids (family/test, or one check family/test"
                                             "[params]) to keep of their families; those families' other tests "
                                             "are deselected, other families run whole")))
    # The parts of the entry's report an earlier run computed, written where the session would write them
    # (harness.stack.entry_side.parts.part_file): the session runs only its other parts, and joins them.
    reused_parts: tuple[Path, ...] = _option((), group=JOB, env=env_vars.REUSED_PARTS, kind=tuple, own_run=True)
    replay: Path | None = _option(None, group=JOB, env=env_vars.REPLAY, kind=Path, own_run=True)
    report_name: str | None = _option(None, group=JOB, env=env_vars.REPORT_NAME, own_run=True)
    # The checkpoints folders a rollback run restores (several: one baseline process, harness.contract.rollbacks,
    # which gives each writer's pytest session its one folder as the pytest option).
    rollback_from: tuple[Path, ...] = _option((), group=JOB, env=env_vars.ROLLBACK_FROM, kind=tuple, own_run=True,
                                              pytest="--harness-rollback-from", argparse=dict(
                                                  metavar="FOLDER", help="the checkpoints folder a rollback "
                                                                         "restores (default: this run's own)"))
    wheel: Path | None = _option(None, group=JOB, env=env_vars.WHEEL, kind=Path)  # the harness built once for the entries
    progress: Path | None = _option(None, group=JOB, env=env_vars.PROGRESS, kind=Path, own_run=True)  # an entry's phase, for `upgrade` to show
    phases_dir: Path | None = _option(None, group=JOB, env=env_vars.PHASES_DIR, kind=Path)  # `upgrade --harness-phases`: where entries write theirs
    # Set by an entry's session for its pytest run (harness.stack.entry_side.entry), read by the contract side.
    report: Path | None = _option(None, group=ENTRY, env=env_vars.REPORT, kind=Path, pytest="--harness-report",
                                  argparse=dict(help="report path"))
    entry: str = _option("local", group=ENTRY, env=env_vars.ENTRY, pytest="--harness-entry",
                         argparse=dict(help="matrix entry name"))
    checkpoints: Path | None = _option(None, group=ENTRY, env=env_vars.CHECKPOINTS, kind=Path)
    golden_dir: Path | None = _option(None, group=ENTRY, env=env_vars.GOLDEN_DIR, kind=Path,
                                      pytest="--harness-golden-dir", argparse=dict(help="golden directory"))
    golden_shown_as: Path | None = _option(None, group=ENTRY, env=env_vars.GOLDEN_SHOWN_AS, kind=Path,
                                           pytest="--harness-golden-shown-as", argparse=dict(help=(
                                               "the golden directory as the project names it, where the recording "
                                               "writes a staged copy of it (the files a message names)")))
    builtin_golden_dir: Path | None = _option(None, group=ENTRY, env=env_vars.BUILTIN_GOLDEN_DIR, kind=Path,
                                              pytest="--harness-builtin-golden-dir", argparse=dict(help=(
                                                  "where a family missing from the golden directory is read from "
                                                  "(the tool's own values)")))
    profile: str | None = _option(None, group=ENTRY, env=env_vars.PROFILE, pytest="--harness-profile", argparse=dict(
        metavar="NAME", help="the harness's Hypothesis profile: dev, ci or nightly (default: HARNESS_PROFILE, else ci "
                             "under CI and dev otherwise); --hypothesis-profile stays Hypothesis's own"))


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(RunOptions)}


def specs(group: str | None = None) -> dict[str, Spec]:
    """field -> its Spec, in declaration order (those of one group, or all)."""
    found = {f.name: f.metadata["spec"] for f in dataclasses.fields(RunOptions)}
    return {name: s for name, s in found.items() if group is None or s.group == group}


def own_run_variables() -> tuple[str, ...]:
    """The variables a child process must not inherit from its parent's environment: the run sets its own."""
    return tuple(s.env for s in specs().values() if s.own_run and s.env)


def inherited(environ) -> dict[str, str]:
    """`environ` without the variables of another run's own."""
    dropped = set(own_run_variables())
    return {k: v for k, v in environ.items() if k not in dropped}


def takes(spec: Spec, command: str) -> bool:
    return bool(spec.flags) and (spec.group == PROJECT or command in spec.commands)


def given_over(base: RunOptions, given: RunOptions) -> RunOptions:
    """`base` with every option `given` sets (not at its default) taken from `given`: a command line over
    what the environment told the process."""
    return dataclasses.replace(base, **{name: getattr(given, name) for name in specs()
                                        if getattr(given, name) != _DEFAULTS[name]})


def absolute(options: RunOptions, invoked_from: Path) -> RunOptions:
    """The options with their paths made absolute against `invoked_from` (as a child process reads them)."""
    made = {}
    for name, spec in specs().items():
        value = getattr(options, name)
        if spec.kind in (Path, tuple, RevisionPath) and value not in (None, ()):
            made[name] = decode(_encode(value, spec, invoked_from), spec)
    return dataclasses.replace(options, **made)


def _encode(value, spec: Spec, invoked_from: Path) -> str:
    if spec.kind is bool:
        return "1"
    if spec.kind is tuple:
        return os.pathsep.join(str((invoked_from / p).resolve()) for p in value)
    if spec.kind is Path:
        return str((invoked_from / value).resolve())  # children run elsewhere: absolute paths
    if spec.kind is RevisionPath:
        return revision_path.absolute(str(value), invoked_from)
    return str(value)


def environment(options: RunOptions, group: str, invoked_from: Path = Path(".")) -> dict[str, str]:
    """The variables that carry `group`'s given options to a child process."""
    env = {}
    for name, spec in specs(group).items():
        value = getattr(options, name)
        if spec.env and value is not None and value is not False and value != ():  # a seed of 0 is given
            env[spec.env] = _encode(value, spec, invoked_from)
    return env


def decode(text: str, spec: Spec):
    """An option's value from its text (a variable's, or a pytest option's)."""
    if spec.kind is bool:
        return text == "1"
    if spec.kind is tuple:
        return tuple(Path(p) for p in text.split(os.pathsep) if p)
    return Path(text) if spec.kind is RevisionPath else spec.kind(text)


def from_environment(environ=None) -> RunOptions:
    """The options a child process was told through its environment."""
    environ = os.environ if environ is None else environ
    return RunOptions(**{name: decode(environ[spec.env], spec) for name, spec in specs().items()
                         if spec.env and environ.get(spec.env)})
