"""Real reports from the harness before the typed model (schema 1), kept as fixtures.

Written by `nox -s upgrade` on the default matrix (baseline jax 0.11.2 / optax 0.2.6, candidate jax
0.12.0.1 / optax 0.2.8, and the single-package entries), with verdict.json the verdict that harness
gave on them. Schema 2 records `agree` comparisons as kind "equivalence" (schema 1 called them "reference") and
keeps every comparison's observed values (schema 1 kept none: `values` is null) and a failing
property's reproduce_failure arguments (null here: nothing failed); `as_schema_2`
makes those two changes, so the new model can read them.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

FIXTURES = Path(__file__).with_name("fixtures") / "main-reports"
ENTRIES = ("baseline", "candidate", "jax-only", "optax-only")


def as_schema_2(doc: dict) -> dict:
    doc = dict(doc, schema_version=2)
    for check in doc["checks"]:
        check["reproduce_failure"] = None
        for comparison in check["comparisons"]:
            if comparison["label"].startswith("equivalence:"):
                comparison["kind"] = "equivalence"
            comparison["values"] = None
    return doc


def load(name: str) -> dict:
    """One entry's report, as schema 2 JSON."""
    with gzip.open(FIXTURES / f"{name}.json.gz", "rt") as fh:
        return as_schema_2(json.load(fh))


def old_verdict() -> dict:
    """The verdict the schema-1 harness wrote for these reports (reports/upgrade-summary.json)."""
    return json.loads((FIXTURES / "verdict.json").read_text())
