"""Built-in checks whose callable, parameter or module the stack under test lacks: not applicable here.

The built-in contracts are written against the tool's baseline; a team a year behind runs them on releases
that lack some of what they call (`optax.freeze`, `optax.contrib.dog(init_step=...)`, `optax.contrib.
MuonDimensionNumbers`). Such a check has nothing to say about that stack, so it is skipped with the reason
"not on this stack: optax 0.2.5 has no optax.freeze", recorded like a platform's refusal (harness.platforms):
named and counted, never a failure that stops a recording or a verdict. On a candidate, where the baseline ran
the check, the same skip is the API going away, and the verdict marks it so (harness.verdict.classify).

Only what the library lacks qualifies, read from the exception itself: an attribute missing on one of the
stack's modules, a module that does not import, or a keyword a library callable's signature does not take
(the call failed binding, before the callable ran). Anything raised inside a library call stays a failure.

Where: a recording says so in the family's golden file (`not_on_stack/<check id>`, its reason); a judging run
skips such a check only where its recording said the same, so the tool's own baseline, a candidate that lost
an API and a mutated library (the sensitivity runs) fail as they always did, and only a stack recorded as
lacking it sets the check aside.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import sys
import types
from collections.abc import Callable

import pytest

from harness.not_on_stack import NOT_ON_STACK

LIBRARIES = ("optax", "jax", "jaxlib", "flax", "orbax", "chex")
_UNEXPECTED_KEYWORD = re.compile(r"^(?P<callable>[\w.<>]+)\(\) got an unexpected keyword argument '(?P<param>\w+)'")
# A jitted callable given a keyword its function lacks: jit binds it as an array argument and says where it was.
_JIT_KEYWORD = re.compile(r"^Error interpreting argument to <function (?P<callable>[\w.<>]+) at 0x[0-9a-f]+> as an "
                          r"abstract array\..* at path kwargs\['(?P<param>\w+)'\]", re.S)


def _library(module: str) -> str | None:
    root = module.split(".", 1)[0]
    return root if root in LIBRARIES else None


def _release(root: str) -> str:
    try:
        return f"{root} {importlib.metadata.version(root)}"
    except importlib.metadata.PackageNotFoundError:
        return root


def reason(exc: BaseException, keywords: bool = True) -> str | None:
    """Why the check is not applicable on this stack, when exc says the stack lacks what it called; else None.
    keywords=False: a missing callable or module only, not a keyword (an error contract's bad keyword is its
    point: `TrainState(nonsense=1)` raises TypeError on every stack, and that is the fact it records)."""
    if isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), types.ModuleType) and exc.name:
        module = exc.obj.__name__
        root = _library(module)
        if root is not None:
            return f"{NOT_ON_STACK}: {_release(root)} has no {module}.{exc.name}"
    if isinstance(exc, ImportError) and exc.name and _library(exc.name):
        missing = re.search(r"cannot import name '(\w+)'", str(exc))
        what = f"{exc.name}.{missing.group(1)}" if missing else f"module {exc.name}"
        return f"{NOT_ON_STACK}: {_release(_library(exc.name))} has no {what}"
    if keywords and isinstance(exc, TypeError):
        found = _UNEXPECTED_KEYWORD.match(str(exc))
        found = found if found is not None and not _ran(exc, found.group("callable")) else _JIT_KEYWORD.match(str(exc))
        if found is not None:
            owner = _library_callable(found.group("callable"), found.group("param"))
            if owner is not None:
                return f"{NOT_ON_STACK}: {_release(_library(owner))}'s {found.group('callable')} takes no " \
                       f"parameter {found.group('param')!r}"
    return None


def _ran(exc: BaseException, qualname: str) -> bool:
    """Whether the named callable started running (its frame is on the traceback): then the TypeError is its
    own doing, not a signature that lacks the keyword."""
    name = qualname.rsplit(".", 1)[-1]
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == name:
            return True
        tb = tb.tb_next
    return False


def _library_callable(qualname: str, param: str) -> str | None:
    """The module of a loaded library callable of that qualified name whose signature lacks the parameter (and
    takes no **kwargs), or None: the keyword is one the stack's own callable does not know."""
    for module_name, module in list(sys.modules.items()):
        if module is None or _library(module_name) is None:
            continue
        head, _, rest = qualname.partition(".")
        found = getattr(module, head, None)
        for part in rest.split(".") if rest else ():
            found = getattr(found, part, None)
        if found is None or not callable(found) or _library(getattr(found, "__module__", "") or "") is None:
            continue
        try:
            parameters = inspect.signature(found).parameters
        except (TypeError, ValueError):
            continue
        if param not in parameters and all(p.kind != p.VAR_KEYWORD for p in parameters.values()):
            return found.__module__
    return None


MARK = "not_on_stack/"  # a golden key: not_on_stack/<check id> -> {"fact": the reason}, written by a recording


class NotOnStack(Exception):
    """A table of constructors found the stack lacking one (sort_buildable): raised where its check runs."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def skip_if_lacking(exc: BaseException, check=None, keywords: bool = True) -> None:
    """Raise the not-applicable skip when exc says the stack lacks what the check called (reason()): while
    recording, with its mark written in the family's golden file; while judging, only where that mark is there
    (else exc stands, as before this stack was ever recorded)."""
    why = exc.why if isinstance(exc, NotOnStack) else reason(exc, keywords)
    if why is None or check is None or check.store is None:
        return
    key = f"{MARK}{check.check_id}"
    if check.recording:
        check.store.record(check.family, key, {"fact": why})
    elif not check.store.holds(check.family, key):
        return
    raise pytest.skip.Exception(why, _use_item_location=True) from exc


def sort_buildable(makes: dict[str, Callable[[], object]]) -> tuple[dict[str, Callable], dict[str, str]]:
    """A table of constructors that one program builds together, split: those this stack can build, and why
    each other is not applicable (a constructor the stack lacks would otherwise take the whole program with
    it). Each is called once, outside any trace; an exception that is not a lack is left for the program."""
    buildable, lacking = {}, {}
    for name, make in makes.items():
        try:
            make()
        except Exception as exc:  # only a lack is sorted out here
            why = reason(exc)
            if why is not None:
                lacking[name] = why
                continue
        buildable[name] = make
    return buildable, lacking


def skip(why: str) -> None:
    """The running check is not applicable, for the reason sort_buildable gave (the plugin decides: skip_if_lacking)."""
    raise NotOnStack(why)
