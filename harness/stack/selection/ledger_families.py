"""The coverage ledger (harness/coverage/ledger.toml) as the selection reads it: each callable the ledger
names -> the built-in tests whose subject it is. An in-scope callable takes the contracts its entry names
("family/test_name": its parameters' and its callers'), and the check of its defaults (the one parametrization
of its family's defaults test that names it: harness.builtin_families.DEFAULTS_TEST); [built_on] gives an
out-of-scope callable the tests of what it builds on. Read here as plain TOML: harness.coverage sits above
the stack and checks the ledger's form itself."""

from __future__ import annotations

import functools
import tomllib

from harness import builtin_families
from harness.errors import HarnessError
from harness.stack import paths

LEDGER = paths.PACKAGE / "coverage" / "ledger.toml"


def family_of(test_id: str) -> str:
    """"masks/test_bad_mask" -> "masks"."""
    return test_id.split("/", 1)[0]


def _named(name: str, entry: dict) -> set[str]:
    """The contract ids an in-scope entry names (its parameters' and its callers'): of a test parametrized by
    callable (harness.builtin_families.PER_CALLABLE_TESTS), the check that names it; any other test whole."""
    ids: list[str] = []
    for value in [*entry.get("params", {}).values(), entry.get("contracts", [])]:
        ids += [value] if isinstance(value, str) else list(value)
    return {_of(i, name) for i in ids if "/" in i}


def _of(test_id: str, name: str) -> str:
    return f"{test_id}[{name}]" if test_id.split("/", 1)[-1] in builtin_families.PER_CALLABLE_TESTS else test_id


def _defaults_check(name: str, entry: dict) -> set[str]:
    """The check of the callable's defaults, where its family's defaults module has one: the family whose
    ledger areas hold the callable's area, for a callable whose parameters the ledger lists
    (harness.builtin.defaults.ledger_params)."""
    if not (entry.get("params") or entry.get("gaps")):
        return set()
    return {f"{family}/{builtin_families.DEFAULTS_TEST}[{name}]"
            for family, areas in builtin_families.areas().items() if entry.get("area") in areas}


def _gradient_checks(name: str, entry: dict) -> set[str]:
    """The contracts the ledger says take the callable's gradient at its edges: of a family's edges test
    (harness.builtin_families.GRADIENT_TESTS), the check that names it; any other test whole."""
    value = entry.get("gradient", [])
    ids = [value] if isinstance(value, str) else list(value)
    return {_of(i, name) for i in ids if "/" in i}


def tests_by_callable(text: str | None = None) -> dict[str, frozenset[str]]:
    """Callable ("optax.MultiSteps") -> the built-in tests whose subject it is or what it builds on: test ids
    ("accumulation/test_guide_case", every check of that test) and check ids
    ("accumulation/test_parameter_defaults[optax.MultiSteps]", that check alone). The tool's ledger is read
    once per content (a project is loaded many times a run)."""
    try:
        return dict(_tests(text if text is not None else LEDGER.read_text()))
    except OSError as exc:
        raise HarnessError(f"{LEDGER}: cannot read the coverage ledger ({exc}); reinstall the tool.") from None


@functools.lru_cache(maxsize=4)
def _tests(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HarnessError(f"{LEDGER}: cannot read the coverage ledger ({exc}); reinstall the tool.") from None
    found = {name: frozenset(_named(name, entry) | _defaults_check(name, entry) | _gradient_checks(name, entry))
             for name, entry in data.get("in_scope", {}).items()}
    for name, built_on in data.get("built_on", {}).items():
        found[name] = frozenset().union(*(found.get(n, frozenset()) for n in built_on))
    return tuple(found.items())


def families_by_callable(text: str | None = None) -> dict[str, frozenset[str]]:
    """Callable -> the families of its tests (tests_by_callable)."""
    return {name: frozenset(map(family_of, ids)) for name, ids in tests_by_callable(text).items()}
