"""Real reports of the default matrix, kept as fixtures, and what the harness said before them.

fixtures/upgrade-reports/: reports/<entry>.json of `nox -s upgrade` on the default matrix (baseline
jax 0.11.2 / optax 0.2.6; candidate jax 0.12.0.1 / optax 0.2.8; jax-only; optax-only), schema 3.
Regenerate after a change of the report format: run `nox -s upgrade`, then
`for e in baseline candidate jax-only optax-only; do gzip -9 -c reports/$e.json >
tests/fixtures/upgrade-reports/$e.json.gz; done`.

fixtures/before-typed-model/: the verdict the harness gave on the same matrix before the typed model
(reports/upgrade-summary.json, 21 contracts changed, all from optax) and the ids of the checks it
had: the independent expectation the new verdicts are held to.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ENTRIES = ("baseline", "candidate", "jax-only", "optax-only")


def load(name: str) -> dict:
    """One entry's report, as JSON."""
    with gzip.open(FIXTURES / "upgrade-reports" / f"{name}.json.gz", "rt") as fh:
        return json.load(fh)


def verdict_before() -> dict:
    """The verdict of the harness before the typed model on the same matrix."""
    return json.loads((FIXTURES / "before-typed-model" / "verdict.json").read_text())


def check_ids_before() -> set[str]:
    return set((FIXTURES / "before-typed-model" / "check-ids.txt").read_text().split())
