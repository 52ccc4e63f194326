"""Reports kept by content key (harness.stack.run.report_key): an entry whose inputs did not change since
a session of it completed its report (in a run that finished, or one stopped after that entry ended) is not
run again; its report is taken from that run, says so (Report.reused), and is judged like a fresh one.

One record a file, `<key>-<selection>.json.gz` in the reports directory's `.cache/`: the key's parts, the
digest of the report as it was validated, and the report, gzip-compressed (a main entry's report is ~4.8 MB
of JSON, its record ~0.5 MB: up to KEEP are kept), with its key alone beside it (`.key`): an entry's whole
report, or one part of it (a team's own contracts, the built-in ones: harness.stack.entry_side.parts), each
under its own key. A complete run of all checks also serves an
attribution entry limited to some of them (its checks, filtered). A record that is unreadable, altered
or of another schema is never trusted: the entry runs, and the record is replaced.

Before an entry runs: is its report already known? After: keep it for the next run. The upgrade asks here for each entry it is about to start (harness.stack.run.entry_runs). A reused report
is written where the entry's own would be, with a log that says where it came from, so everything
after (the verdict, attribution, publishing) treats it as this run's.

A report in parts (a team's own contracts and the built-in ones: harness.stack.entry_side.parts) is looked up
part by part, each under its own key: every part kept, the report is reused whole; some, those parts are
written where the session would write them, and its job names them (RunOptions.reused_parts): it runs only
the others, and joins them.

CI's entry jobs reuse a report as `nox -s upgrade` does. In the fan-out (harness.stack.commands.fanout) each
matrix row is its own `nox -s <entry>` job, with no upgrade process around it to look in the report cache;
the workflows restore the reports directory's `.cache/` with actions/cache
before the row runs (the newest the default branch or the pull request saved) and save it after. So the
entry's session looks there itself: when nothing that determines its report changed (the same content key),
its report is taken from the cache, marked reused with the run it came from, and the suite does not run;
otherwise it runs and its report is kept under its key for the next job.

Only a fan-out row does this (told a job, and not started by an upgrade, which looks up itself): a session
run by hand still runs.

One stack, one run: entries started together that install the same stack (equal report keys,
harness.stack.run.report_key, which leave the entry's name out) run once. After a bump is accepted the
baseline and the candidate pin one stack; running both side by side would only double the wait.

The second waits for the first instead of starting; when the first has finished (and its report was kept,
harness.stack.run.report_cache.keep), the second is served from it as a reused report whose origin is this
run (Report.reused.run_id), which the verdict says in one line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import json
import os
import shutil
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from harness import env_vars
from harness.atomic import atomic_write_bytes, atomic_write_text
from harness.errors import HarnessError
from harness.model import entry_job, report_io
from harness.model.codec import from_json, to_json
from harness.model.entry_job import JobOptions
from harness.model.enums import CheckKind, Outcome, ReportPart, Status
from harness.model.report import EntryInfo, Report, ReusedFrom, SCHEMA_VERSION, Summary
from harness.model.reuse import ReusedFrom
from harness.run_options import RunOptions
from harness.stack import boundary, project
from harness.stack.entry_side import entry as stack_entry, parts as report_parts
from harness.stack.pins.matrix import Entry
from harness.stack.run.report_key import PART_NAMES, ReportKey, digest, key_of_job
from harness.stack.run.run_directory import RunDirectory
from harness.stack.workspace import Workspace


class Named(Protocol):
    """An entry, or a run of one (harness.stack.run.entry_runs.Run): what a twin waits as."""

    @property
    def name(self) -> str: ...


@dataclasses.dataclass
class Twins:
    """The entries of one start of entries by report key: which one runs a stack, which wait for it."""

    running: dict[str, str] = dataclasses.field(default_factory=dict)  # key digest -> the entry running it
    waiting: dict[str, list[Named]] = dataclasses.field(default_factory=dict)  # running entry -> its twins
    served_by: dict[str, str] = dataclasses.field(default_factory=dict)  # a twin -> the entry it waited for

    def wait_for(self, entry: Named, key: ReportKey | None) -> str | None:
        """The running entry that installs the same stack as `entry` (which then waits for it), or None."""
        twin = self.running.get(key.digest) if key is not None else None
        if twin is not None:
            self.waiting.setdefault(twin, []).append(entry)
            self.served_by[entry.name] = twin
        return twin

    def started(self, name: str, key: ReportKey | None) -> None:
        if key is not None:
            self.running[key.digest] = name

    def finished(self, name: str) -> list[Named]:
        """The entries that waited for `name`: to be served from its report now (or run, if none was kept)."""
        self.running = {digest: n for digest, n in self.running.items() if n != name}
        return self.waiting.pop(name, [])


def of_this_run(report: Report) -> bool:
    """Whether a reused report was computed by an entry of the same run (one stack, one run)."""
    return report.reused is not None and report.run_id is not None and report.reused.run_id == report.run_id


def served_line(name: str, report: Report) -> str:
    """What the run prints for an entry served from another entry's report of the same run."""
    return f"{name} installs the same stack as {report.reused.entry}: ran once"


