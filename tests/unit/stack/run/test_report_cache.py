"""Reports kept by content key: reused as this run's entry (its name, pins and run id, and where it came
from), a complete run serving an attribution entry's selection, and a record that is altered, unreadable
or of another schema never trusted."""

from __future__ import annotations

import dataclasses
import gzip
import json

import pytest

from support import upgrade_reports as main_reports
from harness.model import report_io
from harness.model.codec import from_json
from harness.model.entry_job import JobOptions
from harness.model.enums import CheckKind, Outcome, Status
from harness.model.report import EntryInfo, Report, Summary
from harness.stack.run import report_cache
from harness.stack import paths
from harness.stack.run.report_key import ReportKey
from harness.stack.workspace import Workspace

PARTS = {"lock": "l1", "python": "p", "harness": "h", "contracts": "", "suite": "s", "golden": "g1",
         "hypothesis": "ci", "environment": "e", "machine": "m", "replay": ""}


@pytest.fixture
def reports(tmp_path):
    (tmp_path / "reports").mkdir()
    return tmp_path / "reports"


@pytest.fixture(scope="module")
def candidate() -> Report:
    """The real candidate report, cut to its changed checks and a few others (quicker to validate)."""
    full = from_json(Report, main_reports.load("candidate"))
    checks = full.checks[:20] + [c for c in full.checks[20:] if c.outcome != "passed"]
    kept = {c.id for c in checks}
    warnings = [dataclasses.replace(w, checks=[c for c in w.checks if c in kept]) for w in full.warnings]
    return dataclasses.replace(full, checks=checks, summary=Summary.of(checks), warnings=[w for w in warnings if w.checks])


def _checkout(reports) -> Workspace:
    return Workspace.of(paths.SOURCE, reports)


def _lookup(reports, key: ReportKey, selection: list[str] | None, entry_name: str) -> report_cache.Found:
    return report_cache.lookup(reports / report_cache.CACHE, key, selection, entry_name)


