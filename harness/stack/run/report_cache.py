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
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import os
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

from harness.atomic import atomic_write_bytes, atomic_write_text
from harness.errors import HarnessError
from harness.model import report_io
from harness.model.codec import from_json, to_json
from harness.model.enums import CheckKind, Outcome, ReportPart, Status
from harness.model.report import SCHEMA_VERSION, EntryInfo, Report, ReusedFrom, Summary
from harness.stack.run.report_key import PART_NAMES, ReportKey

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