CACHE = ".cache"
KEEP = 48  # records kept, newest first: a few candidates' worth of entries and their attributions
SUFFIX = ".json.gz"
RECORDS = f"*{SUFFIX}"  # every record of a cache directory
EARLIER = "*.json"  # records an earlier version kept uncompressed: removed when the cache is pruned


@dataclasses.dataclass(frozen=True)
class Found:
    """What the cache holds for one key: a report to reuse, or why the entry runs."""

    report: Report | None
    why_not: str  # when report is None: "no earlier report", "changed since ...", "record ... unreadable"
    log: str = ""  # the session log of the run that computed it
    record: Path | None = None  # the record it came from (its checkpoints are kept beside it)


def directory(reports: Path) -> Path:
    """Beside the published reports (not a run's own directory: records outlive runs): Workspace.published."""
    return reports / CACHE


def _selection_tag(selection: list[str] | None) -> str:
    if selection is None:
        return "all"
    return hashlib.sha256("\n".join(sorted(selection)).encode()).hexdigest()[:12]


def _record_path(cache: Path, key: ReportKey, selection: list[str] | None) -> Path:
    return cache / f"{key.digest}-{_selection_tag(selection)}{SUFFIX}"


def _beside(record: Path, suffix: str) -> Path:
    """The file or folder of `record`'s name with another suffix."""
    return record.with_name(record.name.removesuffix(SUFFIX).removesuffix(".json") + suffix)


def _folder(record: Path) -> Path:
    """The checkpoints the entry wrote (harness.stack.entry_side.entry.checkpoints_folder), kept beside its
    record: a reused report comes with them, so a rollback can still read them."""
    return _beside(record, ".checkpoints")


def _key_file(record: Path) -> Path:
    """The record's entry and key alone, beside it: why an entry runs again is told from these without
    reading and decompressing every record (each holds a whole report: ~0.5 MB compressed for a main entry)."""
    return _beside(record, ".key")


def _entry_and_key(record: Path) -> dict:
    try:
        return json.loads(_key_file(record).read_text())
    except (OSError, ValueError):  # a record kept before key files: the record itself
        return _document(record)


def _document(record: Path) -> dict:
    """The record's JSON document (OSError, ValueError when it cannot be read: gzip's BadGzipFile is one)."""
    try:
        return json.loads(gzip.decompress(record.read_bytes()))
    except (EOFError, zlib.error) as exc:  # a truncated or damaged record
        raise ValueError(f"not a whole compressed record ({exc})") from None


def copy_folder(record: Path | None, target: Path) -> None:
    """The checkpoints kept with `record` into `target` (a reused entry's folder in the run); none kept: none."""
    if record is not None and _folder(record).is_dir():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(_folder(record), target)


