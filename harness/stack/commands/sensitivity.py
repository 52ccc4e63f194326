"""`nox -s sensitivity`: mutate Optax's in-scope modules with cosmic-ray and run the matching contracts.

Steps: install the disposable environment; give each worker its own copy of optax (and jax or flax: scope.packages()); `cosmic-ray init` one
session per group of modules judged by the same families; keep the mutants within the in-scope lines
(scope.IN_SCOPE_LINES_ONLY), draw the sample and mark the rest (and the equivalent mutants) skipped in
those sessions; run each group's contracts once on the unmutated code
(they must pass: it also warms the bytecode and JAX caches, and sets the per-mutant timeout); `cosmic-ray
exec` each session, with cosmic-ray's HTTP workers when there is more than one worker; write the report.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from harness.errors import HarnessError
from harness.stack import paths
from harness.model import sensitivity as model
from harness.model.codec import to_json
from harness.model.report import now
from harness.stack.commands import options as command_options
from harness.stack.entry_side import entry as stack_entry, entry_jobs
from harness.stack.environments.envs import dir_name
from harness.stack.pins import locks, matrix, plan
from harness.stack.sensitivity import cosmic, disposable, equivalents, lines, render, scope
from harness.stack.sensitivity.mutants import MutantId, Selection, parse_shard

USAGE = command_options.Usage(prog="nox -s sensitivity --", description=(
    "`nox -s sensitivity`: mutate Optax's in-scope modules with cosmic-ray and run the matching contracts."), own=(
    command_options.own("--sample", type=int, default=None, help="judge N mutants drawn with --seed (default: all)"),
    command_options.own("--seed", type=int, default=0),
    command_options.own("--shard", default="1/1", help="I/N: judge the I-th of N shares of the selection"),
    command_options.own("--workers", type=int, default=1, help="mutants run at once (cosmic-ray HTTP workers)"),
    command_options.own("--module", action="append", default=[], metavar="PATH", choices=sorted(scope.MODULES),
                        help="judge only this module's mutants (repeatable), e.g. optax/_src/transform.py"),
    command_options.own("--list", action="store_true", help="list the selected mutants and stop"),
    command_options.own("--out", default=None, help="report path (default: reports/sensitivity.json)")))
TIMEOUT_FACTOR, TIMEOUT_FLOOR = 4.0, 60.0  # a mutant may take 4x its group's unmutated run, at least 60 s


def parse(argv: list[str]) -> argparse.Namespace:
    """The session's options (argparse's own usage and exit status 2 when they are wrong: nox runs it)."""
    parser = command_options.parser(USAGE)
    options = parser.parse_args(argv)
    if options.workers < 1:
        parser.error("--workers must be at least 1")
    return options


class Run:
    """One sensitivity run in the session's environment `venv`, working under venv/work."""

    def __init__(self, session, venv: Path, contracts: Path, root: Path, suite_env: dict[str, str], workers: int):
        self.session, self.venv, self.contracts, self.root = session, venv, contracts, root
        self.python = venv / "bin" / "python"
        self.lock = disposable.lock_work(venv)  # first: nothing of a running run's work directory is touched
        self.work = venv / "work"
        self.packages = scope.packages()
        self.copies = [disposable.worker_copy(venv, self.work / f"worker-{i}", self.packages) for i in range(workers)]
        # Each copy's bytecode now, by this Python: a mutant's run then compiles only the mutated module.
        subprocess.run([str(self.python), "-m", "compileall", "-q", *map(str, self.copies)], check=True)
        self.envs = [cosmic.worker_environment(suite_env, copy, venv) for copy in self.copies]
        self.groups = scope.groups()

    def db(self, group: scope.Group) -> Path:
        return self.work / "sessions" / f"{group.name}.sqlite"

    def config(self, group: scope.Group, timeout: float = TIMEOUT_FLOOR, urls: list[str] = ()) -> Path:
        command = cosmic.test_command(self.python, self.root, group.files(self.contracts))
        return cosmic.write_config(self.work / "sessions" / f"{group.name}.toml", group.modules, command,
                                   timeout, list(urls))

    def crsession(self, *args: str) -> object:
        done = subprocess.run([str(self.python), "-m", "harness.stack.sensitivity.crsession", *args],
                              env=self.envs[0], capture_output=True, text=True)
        if done.returncode != 0:
            raise HarnessError(f"reading cosmic-ray's session failed: {done.stderr.strip()[-2000:]}")
        return json.loads(done.stdout)

    def init(self) -> list[MutantId]:
        for group in self.groups:
            self.db(group).unlink(missing_ok=True)
            self.cosmic_ray("init", str(self.config(group)), str(self.db(group)))
        found = self.crsession("list", *(str(self.db(g)) for g in self.groups))
        return [MutantId(m["module"], m["operator"], m["occurrence"], m["line"]) for m in found]

    def cosmic_ray(self, *args: str, env: dict[str, str] | None = None) -> None:
        """A cosmic-ray command in worker 0's directory, where the sessions' relative module paths point."""
        done = subprocess.run([str(self.venv / "bin" / "cosmic-ray"), *args], cwd=self.copies[0],
                              env=env or self.envs[0], capture_output=True, text=True)
        if done.returncode != 0:
            raise HarnessError(f"`cosmic-ray {' '.join(args)}` failed ({done.returncode}): "
                               f"{(done.stderr or done.stdout).strip()[-2000:]}")

    def skip(self, selected: list[MutantId], equivalent: dict[MutantId, str], in_lines: set[MutantId]) -> None:
        """Mark in each session the mutants outside the in-scope lines, those not drawn, and the drawn
        equivalent ones, as skipped."""
        chosen = set(selected)
        reasons = {}
        for m in self.all_mutants:
            if m not in in_lines:
                reasons[m.key] = "outside scope: not within the lines of an in-scope callable"
            elif m not in chosen:
                reasons[m.key] = "not drawn"
            elif m in equivalent:
                reasons[m.key] = f"equivalent: {equivalent[m]}"
        path = self.work / "sessions" / "skipped.json"
        path.write_text(json.dumps(reasons))
        for group in self.groups:
            self.crsession("skip", str(self.db(group)), str(path))

    def baseline(self, group: scope.Group) -> float:
        """The group's contracts on the unmutated optax: they must pass. The stack's bytecode is written
        here (cosmic-ray's runs write none), so the mutants' runs read it. Returns the seconds."""
        command = cosmic.test_command(self.python, self.root, group.files(self.contracts))
        started = time.monotonic()
        done = subprocess.run(command, shell=True, cwd=self.copies[0], env=self.envs[0], capture_output=True, text=True)
        if done.returncode != 0:
            raise HarnessError(f"the {group.name} contracts fail on the unmutated optax, so no mutant could be "
                               f"judged; fix that first:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
        return time.monotonic() - started

    def execute(self, group: scope.Group, timeout: float, urls: list[str]) -> None:
        self.cosmic_ray("exec", str(self.config(group, timeout, urls)), str(self.db(group)))

    def check_copies(self) -> None:
        """Each worker's Python imports every mutated package from the worker's own copy, not from the environment."""
        for copy, env in zip(self.copies, self.envs):
            for package in self.packages:
                done = subprocess.run([str(self.python), "-c", f"import {package}; print({package}.__file__)"], cwd=copy,
                                      env=env, capture_output=True, text=True)
                if done.returncode != 0 or not Path(done.stdout.strip()).is_relative_to(copy):
                    raise HarnessError(f"the worker in {copy} imports {package} from "
                                       f"{done.stdout.strip() or done.stderr[-500:]}, not from its own copy: mutants "
                                       "would not be seen")

    def results(self, equivalent: dict[MutantId, str]) -> list[model.Mutant]:
        families = {module: list(g.families) for g in self.groups for module in g.modules}
        rows = self.crsession("results", *(str(self.db(g)) for g in self.groups))
        return render.mutants(rows, families, {m.key: reason for m, reason in equivalent.items()})


def run(session, options: argparse.Namespace, contracts: Path, root: Path, suite_env: dict[str, str],
        report_path: Path) -> model.SensitivityReport | None:
    """The whole run; the report written to `report_path` (and .md beside it), or None for --list."""
    started = now()
    venv = Path(session.virtualenv.location)
    state = Run(session, venv, contracts, root, suite_env, options.workers)
    state.all_mutants = state.init()
    site = disposable.site_packages(venv)
    scope_lines = lines.derive(site, sorted(scope.IN_SCOPE_LINES_ONLY))
    in_lines, outside = scope_lines.split(state.all_mutants)
    if options.module:
        outside = {module: n for module, n in outside.items() if module in options.module}
    selection = Selection(options.sample, options.seed, parse_shard(options.shard))
    selected = selection.apply(restrict(in_lines, options.module))
    equivalent = {m: r for m, r in equivalents.load(equivalents.PATH, state.all_mutants).items() if m in selected}
    if options.list:
        session.log(f"{len(selected)} of {len(in_lines)} mutants selected ({sum(outside.values())} more lie "
                    "outside the in-scope callables' lines)")
        for m in selected:
            session.log(f"{m}{'  (equivalent)' if m in equivalent else ''}")
        return None
    state.skip(selected, equivalent, set(in_lines))
    state.check_copies()
    to_run = {m.module for m in selected if m not in equivalent}
    groups = [g for g in state.groups if to_run & set(g.modules)]
    timeouts = {}
    for group in groups:
        seconds = state.baseline(group)
        timeouts[group.name] = max(TIMEOUT_FLOOR, TIMEOUT_FACTOR * seconds)
        session.log(f"{group.name}: unmutated contracts pass in {seconds:.1f} s; timeout {timeouts[group.name]:.0f} s")
    session.log(f"judging {len(selected) - len(equivalent)} mutants ({len(equivalent)} equivalent) "
                f"with {options.workers} worker(s)")
    began = time.monotonic()
    if options.workers > 1:
        with cosmic.http_workers(venv, list(zip(state.copies, state.envs))) as urls:
            for group in groups:
                state.execute(group, timeouts[group.name], urls)
    else:
        for group in groups:
            state.execute(group, timeouts[group.name], [])
    report = model.report(
        started_at=started, finished_at=now(), optax=_version(state, "optax"), cosmic_ray=_version(state, "cosmic-ray"),
        selection=model.Selection(options.sample, options.seed, options.shard, sorted(options.module)),
        mutants_found=len(state.all_mutants), outside_scope=outside,
        libraries={package: _version(state, package) for package in sorted({m.module.split("/")[0] for m in selected})},
        seconds=round(time.monotonic() - began, 1), workers=options.workers, mutants=state.results(equivalent))
    write(report, report_path, session.log)
    return report


def restrict(mutants: list[MutantId], modules: list[str] | None) -> list[MutantId]:
    """The mutants of `modules` (all of them when none are given); a module the run does not mutate is an error."""
    if not modules:
        return mutants
    unknown = sorted(set(modules) - set(scope.MODULES))
    if unknown:
        raise HarnessError(f"--module {', '.join(unknown)}: not a mutated module; choose from "
                           f"{', '.join(scope.MODULES)} (harness/stack/sensitivity/scope.py)")
    return [m for m in mutants if m.module in modules]


def _version(state: Run, package: str) -> str:
    done = subprocess.run([str(state.python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def write(report: model.SensitivityReport, path: Path, log) -> None:
    """reports/sensitivity.json and .md; a previous report is moved to previous/ first, never lost."""
    path.parent.mkdir(parents=True, exist_ok=True)
    markdown = path.with_suffix(".md")
    for old in (path, markdown):
        if old.exists():
            (old.parent / "previous").mkdir(exist_ok=True)
            os.replace(old, old.parent / "previous" / old.name)
            log(f"moved the previous {old.name} to {old.parent / 'previous'}")
    path.write_text(json.dumps(to_json(report), indent=2) + "\n")
    markdown.write_text(render.markdown(report))
    log(f"wrote {path} and {markdown}")


def mutate(call: command_options.Invocation) -> int:
    """The session: cosmic-ray in the session's own environment, never an entry's (it rewrites the files it
    mutates), the matching contracts run on each mutant against this checkout's baseline."""
    ws, nox_session = call.ws, call.session
    if not ws.is_checkout:
        raise HarnessError("sensitivity measures the built-in contracts on this checkout's baseline; run it there.")
    options = parse(list(call.argv))
    entries = plan.told_entries(ws)
    baseline = entries[matrix.BASELINE]
    disposable.check_disposable(Path(nox_session.virtualenv.location),
                                [ws.envdir / dir_name(ws.envdir, e.name) for e in entries.values()])
    disposable.install(nox_session, ws, locks.lock_path(ws, baseline))
    venv = nox_session.virtualenv.location
    suite_env = stack_entry.suite_environment(baseline, "", venv, ws.root / "golden", ws.is_checkout,
                                              options=ws.options, job=entry_jobs.write_beside(
                                                  venv, "sensitivity", baseline, ws.options))
    run(nox_session, options, paths.PACKAGE / "builtin", ws.root, suite_env,
        Path(options.out) if options.out else ws.reports / "sensitivity.json")
    return 0


COMMANDS = (command_options.Declaration(
    "sensitivity", "Mutate Optax's in-scope modules with cosmic-ray and run the matching contracts on each "
                   "mutant: reports/sensitivity.json.", USAGE, mutate, session=command_options.Session.STACK),)
