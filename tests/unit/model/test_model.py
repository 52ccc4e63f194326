"""The typed model and the published JSON Schema describe the same file, and real reports survive
the round trip JSON -> model -> JSON unchanged."""

import dataclasses
import json
import enum
import re
import typing

import pytest

from harness.model import report as model
from harness.model import report_io
from harness.model.codec import from_json, to_json

from support import upgrade_reports as main_reports


def _def_name(cls: type) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()


def _model_classes() -> list[type]:
    """Every dataclass reachable from Report."""
    found, todo = [], [model.Report]
    while todo:
        cls = todo.pop()
        if cls in found:
            continue
        found.append(cls)
        for hint in typing.get_type_hints(cls).values():
            stack = [hint]
            while stack:
                tp = stack.pop()
                stack += typing.get_args(tp)
                if isinstance(tp, type) and dataclasses.is_dataclass(tp):
                    todo.append(tp)
    return found


@pytest.mark.parametrize("cls", _model_classes(), ids=lambda c: c.__name__)
def test_every_model_class_is_defined_once_in_the_schema_with_the_same_fields(cls):
    definition = report_io.schema()["$defs"][_def_name(cls)]
    fields = dataclasses.fields(cls)
    assert set(definition["properties"]) == {f.name for f in fields}
    assert set(definition["required"]) == {f.name for f in fields if not f.metadata.get("omit_if_none")}
    assert definition.get("additionalProperties") is False


@pytest.mark.parametrize("cls", _model_classes(), ids=lambda c: c.__name__)
def test_enum_fields_allow_exactly_the_enum_values(cls):
    definition = report_io.schema()["$defs"][_def_name(cls)]
    for name, hint in typing.get_type_hints(cls).items():
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            assert set(definition["properties"][name]["enum"]) == {m.value for m in hint}, name


def test_schema_version_is_the_models():
    assert report_io.schema()["$defs"]["report"]["properties"]["schema_version"] == {"const": model.SCHEMA_VERSION}


@pytest.mark.parametrize("name", main_reports.ENTRIES)
def test_real_reports_round_trip_exactly(name):
    doc = main_reports.load(name)
    report = report_io.parse(doc, name)
    assert to_json(report) == doc
    assert from_json(model.Report, to_json(report)) == report


def test_unresolvable_report_validates():
    report = model.unresolvable(model.EntryInfo("candidate", "3.12", {"jax": "9.9.9"}, False), "no such jax", model.now())
    report_io.validate(to_json(report))


def test_unknown_field_is_refused_by_schema_and_model():
    doc = main_reports.load("jax-only")
    doc["checks"][0]["surprise"] = 1
    with pytest.raises(report_io.ReportProblem, match="surprise"):
        report_io.validate(doc)
    with pytest.raises(ValueError, match="surprise"):
        from_json(model.Report, doc)


def test_older_schema_is_refused_with_the_rerun_message():
    doc = dict(main_reports.load("jax-only"), schema_version=1)
    with pytest.raises(report_io.ReportProblem, match="Re-run the sessions"):
        report_io.parse(doc)


def test_loading_reads_the_file_each_time(tmp_path, monkeypatch):
    """report_io.load is read + validate + decode, no memo: a run that reads a report in several steps holds it
    (harness.verdict.run_reports, tests/unit/verdict/test_run_reports.py)."""
    path = tmp_path / "jax-only.json"
    path.write_text(json.dumps(main_reports.load("jax-only")))
    parsed = []
    real = report_io.parse
    monkeypatch.setattr(report_io, "parse",
                        lambda doc, source="report", *text: parsed.append(source) or real(doc, source, *text))
    assert report_io.load(path) == report_io.load(path) and len(parsed) == 2


def test_a_report_changed_in_place_is_read_again_and_a_corrupted_one_refused(tmp_path):
    path = tmp_path / "jax-only.json"
    text = json.dumps(main_reports.load("jax-only"))
    path.write_text(text)
    report_io.load(path)
    changed = text.replace('"name": "jax-only"', '"name": "jax-onlx"', 1)  # the same size, other bytes
    assert len(changed) == len(text) and changed != text
    path.write_text(changed)
    assert report_io.load(path).entry.name == "jax-onlx"
    path.write_text(changed.replace('"checks"', '"chex"'))
    with pytest.raises(report_io.ReportProblem, match="chex|checks"):
        report_io.load(path)
