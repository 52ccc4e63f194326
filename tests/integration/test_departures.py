"""A statement a release breaks, recorded as that release's behaviour (harness.contract.departures): a made-up
library whose release (FAKE_RELEASE) moves its update off the documented formula, and a family whose checks
state the formula. Recording without accepting refuses it, naming it; accepting records the departure; the next
run passes against it and the verdict says so; a release back on the formula is a change (an improvement);
a property that fails is never recorded."""

from __future__ import annotations

import json

import pytest

from harness.model import departure, report_io
from harness.model.enums import ComparisonKind, Mark
from harness.verdict import compare, markdown, render

# The library: release 1 follows the documented update (g / 2); release 2 adds a quarter and returns NaN for a
# zero gradient; release 3 goes back to the formula; release 4 departs otherwise (NaN there too, adds a half).
LIBRARY = '''
import os
import numpy as np


def update(g):
    release = os.environ.get("FAKE_RELEASE", "1")
    u = g * np.float32(0.5)
    if release in ("2", "4"):
        u = np.where(g == 0, np.float32("nan"), u + np.float32(0.25 if release == "2" else 0.5))
    return u.astype(np.float32)
'''

CONTRACTS = '''
import numpy as np
import pytest
from hypothesis import given, strategies as st

import fakelib

pytestmark = pytest.mark.family("demo")
G = np.array([1.0, 2.0, 0.0, 4.0], np.float32)


def test_update(check):
    """The documented update, g / 2, and that it is finite."""
    u = fakelib.update(G)
    finite = np.isfinite(u)
    check.exact("finite", finite.tolist(), [True] * 4)
    check.reference("half the gradient", u[finite], G[finite].astype(np.float64) / 2)
    check.golden("update", np.nan_to_num(u))


def test_unrelated(check):
    check.reference("one", np.float32(1.0), 1.0)
    check.golden("one", np.float32(1.0))
'''

PROPERTY = '''
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fakelib

pytestmark = pytest.mark.family("demo")


@settings(derandomize=True, max_examples=20)
@given(g=st.floats(1.0, 8.0, width=32))
def test_update_property(check, g):
    check.reference("half of any gradient", fakelib.update(np.array([g], np.float32)), [g / 2])
'''

KEY = "departure/demo/test_update/reference:half the gradient"
EXACT_KEY = "departure/demo/test_update/exact:finite"


