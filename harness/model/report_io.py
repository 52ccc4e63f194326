"""Reading and writing report files: validated against the published schema, then typed.

Reports are written atomically, so a reader (the comparison, a reviewer) never sees half a file.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import __version__
from harness.atomic import atomic_write_text
from harness.errors import HarnessError
from harness.model import schema_check
from harness.model.codec import from_json, to_json
from harness.model.report import SCHEMA_VERSION, Report

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


class ReportProblem(HarnessError):
    """A report is missing, unreadable, invalid, or from an incompatible harness."""


def schema() -> dict:
    return schema_check.schema(SCHEMA_PATH)


def validate(doc: dict, source: str = "report", text: str | None = None) -> None:
    """Raise ReportProblem naming the first schema violation (or the other schema version). `text`: the
    document's JSON text, when the caller has it."""
    if isinstance(doc, dict) and doc.get("schema_version") != SCHEMA_VERSION:
        raise ReportProblem(
            f"{source} has schema_version {doc.get('schema_version')!r} (harness "
            f"{doc.get('harness_version', 'unknown')}); this harness ({__version__}) reads version "
            f"{SCHEMA_VERSION}. Re-run the sessions with this harness to compare like with like."
        )
    violation = schema_check.first_violation(doc, SCHEMA_PATH, text=text)
    if violation is not None:
        raise ReportProblem(
            f"{source} does not match the report schema at {violation.where}: {violation.message}. If it was "
            "written by an earlier harness, run its session again (`nox -s <entry>`) and compare the new report."
        )


def parse(doc: dict, source: str = "report", text: str | None = None) -> Report:
    """A validated report document as the typed model."""
    validate(doc, source, text)
    return from_json(Report, doc)


def load(path: str | Path) -> Report:
    """Read, validate and type a report, or raise ReportProblem saying what is wrong and what to do. Each call
    reads the file: a run that reads a report in several steps holds it (harness.verdict.run_reports)."""
    path = Path(path)
    try:
        text = path.read_text()
        doc = json.loads(text)
    except FileNotFoundError:
        raise ReportProblem(f"report {path} does not exist; run its session first (`nox -s <entry>`).") from None
    except (OSError, ValueError) as exc:
        raise ReportProblem(f"report {path} is unreadable ({exc}); run its session again.") from None
    return parse(doc, f"report {path}", text)


def write(path: str | Path, report: Report, *, check: bool = True, derived: bool = False) -> None:
    """Write a report atomically; `check` validates it first (progress writes, many a run, skip that). A report
    `derived` by the typed model from one just validated (a reused report) is written unchecked, as valid."""
    path = Path(path)
    doc = to_json(report)
    try:
        text = json.dumps(doc, indent=1) + "\n"
    except (TypeError, ValueError) as exc:  # a value of a check that JSON cannot hold: a harness fault
        raise ReportProblem(f"cannot write report {path}: a recorded value is not JSON ({exc}); "
                            "this is a harness fault, please report it with the check that recorded it.") from None
    if check and not derived:
        validate(doc, "the report being written", text)
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise ReportProblem(
            f"cannot write report {path} ({exc.strerror or exc}); make {path.parent} writable "
            "or choose another directory with --harness-report / HARNESS_REPORT."
        ) from None
