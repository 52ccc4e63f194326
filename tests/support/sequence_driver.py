"""One project driven through a sequence of commands (tests/integration/test_sequences.py), with what must hold
after each: reuse never changes an answer.

The driver runs the real `upgrade` in-process on a simulated project (tests/support/simulated_stack.py
fakes only the child sessions, the resolver and the package index) and, for each finished run, the same
command with --fresh in a copy of the project: the two judgements must be equal. It also keeps what each
reports directory last published, to check that a run that could not start or did not finish never
displaces it, and that nothing a finished run wrote is lost.
"""

from __future__ import annotations

import dataclasses
import hashlib
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import time
import types
from pathlib import Path

import pytest

from support import simulated_stack as sim
from harness import env_vars
from harness.model import bisection
from harness.stack.commands import bisect, upgrade
from harness.stack.pins import locks
from harness.stack.run import entry_runs, report_cache
from harness.stack.workspace import Workspace

CANDIDATES = {
    "changes checks": "jax==0.6.0 jaxlib==0.6.0 optax==1.4.0",  # two groups bumped: attributed, bisected
    "optax alone": "optax==1.3.0",  # one group: bisected without single-package entries
    "cannot import": "jax==0.6.0 jaxlib==0.6.0 optax==1.2.0",  # its modules fail to collect
    "mistyped": "optax==1.9.9",  # no such release: does not resolve
    "the baseline": "optax==1.0.0",  # the baseline's own pins
}
UNSTARTABLE = ("mistyped",)  # a run of these cannot start: it must publish nothing
XLA_FLAGS = (None, "--xla_cpu_enable_fast_math=true", "--xla_cpu_use_thunk_runtime=false")
ELSEWHERE = "alt-reports"  # `--reports DIR`, beside the project (a folder inside it would be part of its code)
DAMAGES = ("truncated", "altered", "unsigned")

Judgement = dict  # what a verdict answers: headline, exit status, per-entry marks, bisection answers
Files = dict[str, str]  # path relative to a reports directory -> sha256 of its bytes


def _record(path: Path) -> dict:
    """A kept record's document (harness.stack.run.report_cache keeps it gzip-compressed)."""
    return json.loads(gzip.decompress(path.read_bytes()))


def install_boundary(monkeypatch: pytest.MonkeyPatch, sessions: sim.Sessions | None = None) -> sim.Sessions:
    """The faked process boundary: child sessions (`sessions`, by default simulated_stack's), `uv pip compile`,
    the package index. The entries' polling sleep is dropped (the fake sessions have ended when started). Returns
    the sessions, to inject faults."""
    sessions = sessions or sim.Sessions(sim.templates())
    monkeypatch.setattr(entry_runs, "subprocess", types.SimpleNamespace(
        Popen=sessions.popen, STDOUT=subprocess.STDOUT, TimeoutExpired=subprocess.TimeoutExpired))
    monkeypatch.setattr(entry_runs, "time", types.SimpleNamespace(
        sleep=lambda seconds: None, perf_counter=time.perf_counter, strftime=time.strftime))
    monkeypatch.setattr(locks, "uv_compile", sim.fake_uv_compile)
    monkeypatch.setattr(bisect.urllib.request, "urlopen", sim.fake_urlopen)
    # Every variable an upgrade sets or reads (the harness's own, UV_OFFLINE, XLA_FLAGS) is put back after the test.
    names = {v for k, v in vars(env_vars).items() if k.isupper() and isinstance(v, str) and v.isupper()}
    for name in sorted(names | {"XLA_FLAGS", "UV_OFFLINE"}):
        monkeypatch.delenv(name, raising=False)
    return sessions


def judgement(reports: Path, root: Path) -> Judgement | None:
    """The answers of the verdict published in `reports` (None: none), without times, run ids or where a
    report came from; paths under the project `root` made relative."""
    summary = reports / "upgrade-summary.json"
    if not summary.exists():
        return None
    said = json.loads(summary.read_text().replace(str(root), "<project>"))
    found = reports / bisection.BISECT_FILE
    return {
        "headline": said["headline"], "exit_status": said["exit_status"], "cause": said["cause"],
        "baseline": said["baseline"]["status"],
        "entries": [(e["name"], e["status"], e["problem"], sorted((c["check_id"], c["mark"]) for c in e["changes"]))
                    for e in said["entries"]],
        "first changed": sorted((r.check_id, r.text) for r in bisection.read(found).checks) if found.exists() else None,
    }