@pytest.fixture
def demo(pytester, monkeypatch):
    """run(*args, release=N, report=...): the contract suite on the library's release N (pytester, in process)."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(fakelib=LIBRARY, test_demo=CONTRACTS)
    pytester.mkdir("golden")
    monkeypatch.syspath_prepend(str(pytester.path))

    def run(*args, release: int = 1, report: str = "report.json"):
        monkeypatch.setenv("FAKE_RELEASE", str(release))
        result = pytester.runpytest_inprocess("-q", "-p", "no:randomly", f"--harness-report={report}",
                                              "--harness-golden-dir=golden", *args)
        path = pytester.path / report
        return result, (report_io.load(path) if path.exists() else None)

    return run


def _golden(pytester) -> dict:
    return json.loads((pytester.path / "golden" / "demo.json").read_text())["values"]


def _comparison(report, check_id: str, label: str):
    check = next(c for c in report.checks if c.id == check_id)
    return next(c for c in check.comparisons if c.label == label)


def test_a_broken_statement_is_refused_without_accepting_and_recorded_as_a_departure_with_it(demo, pytester):
    assert demo("--harness-record-golden", release=1)[0].ret == 0
    before = (pytester.path / "golden" / "demo.json").read_text()
    result, _ = demo("--harness-record-golden", release=2)
    assert result.ret == 1
    out = result.stdout.str()
    assert "golden: NOT written: 1 checks did not pass while recording: demo/test_update" in out
    assert "golden:   demo/test_update: exact:finite" in out
    assert "`nox -s golden -- --accept-changes` records it as the statement's departure" in out
    assert (pytester.path / "golden" / "demo.json").read_text() == before  # nothing written

    result, _ = demo("--harness-record-golden", "--harness-accept-changes", release=2)
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    # Each departure said with its check, label and size, for the reviewer of the acceptance.
    assert ("golden: departs demo/test_update: reference:half the gradient: added as this baseline's departure "
            "from its stated float64 formula (3 of 3 elements outside 64 ulp; max abs err 0.25 (") in out
    assert ("golden: departs demo/test_update: exact:finite: added as this baseline's departure from its stated "
            "value (1 of 4 elements outside exact; max abs err 1)") in out
    assert "2 departures recorded" in out
    values = _golden(pytester)
    recorded = departure.of_entry(values[KEY])
    assert recorded.check == "demo/test_update" and recorded.statement == "reference:half the gradient"
    assert recorded.kind == ComparisonKind.REFERENCE and recorded.size.outside == recorded.size.elements == 3
    assert set(recorded.recorded_on) >= {"python", "jax", "optax", "numpy"}
    # The release's own values, exactly: g / 2 + 1/4 where g is not zero.
    assert values[KEY]["dtype"] == "float32" and values[KEY]["values"] == [0.75, 1.25, 2.25]
    assert values[EXACT_KEY]["dtype"] == "bool" and values[EXACT_KEY]["values"] == [True, True, False, True]
    assert departure.of_entry(values["one"]) is None  # a golden value is no departure


def test_a_recorded_departure_is_judged_against_its_values_and_shown_as_a_note(demo, pytester):
    demo("--harness-record-golden", release=1)
    demo("--harness-record-golden", "--harness-accept-changes", release=2)
    result, report = demo(release=2, report="accepted.json")
    assert result.ret == 0, result.stdout.str()
    judged = _comparison(report, "demo/test_update", "reference:half the gradient")
    assert judged.passed and judged.kind == ComparisonKind.GOLDEN and judged.departure.holds_again is False
    assert judged.tolerance.ulps == 8  # the golden ulps of float32, not the formula's 64
    # A plain recording on the same baseline records it again as it was: no change, nothing refused.
    assert demo("--harness-record-golden", release=2)[0].ret == 0
    verdict = compare.judge(report, [report])
    assert verdict.exit_status == 0
    text = render.text(verdict)
    assert "Departures: statements the baseline breaks" in text
    since = departure.stack_text(judged.departure.recorded_on)
    assert f"    demo/test_update  since {since}\n" in text
    assert ("      reference:half the gradient departs from its stated float64 formula (3 of 3 elements outside "
            "64 ulp; max abs err 0.25 (") in text
    assert "      exact:finite departs from its stated value (1 of 4 elements outside exact; max abs err 1)\n" in text
    assert "reference:half the gradient" in markdown.markdown(verdict)


def test_a_release_back_on_the_formula_is_a_change_and_accepting_it_drops_the_departure(demo, pytester):
    demo("--harness-record-golden", release=1)
    demo("--harness-record-golden", "--harness-accept-changes", release=2)
    _, accepted = demo(release=2, report="accepted.json")
    result, later = demo(release=3, report="later.json")
    assert result.ret == 1
    back = _comparison(later, "demo/test_update", "exact:finite")
    assert not back.passed and back.departure.holds_again and "holds again on this stack" in back.message
    verdict = compare.judge(accepted, [later])
    (change,) = [c for c in verdict.entries[0].changes if c.check_id == "demo/test_update"]
    assert change.mark == Mark.IMPROVED and verdict.exit_status == 1
    assert (change.before, change.after) == ("exact:finite departs from its stated value (1 of 4 elements outside "
                                             "exact; max abs err 1)", "holds it again")
    # Recording the release that holds the statement again: dropping the departures is a change to accept.
    result, _ = demo("--harness-record-golden", release=3)
    assert result.ret == 1
    assert "golden: holds again demo/test_update: reference:half the gradient: its departure recorded on" in \
        result.stdout.str()
    assert "2 departures would be dropped (their statements hold again)" in result.stdout.str()
    assert KEY in _golden(pytester)
    assert demo("--harness-record-golden", "--harness-accept-changes", release=3)[0].ret == 0
    assert KEY not in _golden(pytester) and EXACT_KEY not in _golden(pytester)
    assert demo(release=3)[0].ret == 0


def test_a_release_that_departs_otherwise_is_a_change_against_the_recorded_values(demo, pytester):
    demo("--harness-record-golden", release=1)
    demo("--harness-record-golden", "--harness-accept-changes", release=2)
    _, accepted = demo(release=2, report="accepted.json")
    result, other = demo(release=4, report="other.json")
    assert result.ret == 1
    moved = _comparison(other, "demo/test_update", "reference:half the gradient")
    assert not moved.passed and not moved.departure.holds_again
    assert "against the values its departure recorded: reference:half the gradient departs from its stated" \
        in moved.message
    verdict = compare.judge(accepted, [other])
    (change,) = [c for c in verdict.entries[0].changes if c.check_id == "demo/test_update"]
    assert change.mark == Mark.VALUE_CHANGED
    # The note under the changed contract: the baseline departs from the statements it changed against.
    assert ("      the baseline departs from 2 of its statements (see Departures): exact:finite, reference:half the "
            "gradient\n") in render.text(verdict)


def test_a_property_that_fails_on_the_new_baseline_is_not_recorded(demo, pytester):
    pytester.makepyfile(test_property=PROPERTY)
    assert demo("--harness-record-golden", release=1)[0].ret == 0
    result, _ = demo("--harness-record-golden", "--harness-accept-changes", release=2)
    assert result.ret == 1
    out = result.stdout.str()
    assert "1 checks did not pass while recording: demo/test_update_property" in out
    assert "a Hypothesis property's failure is not recorded as a departure from its statement" in out
    assert not any(k.startswith(departure.KEY) for k in _golden(pytester))  # nothing written


IDENTITY = '''
import numpy as np
import pytest

import fakelib

pytestmark = pytest.mark.family("paths")
G = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def test_two_paths(check):
    """The same update by two paths (as jit and eager are): identical bit for bit."""
    one = fakelib.update(G)
    other = fakelib.update(G) + (np.float32(2 ** -20) if fakelib.os.environ.get("FAKE_PLATFORM") else 0)
    check.identical("one path vs the other", one, other)
    check.golden("update", one)
'''


def test_an_identity_a_platform_breaks_is_said_as_such_not_as_a_formulas_departure(demo, pytester, monkeypatch):
    """On a platform where two library paths that must agree compute differently (jit and eager on the chip),
    accepting records the departure and says that an identity broke: the platform's compilation, not a
    release's formula."""
    pytester.makepyfile(test_paths=IDENTITY)
    assert demo("--harness-record-golden", release=1)[0].ret == 0
    monkeypatch.setenv("FAKE_PLATFORM", "chip")
    result, _ = demo("--harness-record-golden", "--harness-accept-changes", release=1)
    out = result.stdout.str()
    assert result.ret == 0, out
    assert ("golden: departs paths/test_two_paths: identical:one path vs the other: added as this baseline's "
            "departure from its stated bit-for-bit identity of two library paths (") in out
    assert "golden:   an identity broke here: paths/test_two_paths's two library paths" in out
    assert "an identity broke" not in out.split("paths/test_two_paths", 1)[0]  # said for that departure only
