"""The coverage ledger (harness/coverage/ledger.toml) as the selection reads it: each callable the ledger
names -> the built-in families whose contracts exercise it. The ledger's contract ids ("family/test")
name the families; [built_on] adds what an out-of-scope callable builds on (adamw -> add_decayed_weights).
Read here as plain TOML: harness.coverage sits above the stack and checks the ledger's form itself."""

from __future__ import annotations

import tomllib

from harness.errors import HarnessError
from harness.stack import paths

LEDGER = paths.PACKAGE / "coverage" / "ledger.toml"


def _families(entry: dict) -> frozenset[str]:
    """The families of every contract id an in-scope entry names (its parameters' and its callers')."""
    ids: list[str] = []
    for value in [*entry.get("params", {}).values(), entry.get("contracts", [])]:
        ids += [value] if isinstance(value, str) else list(value)
    return frozenset(i.split("/", 1)[0] for i in ids if "/" in i)


def families_by_callable(text: str | None = None) -> dict[str, frozenset[str]]:
    """Callable ("optax.MultiSteps") -> the families covering it and what it builds on."""
    try:
        data = tomllib.loads(text if text is not None else LEDGER.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"{LEDGER}: cannot read the coverage ledger ({exc}); reinstall the tool.") from None
    found = {name: _families(entry) for name, entry in data.get("in_scope", {}).items()}
    for name, built_on in data.get("built_on", {}).items():
        found[name] = frozenset().union(*(found.get(n, frozenset()) for n in built_on))
    return found