def published_files(reports: Path) -> Files:
    """The files a run published into `reports`: hidden ones (the cache, unfinished runs, the run lock) and
    previous/ left out."""
    return {p.relative_to(reports).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(reports.rglob("*")) if p.is_file() and p.relative_to(reports).parts[0] != "previous"
            and not p.relative_to(reports).parts[0].startswith(".")}


@dataclasses.dataclass
class Published:
    """What a reports directory holds after its last finished run."""

    judgement: Judgement | None = None
    files: Files = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Run:
    """One command as the sequence ran it."""

    argv: list[str]
    reports: Path
    code: int | None  # None: stopped (Ctrl-C)
    finished: bool  # published a judgement (any verdict, CANNOT JUDGE included)


class Sequence:
    """A project and the commands run on it; `check` after each."""

    def __init__(self, base: Path, sessions: sim.Sessions):
        self.root = Path(tempfile.mkdtemp(prefix="seq-", dir=base))
        self.project = sim.make_project(self.root / "project", builtin=True)
        self.sessions = sessions
        self.published: dict[Path, Published] = {}
        self.last: Run | None = None
        self.moved: list[tuple[Path, Published]] = []  # finished runs since the last check: what each displaced
        self.steps = 0
        os.environ.pop("XLA_FLAGS", None)

    # --- commands --------------------------------------------------------------------------------------

    def reports_dir(self, elsewhere: bool) -> Path:
        return self.root / ELSEWHERE if elsewhere else self.project / "reports"

    def argv(self, candidate: str, bisect: bool = False, fresh: bool = False, elsewhere: bool = False) -> list[str]:
        return (["--candidate", CANDIDATES[candidate]] + ["--bisect"] * bisect + ["--fresh"] * fresh
                + ["--reports", ELSEWHERE] * elsewhere)

    def upgrade(self, candidate: str, bisect: bool = False, fresh: bool = False, elsewhere: bool = False,
                compare: bool = True) -> Run:
        """The command, then (when it finished and `compare`) the same command with --fresh in a copy of the
        project: their judgements must be equal."""
        argv = self.argv(candidate, bisect, fresh, elsewhere)
        reports = self.reports_dir(elsewhere)
        before = self.published.get(reports, Published())
        try:
            code = upgrade.upgrade(Workspace.of(self.project), argv, invoked_from=str(self.root))
        except KeyboardInterrupt:
            code = None
        self.sessions.faults = sim.Faults()
        now = judgement(reports, self.project)
        # Finished: not stopped, and it could start (its candidate resolves): any verdict, CANNOT JUDGE included.
        finished = code is not None and candidate not in UNSTARTABLE
        self.last = Run(argv, reports, code, finished)
        if finished:
            if compare:
                fresh_answer, fresh_code = self.fresh_twin(candidate, bisect)
                assert (now, code) == (fresh_answer, fresh_code), \
                    f"reuse changed an answer of `upgrade {' '.join(argv)}`: with reuse\n{now}\n" \
                    f"with --fresh\n{fresh_answer}"
            self.moved.append((reports, before))  # checked with the others (check)
            self.published[reports] = Published(now, published_files(reports))
        return self.last

    def fresh_twin(self, candidate: str, bisect: bool) -> tuple[Judgement | None, int | None]:
        """The same command with --fresh on the same state: a copy of the project, no cache, no faults."""
        twin = Path(tempfile.mkdtemp(prefix="fresh-", dir=self.root)) / "project"
        shutil.copytree(self.project, twin, ignore=shutil.ignore_patterns("reports", ".nox"))
        faults, self.sessions.faults = self.sessions.faults, sim.Faults()
        try:
            code = upgrade.upgrade(Workspace.of(twin), self.argv(candidate, bisect, fresh=True),
                                   invoked_from=str(twin.parent))
            return judgement(twin / "reports", twin), code
        finally:
            self.sessions.faults = faults
            shutil.rmtree(twin.parent, ignore_errors=True)

    def edit_contract(self, module: str, scale: int) -> None:
        """An edit of a contract module (its constant): a new key for every entry, new answers for its checks."""
        path = self.project / "contracts" / f"test_{module}.py"
        path.write_text(sim.CONTRACT.format(name=module, scale=scale))

    def edit_code(self, steps: int, more_calls: bool) -> None:
        """An edit of the team's code: a constant (its own checks' answers change, the built-in tests its calls
        take do not), and with `more_calls` another callable called (the selection grows)."""
        text = sim.CODE.format(steps=steps) + (sim.MORE_CALLS if more_calls else "")
        (self.project / "trainer" / "optim.py").write_text(text)

    def set_xla_flags(self, flags: str | None) -> None:
        """A variable that changes numerics (part of every report's key)."""
        if flags is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = flags

    def damage_cache(self, which: int, how: str, elsewhere: bool = False) -> str | None:
        """One record under .cache/ cut short, altered after it was signed, or left without its digest."""
        records = sorted((self.reports_dir(elsewhere) / report_cache.CACHE).glob(report_cache.RECORDS))
        if not records:
            return None
        path = records[which % len(records)]
        if how == "truncated":
            path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
            return path.name
        try:
            record = _record(path)
        except (OSError, EOFError, ValueError):
            return path.name  # damaged already (truncated by an earlier step)
        if how == "altered":
            for check in record["report"]["checks"]:
                check["outcome"] = "passed" if check["outcome"] != "passed" else "failed"
        else:
            record.pop("report_digest", None)
        path.write_bytes(gzip.compress(json.dumps(record).encode()))
        return path.name

    def upgrade_killed(self, candidate: str, entry: str, how: str, elsewhere: bool = False) -> Run:
        """An entry killed part-way (SIGKILL: no report, or a partial one) when it runs: the run finishes with
        CANNOT JUDGE, which cannot be compared with a run in which nothing was killed."""
        self.sessions.faults = sim.Faults(die={entry: how})
        return self.upgrade(candidate, elsewhere=elsewhere, compare=False)

    def upgrade_interrupted(self, candidate: str, after: int, bisect: bool = False, elsewhere: bool = False) -> Run:
        """Ctrl-C once `after` entries have started: nothing published (unless it had nothing left to run)."""
        self.sessions.faults = sim.Faults(interrupt_at=after)
        return self.upgrade(candidate, bisect, elsewhere=elsewhere)

    # --- what must hold after every step ---------------------------------------------------------------

    def check(self) -> None:
        for reports, before in self.moved:
            self._check_nothing_lost(reports, before)
        self.moved.clear()
        for reports in {self.reports_dir(False), self.reports_dir(True)}:
            self._check_last_judgement_stands(reports)
            self._check_never_reused_unobserved(reports)

    def _check_last_judgement_stands(self, reports: Path) -> None:
        """reports/ holds the last finished run's judgement: a run that could not start (a candidate that
        does not resolve) or was stopped never displaces it."""
        expected = self.published.get(reports, Published())
        assert judgement(reports, self.project) == expected.judgement, \
            f"{reports} no longer holds the last finished judgement (after `upgrade {' '.join(self.last.argv)}`)"
        files, now = expected.files, published_files(reports)
        changed = sorted(k for k in set(files) | set(now) if files.get(k) != now.get(k))
        assert not changed, f"{reports}: the last finished run's files changed or moved: {changed[:8]} " \
                            f"(after `upgrade {' '.join(self.last.argv)}`)"

    def _check_nothing_lost(self, reports: Path, before: Published) -> None:
        """A new finished run moves the last one's files to previous/: none of them is lost."""
        lost = sorted(name for name, sha in before.files.items() if not any(
            (reports / where / name).is_file() and hashlib.sha256((reports / where / name).read_bytes()).hexdigest()
            == sha for where in ("previous", ".")))
        assert not lost, f"files the last finished run wrote are gone from {reports} and its previous/: {lost[:8]}"

    def _check_never_reused_unobserved(self, reports: Path) -> None:
        """A report whose checks could not run is never kept, nor reused: neither a partial one nor one
        with modules that could not be collected."""
        for record in sorted((reports / report_cache.CACHE).glob(report_cache.RECORDS)):
            try:
                kept = _record(record)["report"]
            except (OSError, EOFError, ValueError, KeyError):
                continue  # damaged on purpose: never trusted (the next lookup removes it)
            assert kept["status"] == "complete", f"{record.name} keeps a {kept['status']} report for reuse"
        for path in sorted(reports.glob("*.json")):
            doc = json.loads(path.read_text())
            if isinstance(doc, dict) and doc.get("reused"):
                uncollected = [c["id"] for c in doc["checks"] if c["kind"] == "collection"]
                assert doc["status"] == "complete" and not uncollected, \
                    f"{path.name} reused a report whose checks could not run ({doc['status']}; {uncollected})"

