"""Every kind of finding a contract can produce, shown as what changed: a scalar, a small and a large array,
a tree of leaves, a fact, a layout, an error type and non-finite values. Recorded on one side, judged on
the other through the real plugin; in the text, the Markdown, the HTML and the JSON of the verdict, no
finding reads "None" (NaN and inf are written as such) and every number that moved has a size."""

from __future__ import annotations

import json
import re

import pytest

from harness.model import report_io
from harness.model.enums import Mark
from harness.verdict import compare, html, markdown, render

# SIDE=base records and runs the baseline; SIDE=cand is the candidate, every finding moved.
FINDINGS = '''
import os
import numpy as np
import pytest

pytestmark = pytest.mark.family("findings")
CAND = os.environ.get("SIDE") == "cand"


def test_scalar(check):
    check.golden("scalar", np.float32(1.5 if CAND else 1.0))


def test_small_array(check):
    check.golden("small", np.array([0.1, 0.2, 0.3 if CAND else 0.25], np.float32))


def test_large_array(check):
    values = np.linspace(0.0, 1.0, 32, dtype=np.float32)
    check.golden("large", values * np.float32(1.001) if CAND else values)


def test_tree(check):
    dense1 = np.linspace(0.5, 1.5, 32, dtype=np.float32)
    tree = {"dense1": {"b": dense1 + np.float32(0.25) if CAND else dense1, "w": np.ones((4, 4), np.float32)},
            "dense2": {"b": np.zeros(3, np.float32) + np.float32(0.5 if CAND else 0.0)}}
    check.golden_tree("final_params", tree)


def test_fact(check):
    check.golden_fact("kinds", {"mode": "keyword-only" if CAND else "positional or keyword"})


def test_layout(check):
    check.golden_tree("state", {"mu": np.zeros(3, np.float32 if CAND else np.float16)})


def test_state_layout(check):
    state = {"count": np.zeros((), np.int32), "mu": {"w": np.zeros((4, 4) if CAND else (4,), np.float32)}}
    check.layout("adam_state", state)


def test_error_type(check):
    def bad():
        raise (ValueError if CAND else TypeError)("incompatible shapes")
    check.error_contract("shapes", bad)


def test_non_finite(check):
    check.golden("nonfinite", np.array([np.nan, 1.0, np.inf] if not CAND else [1.0, 2.0, 3.0], np.float32))


def test_non_finite_large(check):
    values = np.arange(16, dtype=np.float32)
    check.golden("nonfinite_large", np.where(values == 3, np.nan, values) if CAND else values)
'''
KINDS = ("scalar", "small_array", "large_array", "tree", "fact", "layout", "state_layout", "error_type", "non_finite",
         "non_finite_large")


@pytest.fixture
def verdict(pytester, monkeypatch):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_findings=FINDINGS)
    pytester.mkdir("golden")

    def run(side: str, *args: str) -> dict:
        monkeypatch.setenv("SIDE", side)
        report = f"{side}.json"
        result = pytester.runpytest_subprocess("-q", "-p", "no:randomly", f"--harness-report={report}",
                                               "--harness-golden-dir=golden", *args)
        assert result.ret in (0, 1), result.stdout.str()
        return json.loads((pytester.path / report).read_text())

    run("base", "--harness-record-golden")
    base, cand = run("base"), run("cand")
    assert base["summary"]["passed"] == len(KINDS)
    return compare.judge(report_io.parse(base, "baseline"), [report_io.parse(cand, "candidate")])


def test_every_kind_of_finding_is_changed_and_shown_without_none(verdict):
    changes = {c.check_id.removeprefix("findings/test_"): c for c in verdict.entries[0].changes}
    assert all(changes[k].mark.changes_contract for k in KINDS), {k: changes[k].mark for k in KINDS}
    for kind in KINDS:
        change = changes[kind]
        shown = f"{change.before} → {change.after} {change.size}"
        assert "None" not in shown, (kind, shown)
        assert change.before and change.after and change.before != change.after, (kind, shown)
    for numeric in ("scalar", "small_array", "large_array", "tree"):
        assert "ulp" in changes[numeric].size and "rel err" in changes[numeric].size, changes[numeric].size
    for text in (render.text(verdict), markdown.markdown(verdict), html.page(verdict, []),
                 json.dumps(render.as_json(verdict))):
        assert not re.search(r"\bNone\b", text), re.search(r".{80}\bNone\b.{80}", text, re.S)


def test_a_changed_tree_names_its_worst_leaf_and_how_many_leaves_moved(verdict):
    tree = next(c for c in verdict.entries[0].changes if c.check_id == "findings/test_tree")
    assert tree.before.startswith(("final_params/dense1/b[", "final_params/dense2/b[")), tree.before
    assert "2 of 3 leaves" in tree.size, tree.size


def test_a_changed_layout_names_the_leaves_that_differ(verdict):
    changes = {c.check_id.removeprefix("findings/test_"): c for c in verdict.entries[0].changes}
    assert changes["state_layout"].mark == Mark.STATE_CHANGED
    assert "mu/w" in changes["state_layout"].before and "[4, 4]" in changes["state_layout"].after
    assert "float16" in changes["layout"].before and "float32" in changes["layout"].after


def test_non_finite_values_are_written_as_such(verdict):
    changes = {c.check_id.removeprefix("findings/test_"): c for c in verdict.entries[0].changes}
    assert "nan" in changes["non_finite"].before and "inf" in changes["non_finite"].before
    assert "nan" in changes["non_finite_large"].after.lower(), changes["non_finite_large"].after
