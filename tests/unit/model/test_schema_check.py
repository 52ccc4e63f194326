"""The two schema validators accept and refuse the same reports (harness/model/schema_check.py): the fast
one (jsonschema-rs) may only replace the reference one (jsonschema) if no report changes its answer."""

from __future__ import annotations

import copy
import json

import pytest

from harness.model import report_io, schema_check
from support import upgrade_reports

pytest.importorskip("jsonschema_rs")
pytest.importorskip("jsonschema")


def _real_report() -> dict:
    """The default matrix's real baseline report, committed (support.upgrade_reports): no contract run needed."""
    return upgrade_reports.load("baseline")


def _broken(doc: dict) -> dict[str, dict]:
    """One document per kind of damage a stale or hand-edited report shows."""
    cases = {}

    def case(name, edit):
        d = copy.deepcopy(doc)
        edit(d)
        cases[name] = d

    case("missing top-level field", lambda d: d.pop("environment"))
    case("unknown top-level field", lambda d: d.update(surprise=1))
    case("check status of the wrong type", lambda d: d["checks"][0].update(status=5))
    case("unknown check field", lambda d: d["checks"][1].update(nope=True))
    case("status outside the enum", lambda d: d.update(status="halfway"))
    case("checks not a list", lambda d: d.update(checks={}))
    case("a check missing its id", lambda d: d["checks"][2].pop("id"))
    case("NaN where a string belongs", lambda d: d["checks"][4].update(id=float("nan")))
    case("infinity where a string belongs", lambda d: d.update(status=float("inf")))
    return cases


def _with_nonfinite_errors(doc: dict) -> dict:
    """A report whose measured errors are NaN and infinite (what a check that produced NaN records)."""
    d = copy.deepcopy(doc)
    d["checks"][0].update(max_abs_err=float("nan"), max_rel_err=float("inf"))
    return d


@pytest.mark.parametrize("using", ["jsonschema", "jsonschema_rs"])
def test_a_real_report_is_valid_for_both(using):
    assert schema_check.first_violation(_real_report(), report_io.SCHEMA_PATH, using) is None


@pytest.mark.parametrize("using", ["jsonschema", "jsonschema_rs"])
def test_nan_and_infinite_errors_are_numbers_for_both(using):
    """JSON has no NaN: Python's json writes the NaN token, which jsonschema-rs cannot take as such (it saw
    null and refused a real candidate report); it is checked as a number, as jsonschema checks it."""
    doc = _with_nonfinite_errors(_real_report())
    assert schema_check.first_violation(doc, report_io.SCHEMA_PATH, using) is None
    text = json.dumps(doc)
    assert schema_check.first_violation(json.loads(text), report_io.SCHEMA_PATH, using, text=text) is None


def test_both_refuse_the_same_broken_reports_at_the_same_place():
    """On the real report cut to its first checks (every damage is in those; the whole report is validated by
    test_a_real_report_is_valid_for_both): nine full copies of it through jsonschema took 6 s of CPU."""
    cut = _real_report()
    cut["checks"] = cut["checks"][:8]
    for name, doc in _broken(cut).items():
        slow = schema_check.first_violation(doc, report_io.SCHEMA_PATH, "jsonschema")
        fast = schema_check.first_violation(doc, report_io.SCHEMA_PATH, "jsonschema_rs")
        assert slow is not None and fast is not None, name
        assert fast.where == slow.where, (name, fast, slow)


def test_the_fast_validator_is_the_one_used_when_installed():
    assert schema_check.implementation() == "jsonschema_rs"


def test_a_broken_report_is_refused_naming_where(tmp_path):
    doc = _real_report()
    doc["checks"][3]["status"] = 5
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(report_io.ReportProblem, match=r"does not match the report schema at checks/3"):
        report_io.load(path)