def _read(path: Path) -> tuple[Report, str]:
    """The record's report, checked against the digest it was stored with (HarnessError if not the same),
    and the log of the run that computed it."""
    try:
        record = _document(path)
        text = json.dumps(record["report"], sort_keys=True)
        stored = record["report_digest"]
        log = str(record.get("log", ""))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(f"record {path.name} is unreadable ({exc})") from None
    if hashlib.sha256(text.encode()).hexdigest() != stored:
        raise HarnessError(f"record {path.name} was altered after it was written")
    # The very document validated when it was stored; its key covers the harness's model and schema (the
    # "harness" part), so a record of another schema is under another key. Checked again all the same:
    if record["report"].get("schema_version") != SCHEMA_VERSION:
        raise HarnessError(f"record {path.name} is of schema version {record['report'].get('schema_version')}")
    try:
        return from_json(Report, record["report"]), log
    except (KeyError, TypeError, ValueError) as exc:
        raise HarnessError(f"record {path.name} does not fit the report model ({exc})") from None


def _filtered(report: Report, selection: list[str]) -> Report:
    """A complete run's report limited to the checks an attribution entry asks for, as that run writes it."""
    wanted = set(selection)
    checks = [c for c in report.checks if c.id in wanted]
    ids = {c.id for c in checks}
    warnings = [dataclasses.replace(w, checks=[c for c in w.checks if c in ids]) for w in report.warnings]
    return dataclasses.replace(report, checks=checks, summary=Summary.of(checks), selection=list(selection),
                               warnings=[w for w in warnings if w.checks])


def lookup(cache: Path, key: ReportKey, selection: list[str] | None, entry_name: str,
           part: ReportPart = ReportPart.ALL) -> Found:
    """The report (or the part of one, `part`) to reuse for `key` (a run of all checks serves any selection),
    or why there is none."""
    problems = []
    for path in dict.fromkeys([_record_path(cache, key, None), _record_path(cache, key, selection)]):
        if not path.exists():
            continue
        try:
            report, log = _read(path)
        except HarnessError as exc:
            problems.append(str(exc))
            path.unlink(missing_ok=True)  # never trusted again
            _key_file(path).unlink(missing_ok=True)
            shutil.rmtree(_folder(path), ignore_errors=True)
            continue
        os.utime(path)  # recently used: kept by the pruning
        of_all = path == _record_path(cache, key, None)
        return Found(_filtered(report, selection) if of_all and selection is not None else report, "", log, path)
    if problems:
        return Found(None, "; ".join(problems) + ": recomputed")
    return Found(None, _why_changed(cache, key, entry_name, part))


