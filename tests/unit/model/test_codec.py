"""The model's JSON codec: what each kind of field becomes and back, and that a type's decoder is worked
out once per process (a report of hundreds of thousands of values is read several times per upgrade)."""

from __future__ import annotations

import dataclasses
import enum
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.model import codec


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass(frozen=True)
class Leaf:
    name: str
    weight: float = 0.0


@dataclasses.dataclass(frozen=True)
class Node:
    leaf: Leaf | None
    colour: Colour | None = None
    path: Path | None = None
    shape: tuple[int, ...] = ()
    leaves: list[Leaf] = dataclasses.field(default_factory=list)
    by_colour: dict[Colour, int] = dataclasses.field(default_factory=dict)
    anything: Any = None
    maybe: str | list[str] | None = None
    note: str | None = dataclasses.field(default=None, metadata={"omit_if_none": True})
    child: Node | None = None


def test_every_kind_of_field_round_trips():
    node = Node(Leaf("a", 1.5), Colour.BLUE, Path("x/y.json"), (2, 3), [Leaf("b")], {Colour.RED: 4},
                {"free": [1, None]}, ["s", "t"], note="said", child=Node(None, maybe="one"))
    data = codec.to_json(node)
    assert data["colour"] == "blue" and data["path"] == "x/y.json" and data["shape"] == [2, 3]
    assert data["by_colour"] == {"red": 4} and data["child"]["leaf"] is None and "note" not in data["child"]
    back = codec.from_json(Node, data)
    assert back == dataclasses.replace(node, by_colour={Colour.RED: 4})
    assert isinstance(back.path, Path) and isinstance(back.shape, tuple) and back.child.maybe == "one"


def test_numpy_scalars_become_json_numbers_and_an_int_written_for_a_float_is_kept():
    assert codec.to_json(Leaf("a", np.float32(0.5))) == {"name": "a", "weight": 0.5}
    assert type(codec.to_json(np.int64(3))) is int
    assert codec.from_json(Leaf, {"name": "a", "weight": 0}) == Leaf("a", 0)


def test_an_unknown_field_is_refused_by_name_and_data_that_is_no_object_as_the_readers_expect():
    with pytest.raises(ValueError, match="Leaf has no field 'colour'"):
        codec.from_json(Leaf, {"name": "a", "colour": "red"})
    # best-effort readers (phase files, a bisection) catch TypeError and ValueError: never an AttributeError
    with pytest.raises(TypeError):
        codec.from_json(Leaf, None)
    with pytest.raises(ValueError, match="no field 'bogus'"):
        codec.from_json(Leaf, ["bogus"])


class Word(str, enum.Enum):
    A = "a"


@dataclasses.dataclass(frozen=True)
class EnumFirst:
    value: Word | str


@dataclasses.dataclass(frozen=True)
class TextFirst:
    value: str | Word


def test_a_union_is_decoded_by_its_own_first_option_whatever_order_an_equal_union_was_met_in():
    """`Word | str` equals `str | Word` (and hashes the same): a decoder kept by type alone would give the one
    met second the first one's choice."""
    assert codec.from_json(EnumFirst, {"value": "a"}).value is Word.A
    assert type(codec.from_json(TextFirst, {"value": "a"}).value) is str
    assert codec.from_json(list[str | Path], ["a"]) == ["a"] and codec.from_json(list[Path | str], ["a"]) == [Path("a")]


def test_a_type_is_worked_out_once_however_many_values_are_decoded(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class Fresh:  # not decoded before in this process
        leaves: list[Leaf]
        colour: Colour | None = None

    looked_up = []
    real = typing.get_origin
    monkeypatch.setattr(typing, "get_origin", lambda tp: looked_up.append(tp) or real(tp))
    value = {"leaves": [{"name": "a"}, {"name": "b", "weight": 2.0}], "colour": "red"}
    codec.from_json(Fresh, value)
    assert looked_up, "the first decode works the types out"
    looked_up.clear()
    for _ in range(50):
        assert codec.from_json(Fresh, value).colour is Colour.RED
    assert looked_up == []
