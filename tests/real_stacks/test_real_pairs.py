"""Real release pairs whose change upstream's tracker records: the verdict must name the check that sees it.
Each judges the release that made the change against the one before it, from a fresh clone as README's first
command sets it up; the tool's golden values are the baseline's (optax 0.2.6), so a pair below it is judged
from 0.2.6 back to the older release: the change shows with its direction reversed. Minutes per pair on 2
cores: the nightly runs it (`nox -s sequences`), and so can anyone.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

from support.changelog_pairs import entries_between, unnamed


def _changes(clone: Path, candidate: str, summaries: dict | None = None) -> dict[str, dict]:
    done = subprocess.run([str(clone / ".venv/bin/nox"), "-s", "upgrade", "--", "--candidate", candidate], cwd=clone,
                          text=True, capture_output=True)
    print(f"$ nox -s upgrade -- --candidate '{candidate}': exit {done.returncode}\n{done.stdout[-3000:]}")
    assert done.returncode == 1, done.stderr[-3000:]
    summary = json.loads((clone / "reports" / "upgrade-summary.json").read_text())
    if summaries is not None:
        summaries[candidate] = summary
    candidate_entry = next(e for e in summary["entries"] if e["name"] == "candidate")
    return {c["check_id"]: c for c in candidate_entry["changes"]}


def test_sigmoid_focal_loss_nan_gradient_at_saturating_logits(clone):
    """optax#1267: jax.grad of sigmoid_focal_loss was NaN at saturating logits for gamma < 1 (gamma 0 and 0.5
    here); 0.2.6 computes log(1 - p_t) with a log-sum-exp and the gradient is finite (0.2.5's value there only
    moved from about 1e-13 to 0, within the loss's scale). The edges family's finiteness fact names it."""
    summaries: dict = {}
    changes = _changes(clone, "optax==0.2.5", summaries)
    focal = changes.get("edges/test_loss_gradient_at_edges[optax.sigmoid_focal_loss]")
    assert focal is not None and focal["mark"] == "value changed", focal
    assert "alphaNone/gamma0.5/labels_right/float32/finite" in json.dumps(focal), focal

    # The changelog ledger's entries of 0.2.6 (the release between this pair), each that a contract is said to
    # see and that changes behaviour: the verdict names one of its contracts (the direction reversed).
    matrix = tomllib.loads((clone / "harness" / "matrix.toml").read_text())
    entries = entries_between({**matrix["baseline"], "optax": "0.2.5"}, matrix["baseline"])
    missed = unnamed(summaries["optax==0.2.5"], entries)
    print(f"optax 0.2.6's ledger entries named by the verdict: {len(entries) - len(missed)} of {len(entries)}")
    assert not missed, "entries the ledger says a contract sees, not named by the verdict:\n" + "\n".join(missed)
