"""Warnings from jax/optax/flax are upgrade signals (a deprecation starts): each distinct one is kept
with the checks that raised it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.model.report import WARNING_ORIGINS, WarningRecord

_MAX_CHECKS = 20  # checks named per warning


def origin(filename: str) -> str:
    """The package whose code issued the warning, or 'other'."""
    parts = Path(filename).parts
    return next((package for package in WARNING_ORIGINS if package in parts), "other")


class WarningLog:
    def __init__(self):
        self._rows: dict[tuple[str, str, str], WarningRecord] = {}

    def add(self, warning_message, nodeid: str) -> None:
        filename = str(getattr(warning_message, "filename", ""))
        where = origin(filename)
        key = (warning_message.category.__name__, str(warning_message.message)[:500], where)
        row = self._rows.get(key) or WarningRecord(
            category=key[0], message=key[1], origin=where, filename=filename,
            lineno=int(getattr(warning_message, "lineno", 0) or 0), count=0, checks=[])
        checks = row.checks
        if nodeid and nodeid not in checks and len(checks) < _MAX_CHECKS:
            checks = [*checks, nodeid]
        self._rows[key] = dataclasses.replace(row, count=row.count + 1, checks=checks)

    def records(self) -> list[WarningRecord]:
        return sorted(self._rows.values(), key=lambda w: (w.origin, w.message))
