"""The JSON report: its schema (report.schema.json beside this file), writing, reading, validating.

Reports are written atomically, so a reader (the comparison, a reviewer) never sees half a file.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
from pathlib import Path

from harness import __version__
from harness.atomic import atomic_write_text
from harness.errors import HarnessError

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


class ReportProblem(HarnessError):
    """A report is missing, unreadable, invalid, or from an incompatible harness."""


@functools.lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def validate(doc: dict, source: str = "report") -> None:
    """Raise ReportProblem naming the first schema violation."""
    import jsonschema

    if isinstance(doc, dict) and doc.get("schema_version") != SCHEMA_VERSION:
        raise ReportProblem(
            f"{source} has schema_version {doc.get('schema_version')!r} (harness "
            f"{doc.get('harness_version', 'unknown')}); this harness ({__version__}) reads version "
            f"{SCHEMA_VERSION}. Re-run the sessions with this harness to compare like with like."
        )
    validator = jsonschema.Draft202012Validator(schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ReportProblem(
            f"{source} does not match the report schema at {where}: {error.message}. If it was written by an "
            "earlier harness, run its session again (`nox -s <entry>`) and compare the new report."
        )


def load(path: str | Path) -> dict:
    """Read and validate a report, or raise ReportProblem saying what is wrong and what to do."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ReportProblem(f"report {path} does not exist; run its session first (`nox -s <entry>`).") from None
    except (OSError, ValueError) as exc:
        raise ReportProblem(f"report {path} is unreadable ({exc}); run its session again.") from None
    validate(doc, f"report {path}")
    return doc


def write(path: str | Path, doc: dict) -> None:
    path = Path(path)
    try:
        atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=False, default=_default) + "\n")
    except OSError as exc:
        raise ReportProblem(
            f"cannot write report {path} ({exc.strerror or exc}); make {path.parent} writable "
            "or choose another directory with --harness-report / HARNESS_REPORT."
        ) from None


def _default(obj):
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:
        pass
    return str(obj)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def empty_environment() -> dict:
    versions = dict.fromkeys(["python", "jax", "jaxlib", "optax", "flax", "numpy", "ml_dtypes", "hypothesis"])
    return {"versions": versions, "packages": {}, "machine": {}, "jax": {"backend": None}}


def unresolvable(entry: dict, problem: str, started_at: str) -> dict:
    """The report of an entry whose stack could not be installed: it says so, and why."""
    from harness.contract import tolerances

    return {
        "schema_version": SCHEMA_VERSION,
        "harness_version": __version__,
        "entry": entry,
        "status": "unresolvable",
        "exit_status": None,
        "started_at": started_at,
        "finished_at": now(),
        "environment": empty_environment(),
        "hypothesis": {"version": None, "profile": None, "derandomize": None, "seed": None,
                       "max_examples": None, "examples_run": 0},
        "tolerances": tolerances.table(),
        "checks": [],
        "warnings": [],
        "timings": {"total_s": 0.0},
        "performance": {},
        "summary": {"total": 0, "passed": 0, "failed": 0, "error": 0, "skipped": 0, "by_family": {}},
        "problem": problem,
        "selection": None,
    }
