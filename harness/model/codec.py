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
    if cls is list or cls is tuple:  # the commonest containers, before any look-up (subclasses: below)
        return [to_json(v) for v in value]
    try:
        if cls in _PLAIN:
            return value
        fields = _fields(cls)
    except TypeError:  # a class that cannot be hashed (its metaclass says so): looked at each time
        fields = _fields.__wrapped__(cls)
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


def _decoder(tp: Any) -> Decoder:
    """How to decode JSON data into type `tp`, worked out once per type. Keyed by the type and its spelling:
    `A | B` equals `B | A`, but a union is decoded by its first option that takes the data."""
    try:
        return _cached(tp, repr(tp))
    except TypeError:  # an annotation that cannot be hashed: worked out each time
        return _built(tp)


@functools.lru_cache(maxsize=None)
def _cached(tp: Any, spelled: str) -> Decoder:
    return _built(tp)


def _built(tp: Any) -> Decoder:
    if tp is Any or tp is object:
        return _same
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(typing.get_args(tp))
    if origin is list:
        (item,) = typing.get_args(tp)
        each = _decoder(item)  # a dataclass's decoder reads its fields' types when first used: no recursion here
        return list if each is _same else (lambda data: [each(v) for v in data])
    if origin is tuple:  # tuple[X, ...]
        each = _decoder(typing.get_args(tp)[0])
        return lambda data: tuple(each(v) for v in data)
    if tp is Path:
        return Path
    if origin is dict:
        key, item = (_decoder(t) for t in typing.get_args(tp))
        return lambda data: {key(k): item(v) for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    return _same  # a float JSON wrote as an int (0.0 as 0) stays that number: it compares equal


def _dataclass_decoder(tp: type) -> Decoder:
    names = frozenset(f.name for f in dataclasses.fields(tp))
    hints: dict[str, Any] = {}  # read on first use: a class may name itself among its fields' types
    fields: dict[str, Decoder] = {}  # each field's decoder, worked out when the field is first met

    def field(name: str) -> Decoder:
        found = fields.get(name)
        if found is None:
            found = fields[name] = _decoder(hints[name])
        return found

    def decode(data: Any) -> Any:
        if not hints:
            hints.update(typing.get_type_hints(tp))
        unknown = set(data) - names  # data that is not a dict fails here as it always did (TypeError, ValueError)
        if unknown:
            raise ValueError(f"{tp.__name__} has no field {sorted(unknown)[0]!r}")
        return tp(**{k: field(k)(v) for k, v in data.items()})
    return decode


def _union_decoder(options: tuple) -> Decoder:
    """The first option that takes the data: a dataclass takes a dict; an enum, a path, a list, tuple or dict
    type (or an annotation that is no class) takes anything; another type its own instances; else the data as is."""
    decoders: list[tuple[Callable[[Any], bool], Decoder]] = []
    for option in options:
        if option is type(None):
            continue
        if isinstance(option, type) and dataclasses.is_dataclass(option):
            takes = lambda data: isinstance(data, dict)
        elif (not isinstance(option, type) or issubclass(option, (enum.Enum, PurePath))
              or typing.get_origin(option) in (list, tuple, dict)):
            takes = lambda data: True
        else:
            takes = lambda data, kind=option: isinstance(data, kind)
        decoders.append((takes, _decoder(option)))

    def decode(data: Any) -> Any:
        if data is None:
            return None
        for takes, decoder in decoders:
            if takes(data):
                return decoder(data)
        return data
    return decode