def _why_changed(cache: Path, key: ReportKey, entry_name: str, part: ReportPart) -> str:
    """Which inputs changed since this entry's last kept report, or part of one (the newest record of its name
    and part)."""
    records = sorted(cache.glob(RECORDS), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in records:
        try:
            record = _entry_and_key(path)
        except (OSError, ValueError):
            continue
        if (record.get("entry") == entry_name and record.get("part", ReportPart.ALL) == part
                and isinstance(record.get("key"), dict)):
            changed = key.changed(ReportKey(record["key"]))
            if changed:
                return "changed since its last report: " + "; ".join(PART_NAMES[c] for c in changed)
            return "its last report was of other checks"
    return "no earlier report"


def reused(found: Report, info: EntryInfo, run_id: str | None, key: ReportKey) -> Report:
    """The kept report as this run's entry: its name and pins, this run's id, and where it came from."""
    origin = found.reused or ReusedFrom(found.run_id, found.finished_at, key.digest, found.entry.name)
    return dataclasses.replace(found, entry=info, run_id=run_id, reused=origin)


def store(cache: Path, key: ReportKey, report_file: Path, log_file: Path, folder: Path | None = None,
          load: Callable[[Path], Report] = report_io.load, part: ReportPart = ReportPart.ALL) -> bool:
    """Keep a finished entry's report (or the part `part` of one) under its key, and the checkpoints it wrote
    (`folder`); a partial, uncollected or reused one is not kept (False). `load`: how the report is read (a run
    reads each once, harness.stack.run.run_directory)."""
    try:
        report = load(report_file)
    except HarnessError:
        return False
    if report.status != Status.COMPLETE or report.reused is not None:
        return False
    # A module that could not be imported or collected (an import failure): its checks were never
    # observed. Served to a selection, it would be a probe that ran none of them.
    if any(c.kind == CheckKind.COLLECTION for c in report.checks):
        return False
    # A check that errored (out of memory, a full disk) or a run pytest could not finish as a suite is
    # not a result to replay: the next run computes it again.
    if report.exit_status not in (0, 1) or any(c.outcome == Outcome.ERROR for c in report.checks):
        return False
    doc = to_json(report)  # the document validated, as the typed model it was decoded to writes it
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
    try:
        log = log_file.read_text(errors="replace")
    except OSError:
        log = ""
    record = {"entry": report.entry.name, "part": str(part), "key": key.parts, "report_digest": digest, "log": log,
              "report": doc}
    try:
        cache.mkdir(parents=True, exist_ok=True)
        path = _record_path(cache, key, report.selection)
        shutil.rmtree(_folder(path), ignore_errors=True)
        if folder is not None and folder.is_dir():
            shutil.copytree(folder, _folder(path))
        atomic_write_bytes(path, gzip.compress((json.dumps(record) + "\n").encode(), compresslevel=6))
        atomic_write_text(_key_file(path), json.dumps({"entry": record["entry"], "part": record["part"],
                                                       "key": record["key"]}) + "\n")
    except OSError:
        return False  # a cache that cannot be written costs a rerun, never the verdict
    _prune(cache)
    return True


def _prune(cache: Path) -> None:
    records = sorted(cache.glob(RECORDS), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in [*records[KEEP:], *cache.glob(EARLIER)]:
        old.unlink(missing_ok=True)
        _key_file(old).unlink(missing_ok=True)
        shutil.rmtree(_folder(old), ignore_errors=True)


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One entry's look-up: its key (None: not computable before it runs; a report in parts: theirs together),
    the report reused if any, each part's key, and the part files written for its session to join."""

    key: ReportKey | None
    reused: Report | None = None
    why_ran: str = ""  # said when an earlier report existed but could not be reused
    keys: dict[ReportPart, ReportKey] = dataclasses.field(default_factory=dict)  # none: {ALL: key}
    reused_parts: tuple[Path, ...] = ()  # the part files reused: its session runs the other parts

    def parts_run(self) -> dict[ReportPart, ReportKey]:
        """The parts its session runs, with their keys as they were before it ran."""
        keys = self.keys or ({ReportPart.ALL: self.key} if self.key is not None else {})
        return {p: k for p, k in keys.items() if p not in {_part_of(f) for f in self.reused_parts}}


def _part_of(file: Path) -> ReportPart:
    return ReportPart(file.stem.rsplit(".", 1)[1])


def _selection(only: Path | None) -> list[str] | None:
    return [line.strip() for line in only.read_text().splitlines() if line.strip()] if only else None


def _key(ws: Workspace, entry: Entry, environ: dict[str, str], told: JobOptions,  # type: ignore[valid-type]
         part: ReportPart = ReportPart.ALL) -> ReportKey | None:
    try:
        return key_of_job(ws, entry, project.load(ws), environ, told, part)
    except (OSError, HarnessError):  # no lock yet (resolved inside its session), or no interpreter
        return None


def combined(keys: dict[ReportPart, ReportKey]) -> ReportKey:
    """The key of a report in parts: each input's digests over its parts (one part: its own key)."""
    if len(keys) == 1:
        return next(iter(keys.values()))
    names = dict.fromkeys(n for k in keys.values() for n in k.parts)
    return ReportKey({n: digest(json.dumps([k.parts.get(n) for k in keys.values()])) for n in names})


def attempt(ws: Workspace, cache: Path, entry: Entry, environ: dict[str, str],
            told: JobOptions,  # type: ignore[valid-type]
            report_file: Path, log_file: Path, fresh: bool, twin: str | None = None) -> Attempt:
    """Reuse the entry's report kept in `cache` when nothing that determines it changed (its session's
    environment `environ` and its job's options `told`: harness.stack.run.report_key): written to
    `report_file` as this run's entry, with a log saying where it came from; or, for a report in parts, the
    parts kept. `twin`: an entry of this run with the same key that has finished (harness.stack.run.report_cache);
    with --fresh, only its report is reused, never an earlier run's."""
    try:
        layout = report_parts.of_run(project.load(ws), told)
    except (OSError, HarnessError):
        return Attempt(None)
    keys = {part: _key(ws, entry, environ, told, part) for part in layout}
    if any(k is None for k in keys.values()):
        return Attempt(None)
    key = combined(keys)
    if fresh and twin is None:
        return Attempt(key, keys=keys)
    selection = _selection(told.only)
    found = {part: lookup(cache, keys[part], selection, entry.name, part) for part in layout}
    usable = {}
    for part, kept in found.items():
        if kept.report is not None:
            report = reused(kept.report, stack_entry.entry_info(entry), told.run_id, keys[part])
            if not fresh or of_this_run(report):
                usable[part] = (report, kept)
    why = _why_ran(found, usable)
    if not usable:
        return Attempt(key, why_ran=why, keys=keys)
    try:
        for part, (report, kept) in usable.items():
            file = report_parts.part_file(report_file, part)
            report_io.write(file, report, derived=True)  # validated when it was read from the cache
            RunDirectory.of(ws).loaded.wrote(file, report)  # the run reads it from here, never the file
            if part != ReportPart.OWN:  # the checkpoints the built-in contracts wrote
                copy_folder(kept.record, stack_entry.checkpoints_folder(report_file))
        if len(usable) < len(layout):
            return Attempt(key, why_ran=why, keys=keys,
                           reused_parts=tuple(report_parts.part_file(report_file, p) for p in usable))
        whole = _whole(ws, report_file, layout, entry, key, usable)
        log_file.write_text(_said(entry.name, whole, key) + "".join(
            f"\n\n{_origin(p, r)}:\n{kept.log}" if len(layout) > 1 else f"\n\n{kept.log}"
            for p, (r, kept) in usable.items()))
    except (OSError, HarnessError, ValueError) as exc:
        print(f"upgrade: {entry.name}: cannot reuse its report ({exc}); running it", file=sys.stderr)
        return Attempt(key, keys=keys)
    return Attempt(key, whole, keys=keys)


def _whole(ws: Workspace, report_file: Path, layout, entry: Entry, key: ReportKey, usable) -> Report:
    """Every part reused: the report they make, reused as a whole (from the newest part's run)."""
    if layout == (ReportPart.ALL,):
        return usable[ReportPart.ALL][0]
    run = RunDirectory.of(ws)
    whole = report_parts.assemble(report_file, layout, stack_entry.entry_info(entry), "", run.loaded)
    newest = max((r.reused for r, _ in usable.values()), key=lambda o: o.finished_at or "")
    whole = dataclasses.replace(whole, reused=ReusedFrom(newest.run_id, newest.finished_at, key.digest,
                                                         newest.entry))
    report_io.write(report_file, whole, derived=True)
    run.loaded.wrote(report_file, whole)
    return whole


def _said(name: str, report: Report, key: ReportKey) -> str:
    if of_this_run(report):
        return (f"{served_line(name, report)}: the report of entry {report.reused.entry} of this run "
                f"(key {key.digest}) is this entry's. That entry's log:")
    return (f"reused the report of entry {report.reused.entry} from {report.reused.when} (run "
            f"{report.reused.run_id}): nothing that determines it changed (key {key.digest}); `--fresh` runs "
            "it again. That run's log:")


def _origin(part: ReportPart, report: Report) -> str:
    return f"{report_parts.LABELS[part]}, from run {report.reused.run_id} ({report.reused.when})"


def _why_ran(found: dict[ReportPart, Found], usable: dict) -> str:
    """Why the entry (or which of its parts) runs, when an earlier report existed; which parts are reused."""
    if ReportPart.ALL in found:
        why = found[ReportPart.ALL].why_not
        return "" if usable or why == "no earlier report" else why
    said = []
    for part, kept in found.items():
        if part in usable:
            said.append(f"{_origin(part, usable[part][0])} reused")
        elif kept.why_not != "no earlier report":
            said.append(f"{report_parts.LABELS[part]}: {kept.why_not}")
    return "; ".join(said)


def keep(ws: Workspace, cache: Path, done: Attempt, entry: Entry, environ: dict[str, str],
         told: JobOptions, report_file: Path, log_file: Path) -> None:  # type: ignore[valid-type]
    """After the entry ran: keep each part it ran for the next run (a lock resolved in the session counts now).
    Only when its inputs are still those it started with: a contract or golden file edited while it ran
    would otherwise file the old results under the new inputs."""
    if done.reused is not None:
        return
    ran: dict = done.parts_run()
    if done.key is None:  # its key was not known before it ran: every part of its run, as it runs them now
        try:
            ran = dict.fromkeys(report_parts.of_run(project.load(ws), told))
        except (OSError, HarnessError):
            return
    for part, before in ran.items():
        after = _key(ws, entry, environ, told, part)
        if after is None or (before is not None and before != after):
            continue
        store(cache, after, report_parts.part_file(report_file, part), log_file,
                           stack_entry.checkpoints_folder(report_file) if part != ReportPart.OWN else None,
                           load=RunDirectory.of(ws).load, part=part)  # the run's first read of the report


def is_fanout_row(environ) -> bool:
    """A CI matrix row's session: told its job (HARNESS_JOB) by the workflow, not by an upgrade (which
    names itself in HARNESS_RUN_PID, harness.stack.run.lifeline)."""
    return bool(environ.get(env_vars.JOB)) and not environ.get(env_vars.RUN_PID)


@contextlib.contextmanager
def reused_or_run(ws: Workspace, entry: Entry, environ=None, say=print):
    """Around a fan-out row's run: yields the workspace to run the entry in, or None when its report was reused
    whole (the caller then runs nothing). A report in parts some of which were kept: those parts are written
    where the session would write them, and the workspace names them (RunOptions.reused_parts): the session
    runs the others. After a run, each part it ran is kept in the cache. Outside a fan-out row: `ws`, and nothing
    looked up or kept."""
    environ = dict(boundary.variables() if environ is None else environ)
    if not is_fanout_row(environ):
        yield ws
        return
    told = entry_job.options_of(ws.options)  # the row's job, read with its workspace
    stem = told.report_name or entry.name
    cache = directory(ws.published)
    run = RunDirectory.of(ws)
    report_file, log_file = run.report_file(stem), run.log(stem)
    looked = attempt(ws, cache, entry, environ, told, report_file, log_file, fresh=False)
    if looked.reused is not None:
        origin = looked.reused.reused
        say(f"{entry.name}: reused the report of run {origin.run_id} (entry {origin.entry}, {origin.when}): "
            f"nothing that determines it changed (key {looked.key.digest}); the suite is not run")
        yield None
        return
    if looked.why_ran:
        say(f"{entry.name}: runs ({looked.why_ran})")
    try:
        yield ws.with_options(RunOptions(reused_parts=looked.reused_parts)) if looked.reused_parts else ws
    finally:  # a run whose checks failed (the session then fails) is a result too: kept
        keep(ws, cache, looked, entry, environ, told, report_file, log_file)
