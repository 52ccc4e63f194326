"""The departures an acceptance's recording made or dropped, read from the golden files before and after it
(harness.stack.commands.golden_record), and the lines accept and golden/CHANGELOG.md give them."""

import dataclasses
import datetime as dt
import json

from harness.model import departure
from harness.model.enums import ComparisonKind
from harness.stack.commands import accept, golden_record
from harness.stack.pins import matrix

from unit.stack.commands.test_accept import BASE, CAND

MUON = departure.Departure(
    check="optimizers/test_scale_by_muon", statement="reference:step 0 update wide", kind=ComparisonKind.REFERENCE,
    recorded_on={"python": "3.12.1", "jax": "0.12.0.1", "optax": "0.2.8"},
    size=departure.DepartureSize(outside=8, elements=8, allowed="64 ulp", max_abs_err=0.817, max_ulps=3.43e6))
DOG = departure.Departure(
    check="optimizers/test_dog", statement="exact:b NaN where g < -eps", kind=ComparisonKind.EXACT,
    recorded_on={"python": "3.12.1", "jax": "0.11.2", "optax": "0.2.6"},
    size=departure.DepartureSize(outside=2, elements=3, allowed="exact", max_abs_err=1.0))
OBSERVED = {"dtype": "float32", "shape": [2], "values": [0.5, 1.5]}


def _folder(path, **families: dict) -> object:
    path.mkdir()
    for family, values in families.items():
        (path / f"{family}.json").write_text(json.dumps({"format": 1, "family": family, "values": values}))
    return path


def _entry(found: departure.Departure, values=OBSERVED) -> dict:
    return departure.entry(found, values)


def test_departures_recorded_changed_and_dropped_are_told_apart_from_golden_values(tmp_path):
    before = _folder(tmp_path / "before", optimizers={
        "adam/step0": OBSERVED, departure.key(DOG.check, DOG.statement): _entry(DOG),
        departure.key(MUON.check, MUON.statement): _entry(MUON)})
    moved = dict(OBSERVED, values=[0.5, 2.5])
    after = _folder(tmp_path / "after", optimizers={
        "adam/step0": dict(OBSERVED, values=[1.0, 1.0]),  # a golden value changed: no departure
        departure.key(MUON.check, MUON.statement): _entry(MUON, moved)})  # recorded again, other values
    (after / "unreadable.json").write_text("<<<<<<< HEAD")
    found = golden_record.between(before, after)
    assert found.recorded == [MUON] and found.dropped == [DOG]
    assert golden_record.between(after, after) == golden_record.DepartureChanges()
    assert golden_record.between(tmp_path / "none", after).recorded == [MUON]  # a first recording


def test_the_changelog_entry_lists_each_departure_with_its_size():
    accepted = accept.Accepted(
        when=dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc), before=matrix.Pins("3.12", BASE, CAND),
        after=matrix.Pins("3.12", CAND, CAND), headline="CHANGED: 2 checks", bits_line=None, changes=[],
        reason="adopt optax 0.2.8", golden_stat="", departures=golden_record.DepartureChanges([MUON], [DOG]))
    text = accept.entry_text(accepted)
    assert ("- Departures recorded (1): statements the new baseline breaks, recorded as its behaviour and judged "
            "against it from now on\n  - `optimizers/test_scale_by_muon`: reference:step 0 update wide departs from "
            "its stated float64 formula (8 of 8 elements outside 64 ulp; max abs err 0.817 (3.43e+06 ulp))\n") in text
    assert ("- Departures dropped (1): statements that hold again\n  - `optimizers/test_dog`: exact:b NaN where g < "
            "-eps holds again (its departure since python 3.12.1, jax 0.11.2, optax 0.2.6 is dropped)\n") in text
    none = accept.entry_text(dataclasses.replace(accepted, departures=golden_record.DepartureChanges()))
    assert "Departures" not in none