def _read_record(path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _stored(reports, report: Report, parts=PARTS, name="candidate") -> ReportKey:
    key = ReportKey(dict(parts))
    report_io.write(reports / f"{name}.json", report)
    (reports / f"{name}.log").write_text("344 passed\n")
    assert report_cache.store(reports / report_cache.CACHE, key, reports / f"{name}.json", reports / f"{name}.log")
    return key


def test_a_kept_report_is_found_under_its_key_and_becomes_this_runs_entry(reports, candidate):
    key = _stored(reports, candidate)
    found = _lookup(reports, key, None, "candidate")
    assert found.report == candidate and found.log == "344 passed\n"
    info = EntryInfo("jax-only", "3.12", {"jax": "0.12.0.1"}, locked=False)
    mine = report_cache.reused(found.report, info, "run-2", key)
    assert (mine.entry, mine.run_id) == (info, "run-2")
    assert (mine.reused.run_id, mine.reused.finished_at, mine.reused.entry) == (
        candidate.run_id, candidate.finished_at, "candidate")
    assert mine.checks == candidate.checks


def test_another_key_finds_nothing_and_says_which_inputs_changed(reports, candidate):
    _stored(reports, candidate)
    found = _lookup(reports, ReportKey({**PARTS, "golden": "g2", "lock": "l2"}), None, "candidate")
    assert found.report is None
    assert found.why_not == "changed since its last report: the resolved lock (every package and version); the golden files"
    assert _lookup(reports, ReportKey({**PARTS, "lock": "l3"}), None, "baseline").why_not == "no earlier report"


def test_a_complete_run_serves_a_selection_with_just_those_checks(reports, candidate):
    key = _stored(reports, candidate)
    wanted = [c.id for c in candidate.checks if c.outcome != "passed"][:3] + ["family/test_gone"]
    found = _lookup(reports, key, wanted, "jax-only").report
    assert [c.id for c in found.checks] == [c.id for c in candidate.checks if c.id in wanted]
    assert found.selection == wanted and found.summary.total == 3
    assert all(set(w.checks) <= set(wanted) and w.checks for w in found.warnings)


def test_a_selection_run_serves_the_same_selection_only(reports, candidate):
    wanted = [c.id for c in candidate.checks][:5]
    selected = dataclasses.replace(candidate, checks=candidate.checks[:5], selection=wanted)
    key = _stored(reports, selected)
    assert _lookup(reports, key, wanted, "jax-only").report.selection == wanted
    assert _lookup(reports, key, None, "jax-only").report is None
    assert _lookup(reports, key, wanted[:2], "jax-only").report is None


@pytest.mark.parametrize("damage, said", [
    (lambda record: record["report"]["checks"][0].update(outcome="passed" if record["report"]["checks"][0][
        "outcome"] != "passed" else "failed"), "altered after it was written"),
    (lambda record: record.pop("report_digest"), "unreadable"),
], ids=["a-value-altered", "digest-missing"])
def test_a_damaged_record_is_recomputed_never_trusted(reports, candidate, damage, said):
    key = _stored(reports, candidate)
    [path] = (reports / report_cache.CACHE).glob(report_cache.RECORDS)
    record = _read_record(path)
    damage(record)
    path.write_bytes(gzip.compress(json.dumps(record).encode()))
    found = _lookup(reports, key, None, "candidate")
    assert found.report is None and said in found.why_not and "recomputed" in found.why_not
    assert not path.exists()  # replaced by the entry's next run, never read again


def test_a_truncated_record_is_recomputed(reports, candidate):
    key = _stored(reports, candidate)
    [path] = (reports / report_cache.CACHE).glob(report_cache.RECORDS)
    path.write_bytes(path.read_bytes()[:1000])
    assert "unreadable" in _lookup(reports, key, None, "candidate").why_not


def test_a_record_of_another_schema_is_recomputed(reports, candidate):
    import hashlib

    key = _stored(reports, candidate)
    [path] = (reports / report_cache.CACHE).glob(report_cache.RECORDS)
    record = _read_record(path)
    record["report"]["schema_version"] = 2
    record["report_digest"] = hashlib.sha256(json.dumps(record["report"], sort_keys=True).encode()).hexdigest()
    path.write_bytes(gzip.compress(json.dumps(record).encode()))
    assert "schema version 2" in _lookup(reports, key, None, "candidate").why_not


def test_partial_and_reused_reports_are_not_kept(reports, candidate):
    key = ReportKey(PARTS)
    report_io.write(reports / "partial.json", dataclasses.replace(candidate, status=Status.PARTIAL))
    assert not report_cache.store(reports / report_cache.CACHE, key, reports / "partial.json", reports / "none.log")
    again = report_cache.reused(candidate, candidate.entry, "run-2", key)
    report_io.write(reports / "again.json", again)
    assert not report_cache.store(reports / report_cache.CACHE, key, reports / "again.json", reports / "none.log")
    assert not list((reports / report_cache.CACHE).glob(report_cache.RECORDS))


def test_the_oldest_records_beyond_the_limit_are_removed(reports, candidate, monkeypatch):
    monkeypatch.setattr(report_cache, "KEEP", 2)
    small = dataclasses.replace(candidate, checks=candidate.checks[:2])
    for lock in ("a", "b", "c"):
        _stored(reports, small, {**PARTS, "lock": lock})
    assert len(list((reports / report_cache.CACHE).glob(report_cache.RECORDS))) == 2
    assert len(list((reports / report_cache.CACHE).glob("*.key"))) == 2  # their key files go with them
    assert _lookup(reports, ReportKey({**PARTS, "lock": "a"}), None, "candidate").report is None


def test_a_record_is_kept_compressed_and_reads_back_whole(reports):
    """Found: a team's reports/ at 110 MB, most of it the cache's records (a whole report each, ~4.8 MB for a
    main entry, up to 48 kept). A record is kept gzip-compressed: the real candidate report's record is less
    than a fifth of the report's size, and the report it gives back is the one stored."""
    full = from_json(Report, main_reports.load("candidate"))
    key = _stored(reports, full)
    [record] = (reports / report_cache.CACHE).glob(report_cache.RECORDS)
    assert record.stat().st_size * 5 < (reports / "candidate.json").stat().st_size
    found = _lookup(reports, key, None, "candidate")
    assert found.report == full and found.log == "344 passed\n"


def test_records_an_earlier_version_kept_uncompressed_are_removed(reports, candidate):
    """Their keys hold another harness: never found again, and no longer kept beside the new ones."""
    cache = reports / report_cache.CACHE
    cache.mkdir()
    for name in ("0123abcd-all", "4567efab-dcebefdbd2f9"):
        (cache / f"{name}.json").write_text("{}\n")
        (cache / f"{name}.key").write_text("{}\n")
        (cache / f"{name}.checkpoints").mkdir()
    _stored(reports, candidate)
    assert sorted(p.suffix for p in cache.iterdir()) == [".gz", ".key"]


def test_why_an_entry_runs_again_is_told_from_the_key_files_without_reading_the_reports(reports, candidate):
    """Each record holds a whole report (~4 MB for a main entry), and up to 48 are kept: telling which inputs
    changed reads only the small key file beside each."""
    _stored(reports, candidate)
    (record,) = (reports / report_cache.CACHE).glob(report_cache.RECORDS)
    record.write_bytes(gzip.compress(b"{ not read"))  # were the record read, it would be skipped as unreadable
    found = _lookup(reports, ReportKey({**PARTS, "golden": "g2"}), None, "candidate")
    assert found.why_not == "changed since its last report: the golden files"


def test_a_record_kept_before_key_files_still_tells_why(reports, candidate):
    _stored(reports, candidate)
    (key_file,) = (reports / report_cache.CACHE).glob("*.key")
    key_file.unlink()
    found = _lookup(reports, ReportKey({**PARTS, "golden": "g2"}), None, "candidate")
    assert found.why_not == "changed since its last report: the golden files"


def test_fresh_never_reuses(reports, candidate, monkeypatch):
    key = _stored(reports, candidate)
    monkeypatch.setattr(report_cache, "_key", lambda *args: key)
    entry = type("E", (), {"name": "candidate"})()
    done = report_cache.attempt(_checkout(reports), reports / report_cache.CACHE, entry, {}, JobOptions(seed=0),
                               reports / "c.json", reports / "c.log", fresh=True)
    assert done.reused is None and not (reports / "c.json").exists()


def test_a_reused_report_is_written_with_a_log_that_says_where_it_came_from(reports, candidate, monkeypatch):
    from harness.stack.pins.matrix import Entry

    key = _stored(reports, candidate)
    monkeypatch.setattr(report_cache, "_key", lambda *args: key)
    entry = Entry("candidate", {"jax": "0.12.0.1"}, "")
    done = report_cache.attempt(_checkout(reports), reports / report_cache.CACHE, entry, {},
                               JobOptions(run_id="run-2", seed=0), reports / "c.json", reports / "c.log", fresh=False)
    written = report_io.load(reports / "c.json")
    assert written == done.reused and written.run_id == "run-2" and written.reused.key == key.digest
    assert "reused the report of entry candidate" in (reports / "c.log").read_text()
    assert (reports / "c.log").read_text().endswith("344 passed\n")


def test_the_verdict_says_which_reports_were_reused_and_from_when(candidate):
    from harness.model.report import ReusedFrom
    from harness.verdict import compare, markdown, render

    base = from_json(Report, main_reports.load("baseline"))
    origin = ReusedFrom("20261202T004000-1-abcdef", "2026-12-02T00:40:12+00:00", "k" * 24, "candidate")
    reused_base = dataclasses.replace(base, reused=dataclasses.replace(origin, entry="baseline"))
    as_jax_only = dataclasses.replace(candidate, entry=dataclasses.replace(candidate.entry, name="jax-only"),
                                      reused=origin)
    verdict = compare.judge(reused_base, [candidate, as_jax_only])
    text = render.text(verdict)
    assert "[complete, reused from 2026-12-02 00:40 UTC]" in text  # the baseline's row
    assert "[complete, reused from 2026-12-02 00:40 UTC (entry candidate)]" in text  # computed by another entry
    rows = [line for line in text.splitlines() if line.startswith("  candidate ")]
    assert rows and "reused" not in rows[0]  # the candidate ran in this run
    assert "reused from 2026-12-02 00:40 UTC (entry candidate)" in markdown.markdown(verdict)
    summary = render.as_json(verdict)
    assert summary["baseline"]["reused"]["finished_at"] == "2026-12-02T00:40:12+00:00"
    assert [e["reused"] and e["reused"]["entry"] for e in summary["entries"]] == [None, "candidate"]


@pytest.mark.parametrize("change", [
    lambda r: dataclasses.replace(r, checks=[dataclasses.replace(r.checks[0], outcome=Outcome.ERROR), *r.checks[1:]]),
    lambda r: dataclasses.replace(r, exit_status=3),
], ids=["a-check-errored", "pytest-could-not-finish"])
def test_a_run_that_did_not_give_results_is_not_kept(reports, candidate, change):
    """A check that errored (out of memory, a full disk) is computed again, never replayed from the cache."""
    report_io.write(reports / "candidate.json", change(candidate))
    assert not report_cache.store(reports / report_cache.CACHE, ReportKey(PARTS), reports / "candidate.json",
                                  reports / "candidate.log")


@pytest.mark.parametrize("status", [Status.UNCOLLECTED, Status.COMPLETE])
def test_a_run_some_of_whose_modules_could_not_be_collected_is_not_kept(reports, candidate, status):
    """An import failure's report (its checks never ran) would be served, filtered to a bisection's
    selection, as a probe with none of the checks asked for: it is computed again instead. Refused by its
    status, and by its collection checks even under a status that says complete (an older plugin's)."""
    failed = dataclasses.replace(candidate.checks[0], id="accumulation/collection", kind=CheckKind.COLLECTION,
                                 outcome=Outcome.FAILED, nodeid="harness/builtin/test_accumulation.py")
    checks = [failed, *candidate.checks[1:]]
    report_io.write(reports / "candidate.json", dataclasses.replace(candidate, status=status, checks=checks,
                                                                    summary=Summary.of(checks)))
    assert not report_cache.store(reports / report_cache.CACHE, ReportKey(PARTS), reports / "candidate.json",
                                  reports / "candidate.log")


def test_a_run_whose_inputs_changed_while_it_ran_is_not_kept(reports, candidate, monkeypatch):
    from harness.stack.pins.matrix import Entry

    before, after = ReportKey(PARTS), ReportKey({**PARTS, "golden": "edited during the run"})
    monkeypatch.setattr(report_cache, "_key", lambda *args: after)
    report_io.write(reports / "candidate.json", candidate)
    cache = reports / report_cache.CACHE
    report_cache.keep(_checkout(reports), cache, report_cache.Attempt(before), Entry("candidate", {}, ""), {}, JobOptions(),
                     reports / "candidate.json", reports / "candidate.log")
    assert not list(cache.glob(report_cache.RECORDS))
    report_cache.keep(_checkout(reports), cache, report_cache.Attempt(after), Entry("candidate", {}, ""), {}, JobOptions(),
                     reports / "candidate.json", reports / "candidate.log")
    assert len(list(cache.glob(report_cache.RECORDS))) == 1
