"""A made-up stack (jax, optax, flax releases that never existed) behind the process boundary of an upgrade,
for tests that run whole command sequences in-process (tests/integration/test_sequences.py).

Faked, and only these: `uv pip compile` (harness.stack.pins.locks.uv_compile), the package index's JSON
(urllib's urlopen, as harness.stack.commands.bisect reads it) and the entry's child nox session
(subprocess.Popen as harness.stack.run.entry_runs starts it). The plan, reuse and its cache, follow-ups,
bisection, the verdict and publishing stay the real code.

Every report is a deterministic function of what determines a real one: the entry's pins (from the lock
the plan resolved), the contract files, XLA_FLAGS and the checks selected. A check "first changes" in one
optax release (or never), chosen by a digest of its id, its file and XLA_FLAGS; jax 0.6.0 changes some
checks on its own; optax 1.2.0 imports only with jax 0.4.0 or older (its modules fail to collect
otherwise). Reports are built from the real fixture reports' records (tests/fixtures), renamed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import re
import signal
import subprocess
from pathlib import Path

from packaging.version import Version

from support import upgrade_reports
from harness import env_vars
from harness.model import entry_job, report_io
from harness.model.codec import from_json
from harness.model.enums import CheckKind, Outcome, ReportPart, Status
from harness.model.host import Host
from harness.model.report import CheckRecord, Report, Summary, now
from harness.stack.entry_side import entry as stack_entry, entry_jobs, parts as entry_parts
from harness.stack.pins.locks import PIN_LINE

BASELINE = {"jax": "0.5.0", "jaxlib": "0.5.0", "optax": "1.0.0", "flax": "0.9.0", "numpy": "2.0.0"}
INDEX = {"optax": ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"], "jax": ["0.3.0", "0.4.0", "0.5.0", "0.6.0"],
         "jaxlib": ["0.3.0", "0.4.0", "0.5.0", "0.6.0"], "flax": ["0.9.0", "0.10.0"], "numpy": ["2.0.0"]}
OTHER_VERSION = "1.0"  # what the fake resolver pins any package it does not list (the contract extra's)
FIRST_CHANGED = ["1.1.0", "1.2.0", "1.3.0", "1.4.0", None]  # None: no optax release changes the check
# The machine every simulated entry runs on, as a real report names its host: entries on one host are set value for
# value against the baseline (harness.verdict.host_drift, harness.verdict.against_baseline).
HOST = Host(cpu="simulated CPU", machine="x86_64", numerics_features=[], vector="AVX2", fma=True, blas="Haswell")
NOT_IMPORTABLE = ("1.2.0", "0.4.0")  # optax 1.2.0 imports only with jax 0.4.0 or older
TEST = re.compile(r"^def (test_\w+)\(", re.MULTILINE)

CONTRACT = '''"""A contract of the simulated project (tests/support/simulated_stack.py reads its test names)."""

SCALE = {scale}


def test_{name}_first(check):
    check.exact("first", SCALE, SCALE)


def test_{name}_second(check):
    check.exact("second", SCALE, SCALE)


def test_{name}_third(check):
    check.exact("third", SCALE, SCALE)
'''
PYPROJECT = '''[tool.upgrade-harness]
baseline-from = "requirements.txt"
contracts = ["contracts"]
golden = "golden"
locks = "locks"
builtin = {builtin}
pythonpath = ["."]

[tool.upgrade-harness.candidate]
optax = "1.4.0"
jax = "0.6.0"
jaxlib = "0.6.0"
'''


# The team's code its contracts import (under its pythonpath): what it calls takes the built-in tests the
# simulated suite runs (the real selection: harness.stack.selection), and its text seeds what the releases do to
# the team's own checks (an edit of the code changes its results, as a real one may).
CODE = '''"""The simulated team's optimizer (tests/support/simulated_stack.py)."""
import optax

STEPS = {steps}


def make():
    return optax.MultiSteps(optax.sgd(0.1), every_k_schedule=2)
'''
MORE_CALLS = '''

def clipped():
    return optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1))
