"""No comparison allows more than 64 ulps or 1% of its value without a named reason: a 16-bit row
of the policy, a per-check override, or a cancellation scale given with its why.

Checked on a real baseline report of the whole contract suite: the one `nox -s tests` writes
(HARNESS_BASELINE_REPORT), or, run alone, one this test makes by running the suite.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.model.enums import ComparisonKind

ROOT = Path(__file__).resolve().parents[2]
MAX_ULPS, MAX_REL = 64, 0.01
TOLERATED = (ComparisonKind.GOLDEN, ComparisonKind.REFERENCE, ComparisonKind.EQUIVALENCE, ComparisonKind.BOUND)


def unexplained(doc: dict) -> list[str]:
    """Comparisons whose allowance exceeds 64 ulps or 1% and that name no reason."""
    found = []
    for check in doc["checks"]:
        for c in check["comparisons"]:
            if c["kind"] not in TOLERATED or c.get("override"):
                continue
            if (c.get("allowed_ulps") or 0) > MAX_ULPS or (c.get("allowed_rel") or 0) > MAX_REL:
                found.append(f"{check['id']} {c['label']}: {c['allowed_ulps']:.3g} ulp, {c['allowed_rel']:.3g} rel")
    return found


@pytest.fixture(scope="module")
def baseline_report(tmp_path_factory):
    given = os.environ.get("HARNESS_BASELINE_REPORT")
    if given:
        return json.loads(Path(given).read_text())
    pytest.importorskip("optax")
    path = tmp_path_factory.mktemp("allowances") / "baseline.json"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", f"--harness-report={path}",
                    "harness/builtin"], cwd=ROOT, env=dict(os.environ, HARNESS_PROFILE="ci"), capture_output=True,
                   check=False)
    return json.loads(path.read_text())


def test_every_allowance_over_64_ulps_or_1_percent_is_named(baseline_report):
    assert baseline_report["summary"]["total"] > 300 and baseline_report["summary"]["failed"] == 0
    measured = [c for check in baseline_report["checks"] for c in check["comparisons"] if c["kind"] in TOLERATED]
    in_ulps = [c for c in measured if c["tolerance"] != "exact" and c["values"] is not None]
    # A comparison of an empty array (a loss on an empty batch: edges/test_loss_gradient_at_edges) holds its shape
    # and dtype, and no element to allow anything: it states no allowance.
    assert in_ulps and all(c["allowed_ulps"] is not None and c["allowed_rel"] is not None
                           for c in in_ulps if c["size"]), [c["label"] for c in in_ulps if c["allowed_ulps"] is None][:5]
    assert all(c["allowed_ulps"] is None for c in in_ulps if not c["size"])
    assert unexplained(baseline_report) == []


def test_an_unnamed_loose_allowance_is_caught():
    doc = {"checks": [{"id": "demo/x", "comparisons": [
        {"kind": "reference", "label": "reference:x", "allowed_ulps": 16424.0, "allowed_rel": 0.002, "override": None},
        {"kind": "golden", "label": "golden:y", "allowed_ulps": 2.0, "allowed_rel": 0.0156, "override": None},
        {"kind": "reference", "label": "reference:z", "allowed_ulps": 900.0, "allowed_rel": 0.5,
         "override": "1 + cos cancels near the end of the decay"},
    ]}]}
    assert unexplained(doc) == ["demo/x reference:x: 1.64e+04 ulp, 0.002 rel", "demo/x golden:y: 2 ulp, 0.0156 rel"]
