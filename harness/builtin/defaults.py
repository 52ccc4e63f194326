"""The defaults and kinds of the in-scope callables' parameters, as golden facts: shared by the
test_*_defaults.py files (one per family).

A changed default changes what every caller who leaves the parameter out gets (ema's debias, a
schedule's transition_begin), without a line of their code changing; a changed kind (keyword-only
becoming positional, or positional-only) makes a caller's call raise, or accept arguments it refused. The callables and their
parameters are the ones harness/coverage/ledger.toml lists for the baseline (read as data: the ledger is
the baseline's surface); a parameter the installed Optax no longer has reads "absent", a parameter it
adds is not a changed default and is left out (the verdict's API section names it).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import tomllib
from pathlib import Path

import pytest

from harness import builtin_families as families

LEDGER = Path(__file__).resolve().parent.parent / "coverage" / "ledger.toml"
FAMILY_AREAS = families.areas()  # contract family -> the ledger areas whose callables it pins (harness/builtin_families.py)


def ledger_params(family: str) -> dict[str, tuple[str, ...]]:
    """Callable name -> the parameters the ledger lists for it (covered or a listed gap), for the
    family's areas; callables whose parameters the ledger does not list (missing) are left out."""
    return dict(_ledger_params(family))


@functools.cache
def _ledger_params(family: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """ledger_params, read once per family: every check of a family reads it, and parsing the 64 KB
    ledger took ~8 ms a check (~1 s of an entry's suite)."""
    entries = _in_scope()
    return tuple((name, tuple(sorted((*entry.get("params", {}), *entry.get("gaps", {})))))
                 for name, entry in entries.items()
                 if entry["area"] in FAMILY_AREAS[family] and (entry.get("params") or entry.get("gaps")))


@functools.cache
def _in_scope() -> dict:
    """The ledger's in-scope lines, parsed once per process (parsing the 64 KB ledger takes ~8 ms)."""
    return tomllib.loads(LEDGER.read_text())["in_scope"]


def ledger_params_of(area: str, param: str) -> tuple[str, ...]:
    """The in-scope callables of an area whose ledger line has that parameter (covered or a gap), sorted."""
    return tuple(sorted(name for name, entry in _in_scope().items() if entry["area"] == area
                        and param in {**entry.get("params", {}), **entry.get("gaps", {})}))


def ledger_in_scope() -> tuple[str, ...]:
    """Every in-scope callable's ledger name, sorted."""
    return tuple(sorted(_in_scope()))


def ledger_in_scope_of(area: str) -> tuple[str, ...]:
    """The in-scope callables of an area ("optimizer", "update_rule"), sorted."""
    return tuple(sorted(name for name, entry in _in_scope().items() if entry["area"] == area))


@functools.cache
def ledger_differentiable(area: str) -> tuple[str, ...]:
    """The in-scope callables of an area ("loss", "activation") that the ledger does not say have no gradient
    (its no_gradient lines), sorted: the ones whose gradient the edges tests take."""
    entries = _in_scope()
    return tuple(sorted(name for name, entry in entries.items() if entry["area"] == area and "no_gradient" not in entry))


def resolve(name: str):
    """optax.contrib.reduce_on_plateau -> the object (the longest importable module, then attributes)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


def describe(default) -> str:
    """A default as stable text: literals by repr, types and functions by qualified name, other objects
    by their type (never a memory address)."""
    if default is inspect.Parameter.empty:
        return "required"
    if default is None or isinstance(default, (bool, int, float, complex, str)):
        return repr(default)
    if isinstance(default, (tuple, list, frozenset)):
        return f"{type(default).__name__}({', '.join(describe(d) for d in default)})"
    if isinstance(default, type) or inspect.isroutine(default) or hasattr(default, "__qualname__"):
        return f"{getattr(default, '__module__', '?')}.{getattr(default, '__qualname__', '?')}"
    return f"<{type(default).__module__}.{type(default).__qualname__}: {default}>"


def signature(obj) -> inspect.Signature:
    """The parameters a caller passes: a class whose metaclass takes anything (Flax's nnx.Object: inspect says
    (*args, **kwargs)) is read from its __init__, self left out, as the ledger reads it from the source."""
    found = inspect.signature(obj)
    hidden = all(p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
                 for p in found.parameters.values())
    if inspect.isclass(obj) and hidden and "__init__" in vars(obj):
        init = inspect.signature(obj.__init__)
        return init.replace(parameters=list(init.parameters.values())[1:])
    return found


def defaults(name: str, params: tuple[str, ...]) -> dict[str, str]:
    """Each listed parameter's default in the installed library: its text, "required", or "absent"."""
    found_params = signature(resolve(name)).parameters
    found = {}
    for param in params:
        p = found_params.get(param)
        if p is None:
            found[param] = "absent"
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            found[param] = "*args"
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            found[param] = "**kwargs"
        else:
            found[param] = describe(p.default)
    return found


def kinds(name: str, params: tuple[str, ...]) -> dict[str, str]:
    """Each listed parameter's kind in the installed library ("keyword-only", "positional or keyword", ...),
    or "absent": a caller's `f(x, y)` or `f(x=...)` works or raises by it."""
    found = signature(resolve(name)).parameters
    return {param: found[param].kind.description if param in found else "absent" for param in params}


def check_defaults(check, family: str, name: str) -> None:
    """The golden facts defaults/<name>: {parameter: default}, and kinds/<name>: {parameter: kind}, for the
    parameters the ledger lists."""
    params = ledger_params(family)[name]
    check.describe_input(f"the defaults and kinds of {name}({', '.join(params)})")
    check.golden_fact(f"defaults/{name}", defaults(name, params))
    check.golden_fact(f"kinds/{name}", kinds(name, params))


def parameter_defaults_test(family: str):
    """The test of a family's defaults module (test_<family>_defaults.py): one check per callable the ledger lists
    for the family's areas, named builtin_families.DEFAULTS_TEST and parametrized by the callable's name (the
    selection names those checks one by one: `masks/test_parameter_defaults[optax.adamw]`)."""
    @pytest.mark.parametrize("name", sorted(ledger_params(family)))
    def test_parameter_defaults(check, name):
        """Every parameter's default (or that it is required) and kind equal the baseline's."""
        check_defaults(check, family, name)

    return test_parameter_defaults