'''


def make_project(root: Path, modules: tuple[str, ...] = ("alpha", "beta"), builtin: bool = False) -> Path:
    """A team's project pinned to BASELINE with its own contracts, and the built-in ones reported only when
    `builtin` (those covering what its code, trainer/optim.py, calls)."""
    (root / "contracts").mkdir(parents=True)
    (root / "golden").mkdir()
    (root / "trainer").mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT.format(builtin='"report"' if builtin else "false"))
    (root / "requirements.txt").write_text("".join(f"{p}=={v}\n" for p, v in BASELINE.items()))
    (root / "trainer" / "optim.py").write_text(CODE.format(steps=0))
    for name in modules:
        (root / "contracts" / f"test_{name}.py").write_text(CONTRACT.format(name=name, scale=0))
    return root


def _digest(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16)


@dataclasses.dataclass(frozen=True)
class Check:
    """One contract check of the project as the fake suite sees it."""

    id: str
    family: str
    nodeid: str
    seed: str  # its module's text: an edit of the module changes what the releases do to it


def checks_of(contracts: Path) -> list[Check]:
    """The project's own checks: each seeded by its module's text and the team's code's."""
    code = "".join(p.read_text() for p in sorted((contracts.parent / "trainer").glob("*.py")))
    found = []
    for module in sorted(contracts.glob("test_*.py")):
        text, family = module.read_text(), module.stem.removeprefix("test_")
        found += [Check(f"{family}/{name}", family, f"contracts/{module.name}::{name}", text + code)
                  for name in TEST.findall(text)]
    return found


def builtin_checks(tests: tuple[str, ...] | None) -> list[Check]:
    """The built-in checks a selection runs: one a test it names (seeded by its id alone: the team's code never
    reaches them); none for a selection of whole families (the simulated project takes none)."""
    return [Check(t, t.split("/", 1)[0], f"harness/builtin/{t.replace('/', '.py::', 1)}", "built-in")
            for t in tests or ()]


def first_changed(check: Check, xla_flags: str) -> str | None:
    """The optax release that first changes the check (monotone: every later one does too)."""
    return FIRST_CHANGED[_digest(check.id, check.seed, xla_flags) % len(FIRST_CHANGED)]


def jax_changes(check: Check, xla_flags: str) -> bool:
    """jax 0.6.0 changes about one check in four on its own."""
    return _digest("jax", check.id, check.seed, xla_flags) % 4 == 0


def changed(check: Check, pins: dict[str, str], xla_flags: str) -> bool:
    first = first_changed(check, xla_flags)
    by_optax = first is not None and Version(pins["optax"]) >= Version(first)
    return by_optax or (Version(pins["jax"]) >= Version("0.6.0") and jax_changes(check, xla_flags))


def imports(pins: dict[str, str]) -> bool:
    optax, newest_jax = NOT_IMPORTABLE
    return not (pins["optax"] == optax and Version(pins["jax"]) > Version(newest_jax))


# --- the records reports are built from: real ones, renamed ---------------------------------------------

_TEMPLATE_CHECK = "shapes/test_mismatched_grads[multisteps_sgd-none_leaf-eager]"  # error type changed on the candidate


@dataclasses.dataclass(frozen=True)
class Templates:
    report: Report
    same: CheckRecord  # as the baseline's stack does it
    moved: CheckRecord  # as a release that changes it does it
    uncollected: CheckRecord  # a module that failed to import inside optax


def templates() -> Templates:
    base, cand = (from_json(Report, upgrade_reports.load(n)) for n in ("baseline", "candidate"))
    broken = from_json(Report, upgrade_reports.load("candidate-optax-0.2.7"))
    return Templates(dataclasses.replace(base, checks=[], warnings=[], performance={}, selection=None),
                     base.check(_TEMPLATE_CHECK), cand.check(_TEMPLATE_CHECK), broken.checks[0])


def report_for(t: Templates, entry, checks: list[Check], selection: list[str] | None, xla_flags: str,
               run_id: str | None, own: set[str] | None = None) -> Report:
    """The report the simulated stack's suite writes for `entry` (its pins), limited to `selection`."""
    pins = dict(entry.pins)
    if not imports(pins):  # every module fails to collect, whatever was selected (pytest collects first)
        records = [dataclasses.replace(t.uncollected, id=f"{f}/collection", nodeid=f"contracts/test_{f}.py",
                                       family=f, own=True, message=f"contracts/test_{f}.py could not be collected: "
                                       "AttributeError: module 'optax' has no attribute 'tree'",
                                       library_frames=["optax/__init__.py:23", "jax/_src/config.py:98"])
                   for f in dict.fromkeys(c.family for c in checks)]
    else:
        wanted = None if selection is None else set(selection)
        # A built-in check says nothing of being own (CheckRecord.own), as the plugin writes it.
        records = [dataclasses.replace(t.moved if changed(c, pins, xla_flags) else t.same, id=c.id, nodeid=c.nodeid,
                                       family=c.family, own=True if own is None or c.family in own else None)
                   for c in checks if wanted is None or c.id in wanted]
    uncollected = any(r.kind == CheckKind.COLLECTION for r in records)
    # As harness.contract.session's Recorder ends a suite (a status for uncollected modules where it has one).
    status = getattr(Status, "UNCOLLECTED", Status.COMPLETE) if uncollected else Status.COMPLETE
    recorded = t.report.environment.versions
    versions = {**recorded, **{k: v for k, v in pins.items() if k in recorded}}
    environment = dataclasses.replace(t.report.environment, versions=versions, host=HOST)
    failed = any(r.outcome != Outcome.PASSED for r in records)
    return dataclasses.replace(
        t.report, entry=stack_entry.entry_info(entry), status=status, exit_status=1 if failed else 0,
        started_at=now(), finished_at=now(), environment=environment, checks=records, summary=Summary.of(records),
        selection=selection, own_families=sorted({c.family for c in checks if own is None or c.family in own}) or None,
        run_id=run_id, problem=None)


# --- the faked process boundary ---------------------------------------------------------------------------

def _pins_of(requirements: str) -> tuple[dict[str, str], list[str]]:
    """name -> version asked (None: any) from requirement lines; the unknown versions asked."""
    asked, missing = {}, []
    for line in requirements.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, version = line.partition("==")
        name = re.split(r"[<>=!~;\[ ]", name, maxsplit=1)[0].strip().lower()
        asked[name] = version.strip() or None
        if name in INDEX and version and version.strip() not in INDEX[name]:
            missing.append(f"{name}=={version.strip()}")
    return asked, missing


def fake_uv_compile(requirements: str, python: str, output: Path | None = None, header_command: str | None = None,
                    prerelease: bool = False, universal: bool = True,
                    offline: bool = False) -> subprocess.CompletedProcess:
    """`uv pip compile` over INDEX: a version it does not list fails as uv says so; a package asked without a
    version gets its newest; any other package is pinned at OTHER_VERSION."""
    asked, missing = _pins_of(requirements)
    if missing:
        why = ("  × No solution found when resolving dependencies:\n"
               f"  ╰─▶ Because there is no version of {missing[0]} and you require {missing[0]}, we can conclude "
               "that your requirements are unsatisfiable.")
        return subprocess.CompletedProcess(["uv"], 1, "", why)
    lock = {name: version or (INDEX[name][-1] if name in INDEX else OTHER_VERSION) for name, version in asked.items()}
    text = "".join(f"{name}=={version}\n" for name, version in sorted(lock.items()))
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
    return subprocess.CompletedProcess(["uv"], 0, "" if output else text, "")


def fake_urlopen(url, timeout=None):
    """The package index's JSON for the bisection's release lists: every release of INDEX, one wheel each."""
    package = str(url).rstrip("/").split("/")[-2]
    releases = {v: [{"filename": f"{package}-{v}-py3-none-any.whl", "yanked": False}] for v in INDEX.get(package, [])}
    return io.BytesIO(json.dumps({"releases": releases}).encode())


@dataclasses.dataclass
class Faults:
    """What goes wrong in the next entries started: `die` entry name -> "no report" or "partial" (killed by
    SIGKILL); `interrupt_at`: the number of entries started before a Ctrl-C stops the whole run."""

    die: dict[str, str] = dataclasses.field(default_factory=dict)
    interrupt_at: int | None = None
    started: int = 0


class Sessions:
    """The child entry sessions, run in-process the moment they are started; counts them (ran) too."""

    def __init__(self, templates: Templates):
        self.templates = templates
        self.faults = Faults()
        self.ran: list[str] = []
        self.parts_ran: list[tuple[str, str]] = []  # (report, part) of every part's suite run

    def report(self, project: Path, entry, checks: list[Check], selection: list[str] | None, xla_flags: str,
               run_id: str | None, own: set[str]) -> Report:
        """What a part's suite reports (support.golden_stack's sessions judge against the golden files instead)."""
        return report_for(self.templates, entry, checks, selection, xla_flags, run_id, own)

    def popen(self, cmd, stdout=None, stderr=None, cwd=None, env=None, **_):
        name = cmd[cmd.index("-s") + 1]
        self.faults.started += 1
        if self.faults.interrupt_at is not None and self.faults.started > self.faults.interrupt_at:
            raise KeyboardInterrupt
        return _Finished(self._session(name, dict(env), stdout, Path(cwd)))

    def _session(self, name: str, env: dict[str, str], log, project: Path) -> int:
        """What `nox -s <name>` does in an entry: read its entry and options from its job, run the suite in the
        parts its project's report is made of, less those its job names as reused (harness.stack.entry_side.parts,
        the real code), and join them into the report."""
        self.ran.append(name)
        job = entry_job.read(Path(env[env_vars.JOB]))
        entry, told = entry_jobs.entry_of(job), job.options
        assert entry.name == name
        lock = Path(entry.lock_file) if entry.lock_file else None
        pins = {m.group(1).lower(): m.group(2) for line in lock.read_text().splitlines()
                if (m := PIN_LINE.match(line.strip()))} if lock is not None else {}
        entry = dataclasses.replace(entry, pins={p: pins.get(p, v) for p, v in entry.pins.items()})
        path = told.reports_dir / f"{told.report_name or name}.json"
        only = told.only
        selection = sorted({ln.strip() for ln in only.read_text().splitlines() if ln.strip()}) if only else None
        found = project_of(env)
        own = checks_of(project / "contracts")
        builtin = builtin_checks(found.selection.tests if found.selection is not None else None)
        if log is not None:
            log.write(f"simulated suite of {name}: {entry.pin_text}\n")
            log.flush()
        dies = self.faults.die.pop(name, None)
        if dies == "no report":
            return -signal.SIGKILL

        def run_part(part: ReportPart, file: Path) -> None:
            self.parts_ran.append((path.stem, str(part)))
            checks = [*(builtin if part != ReportPart.OWN else []), *(own if part != ReportPart.BUILTIN else [])]
            report = self.report(project, entry, checks, selection, env.get("XLA_FLAGS", ""), told.run_id,
                                 {c.family for c in own})
            if dies == "partial":  # killed part-way through its first part: nothing joined
                half = report.checks[: len(report.checks) // 2]
                report_io.write(file, dataclasses.replace(report, status=Status.PARTIAL, finished_at=None,
                                                          checks=half, summary=Summary.of(half)))
                raise _Killed()
            report_io.write(file, report)
            if report.exit_status:
                raise _Failed(report.exit_status)

        layout = entry_parts.of_run(found, told)
        try:
            entry_parts.run(path, layout, told.reused_parts, stack_entry.entry_info(entry), run_part, now())
        except _Killed:
            return -signal.SIGKILL
        except _Failed as failed:
            return failed.return_code
        return 0


class _Killed(BaseException):  # not a part's failure, which the session's other part outlives
    """The session was killed part-way (SIGKILL): it joins nothing."""


class _Failed(Exception):
    """A part's pytest ended with failed checks (nox's CommandFailed carries its return code)."""

    def __init__(self, code: int):
        super().__init__(code)
        self.return_code = code


def project_of(env: dict[str, str]):
    """The project as the entry's session loads it (its selection read from the team's code)."""
    from harness.stack import project
    from harness.stack.workspace import Workspace

    return project.load(Workspace.from_environment(env))


class _Finished:
    """A child process that has already ended with `code`."""

    pid = 0

    def __init__(self, code: int):
        self.returncode = code

    def poll(self) -> int:
        return self.returncode

    def wait(self, timeout=None) -> int:
        return self.returncode

    def terminate(self) -> None:
        pass
