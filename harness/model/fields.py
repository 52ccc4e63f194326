"""How the report model declares its fields: values kept as written, and fields written only when set."""

from __future__ import annotations

import dataclasses
from typing import Any

Json = Any  # a value kept as it was written: JSON numbers, strings, lists, objects


def optional():
    """A field written only when it has a value (the schema does not require it)."""
    return dataclasses.field(default=None, metadata={"omit_if_none": True})
