"""JSON conversion of the typed model, in one place: dataclasses, enums, lists, dicts and unions.

Field names are the JSON keys. A field marked ``omit_if_none`` is left out of the JSON when it is None.
Values typed ``Any`` pass through as JSON; a Path is its text, a tuple a list. Input is assumed valid
against the schema (report_io validates before decoding), so decoding does not re-check types it can trust.

Why compiled: a report holds hundreds of thousands of values and an upgrade reads and writes its reports
several times on its critical path, so each type's decoder (and each class's fields) is worked out once
per process, not once per value.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from pathlib import Path, PurePath
from typing import Any, Callable, TypeVar

T = TypeVar("T")
Decoder = Callable[[Any], Any]
_PLAIN = frozenset({str, int, float, bool, type(None)})  # JSON already: returned as they are


@functools.lru_cache(maxsize=None)
def _fields(cls: type) -> tuple[tuple[str, bool], ...] | None:
    """A dataclass's fields as (name, omitted when None); None for a class that is not a dataclass."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple((f.name, bool(f.metadata.get("omit_if_none"))) for f in dataclasses.fields(cls))


def to_json(value: Any) -> Any:
    """A model object as plain JSON data (dicts, lists, str, numbers, bool, None)."""
    cls = type(value)
    if cls in _PLAIN:
        return value
    if cls is list or cls is tuple:
        return [to_json(v) for v in value]
    fields = _fields(cls)
    if fields is not None:
        out = {}
        for name, omit_if_none in fields:
            item = getattr(value, name)
            if item is None and omit_if_none:
                continue
            out[name] = to_json(item)
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(to_json(k)): to_json(v) for k, v in value.items()}
    if hasattr(value, "item") and callable(value.item):  # a NumPy scalar that reached the model
        return value.item()
    return value


def from_json(cls: type[T], data: Any) -> T:
    """The model object of type cls that `data` (JSON data) describes."""
    return _decoder(cls)(data)


def _same(data: Any) -> Any:
    return data


@functools.lru_cache(maxsize=None)
def _decoder(tp: Any) -> Decoder:
    """How to decode JSON data into type `tp`, worked out once per type."""
    if tp is Any or tp is object:
        return _same
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(typing.get_args(tp))
    if origin is list:
        (item,) = typing.get_args(tp)
        return _list_decoder(item)
    if origin is tuple:  # tuple[X, ...]
        item = typing.get_args(tp)[0]
        return lambda data: tuple(_decoder(item)(v) for v in data)
    if tp is Path:
        return Path
    if origin is dict:
        key, item = typing.get_args(tp)
        return lambda data: {_decoder(key)(k): _decoder(item)(v) for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    return _same  # a float JSON wrote as an int (0.0 as 0) stays that number: it compares equal


def _list_decoder(item: Any) -> Decoder:
    def decode(data: Any) -> list:
        each = _decoder(item)
        return [each(v) for v in data] if each is not _same else list(data)
    return decode


def _dataclass_decoder(tp: type) -> Decoder:
    names = frozenset(f.name for f in dataclasses.fields(tp))
    fields: dict[str, Decoder] = {}  # filled on first use: a class may name itself among its fields' types

    def decode(data: Any) -> Any:
        if not fields:
            hints = typing.get_type_hints(tp)
            fields.update({name: _decoder(hints[name]) for name in names})
        unknown = data.keys() - names
        if unknown:
            raise ValueError(f"{tp.__name__} has no field {sorted(unknown)[0]!r}")
        return tp(**{k: fields[k](v) for k, v in data.items()})
    return decode


def _union_decoder(options: tuple) -> Decoder:
    """The first option that takes the data: a dataclass takes a dict, an enum or a path takes anything,
    a list, tuple or dict type takes anything, another type takes its own instances; else the data as is."""
    choices: list[tuple[Callable[[Any], bool], Any]] = []
    for option in options:
        if option is type(None):
            continue
        if isinstance(option, type) and dataclasses.is_dataclass(option):
            choices.append((lambda data: isinstance(data, dict), option))
        elif isinstance(option, type) and issubclass(option, (enum.Enum, PurePath)):
            choices.append((lambda data: True, option))
        elif typing.get_origin(option) in (list, tuple, dict) or not isinstance(option, type):
            choices.append((lambda data: True, option))
        else:
            choices.append((lambda data, kind=option: isinstance(data, kind), option))

    def decode(data: Any) -> Any:
        if data is None:
            return None
        for takes, option in choices:
            if takes(data):
                return _decoder(option)(data)
        return data
    return decode
