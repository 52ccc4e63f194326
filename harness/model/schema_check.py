"""A document checked against one of the package's JSON Schemas (draft 2020-12): the first violation, or None.

jsonschema-rs (compiled) checks an entry's ~4 MB report in milliseconds where the pure-Python jsonschema
takes about a second; a run checks each entry's report when it is written and when it is read, so this is
CPU every run pays. Both implement draft 2020-12, so they accept the same documents (tests/unit/model/
test_schema_check.py runs both on the same valid and broken reports). jsonschema stays the fallback: an
environment locked before the contract side listed jsonschema-rs still checks its report.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

from harness.errors import HarnessError


@dataclasses.dataclass(frozen=True)
class Violation:
    """Where a document breaks its schema ("checks/3", "(top level)") and how."""

    where: str
    message: str


@functools.lru_cache(maxsize=None)
def schema(path: Path) -> dict:
    return json.loads(path.read_text())


@functools.lru_cache(maxsize=None)
def _compiled(path: Path, implementation: str):
    if implementation == "jsonschema_rs":
        import jsonschema_rs

        return jsonschema_rs.Draft202012Validator(schema(path))
    import jsonschema

    return jsonschema.Draft202012Validator(schema(path))


def implementation() -> str:
    """The validator this environment has: "jsonschema_rs" when installed, else "jsonschema"."""
    for name in ("jsonschema_rs", "jsonschema"):
        try:
            __import__(name)
        except ImportError:
            continue
        return name
    raise HarnessError("neither jsonschema-rs nor jsonschema is installed, so no report can be checked; "
                       "install the harness's dependencies (pip install -r locks/runner.txt, or relock the entry).")


def _finite(_constant: str) -> float:
    return 0.0


def as_checked_by_rs(doc, text: str | None = None):
    """The document jsonschema-rs can check: its JSON values have no NaN or infinity (a report holds them:
    a non-finite error, a value that became NaN), so each is read as 0.0, a number as they are; what the
    schema says about numbers (their type, a minimum a NaN never fails) is checked the same."""
    text = json.dumps(doc) if text is None else text
    if "NaN" not in text and "Infinity" not in text:
        return doc if doc is not None else json.loads(text)
    return json.loads(text, parse_constant=_finite)


def first_violation(doc, schema_path: Path, using: str | None = None, text: str | None = None) -> Violation | None:
    """The violation a reader should see first (jsonschema's best match; jsonschema-rs's first error), or None.
    `text`: the document's JSON text when the caller has it (spares jsonschema-rs encoding it again)."""
    using = using or implementation()
    validator = _compiled(schema_path, using)
    if using == "jsonschema_rs":
        error = next(iter(validator.iter_errors(as_checked_by_rs(doc, text))), None)
        path = [] if error is None else list(error.instance_path)
    else:
        import jsonschema

        error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
        path = [] if error is None else list(error.absolute_path)
    if error is None:
        return None
    return Violation("/".join(str(p) for p in path) or "(top level)", error.message)
