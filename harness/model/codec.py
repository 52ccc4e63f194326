"""JSON conversion of the typed model, in one place: dataclasses, enums, lists, dicts and unions.

Field names are the JSON keys. A field marked ``omit_if_none`` is left out of the JSON when it is None.
Values typed ``Any`` pass through as JSON; a Path is its text, a tuple a list. Input is assumed valid
against the schema (report_io validates before decoding), so decoding does not re-check types it can trust.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from pathlib import Path, PurePath
from typing import Any, TypeVar

T = TypeVar("T")


def to_json(value: Any) -> Any:
    """A model object as plain JSON data (dicts, lists, str, numbers, bool, None)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if item is None and field.metadata.get("omit_if_none"):
                continue
            out[field.name] = to_json(item)
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
    return _decode(cls, data)


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, data: Any) -> Any:
    if tp is Any or tp is object:
        return data
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(typing.get_args(tp), data)
    if origin is list:
        (item,) = typing.get_args(tp)
        return [_decode(item, v) for v in data]
    if origin is tuple:  # tuple[X, ...]
        item = typing.get_args(tp)[0]
        return tuple(_decode(item, v) for v in data)
    if tp is Path:
        return Path(data)
    if origin is dict:
        key, item = typing.get_args(tp)
        return {_decode(key, k): _decode(item, v) for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"{tp.__name__} has no field {sorted(unknown)[0]!r}")
        return tp(**{k: _decode(hints[k], v) for k, v in data.items()})
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if tp is float and isinstance(data, int) and not isinstance(data, bool):
        return data  # JSON wrote 0.0 as 0: keep the number, it compares equal
    return data


def _decode_union(options: tuple, data: Any) -> Any:
    if data is None:
        return None
    for option in options:
        if option is type(None):
            continue
        if isinstance(option, type) and dataclasses.is_dataclass(option):
            if isinstance(data, dict):
                return _decode(option, data)
            continue
        if isinstance(option, type) and issubclass(option, (enum.Enum, PurePath)):
            return _decode(option, data)
        if typing.get_origin(option) in (list, tuple, dict) or isinstance(data, option if isinstance(option, type) else object):
            return _decode(option, data)
    return data
