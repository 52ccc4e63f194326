"""The committed list of equivalent mutants: changes no caller can observe, each with its reason.

Only these are left out of the score; every other mutant counts. An entry that names no mutant of the
installed Optax (a typo, or code that moved) is an error, so the list cannot silently excuse nothing.

    [[equivalent]]
    module = "optax/transforms/_clipping.py"
    operator = "core/ReplaceComparisonOperator_Lt_LtE"
    occurrence = 3
    line = 57          # checked: the mutant must start on this line
    reason = "..."     # why no caller can tell the mutant from the original
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.sensitivity.mutants import MutantId

PATH = Path(__file__).resolve().parents[2] / "sensitivity" / "equivalent.toml"
_FIELDS = {"module": str, "operator": str, "occurrence": int, "line": int, "reason": str}


def load(path: Path, known: list[MutantId]) -> dict[MutantId, str]:
    """The equivalent mutants `path` lists, each checked against the mutants cosmic-ray found (`known`)."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"cannot read the equivalent mutants in {path}: {exc}") from None
    by_key = {m.key: m for m in known}
    found: dict[MutantId, str] = {}
    for number, item in enumerate(data.get("equivalent", []), start=1):
        where = f"{path}, [[equivalent]] number {number}"
        _check_fields(item, where)
        key = f"{item['module']}:{item['operator']}:{item['occurrence']}"
        mutant = by_key.get(key)
        if mutant is None:
            raise HarnessError(f"{where} names no mutant of the installed optax ({key}); list the mutants with "
                               "`nox -s sensitivity -- --list`, then fix or remove the entry.")
        if mutant.line != item["line"]:
            raise HarnessError(f"{where}: {key} starts on line {mutant.line}, not {item['line']}; the code moved: "
                               "check that the mutant is still equivalent, then fix the line.")
        if not item["reason"].strip():
            raise HarnessError(f"{where}: give the reason no caller can observe {key}")
        if mutant in found:
            raise HarnessError(f"{where}: {key} is listed twice")
        found[mutant] = item["reason"].strip()
    return found


def _check_fields(item: object, where: str) -> None:
    if not isinstance(item, dict):
        raise HarnessError(f"{where} is not a table")
    missing = [name for name in _FIELDS if name not in item]
    unknown = sorted(set(item) - set(_FIELDS))
    wrong = [name for name, kind in _FIELDS.items() if name in item and not isinstance(item[name], kind)]
    if missing or unknown or wrong:
        raise HarnessError(f"{where}: " + "; ".join(
            [f"missing {', '.join(missing)}"] * bool(missing) + [f"unknown field {', '.join(unknown)}"] * bool(unknown)
            + [f"{name} must be a {_FIELDS[name].__name__}" for name in wrong])
            + f" (fields: {', '.join(_FIELDS)})")
