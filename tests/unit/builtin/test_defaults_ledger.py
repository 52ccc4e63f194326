"""harness.builtin.defaults reads the coverage ledger once per family: every defaults check of a family asks
for it, and parsing the 64 KB ledger took ~8 ms a check."""

import tomllib

import pytest

from harness.builtin import defaults


def _parsed(family: str) -> dict[str, tuple[str, ...]]:
    """The family's callables and their listed parameters, read straight from the ledger file."""
    entries = tomllib.loads(defaults.LEDGER.read_text())["in_scope"]
    return {name: tuple(sorted([*entry.get("params", {}), *entry.get("gaps", {})]))
            for name, entry in entries.items()
            if entry["area"] in defaults.FAMILY_AREAS[family] and (entry.get("params") or entry.get("gaps"))}


@pytest.mark.parametrize("family", sorted(defaults.FAMILY_AREAS))
def test_ledger_params_is_the_ledger(family):
    assert defaults.ledger_params(family) == _parsed(family)


def test_ledger_read_once_per_family(monkeypatch):
    reads = []
    real = tomllib.loads
    monkeypatch.setattr(defaults.tomllib, "loads", lambda text: reads.append(1) or real(text))
    defaults._ledger_params.cache_clear()
    defaults._in_scope.cache_clear()
    defaults.ledger_differentiable.cache_clear()
    for _ in range(3):
        defaults.ledger_params("schedules")
    defaults.ledger_differentiable("loss")  # the edges tests' read of the same ledger
    assert len(reads) == 1


def test_a_caller_cannot_change_the_next_callers_answer():
    first = defaults.ledger_params("optimizers")
    name = next(iter(first))
    first[name] = ("changed",)
    first["added"] = ()
    again = defaults.ledger_params("optimizers")
    assert again == _parsed("optimizers")


class _Hiding(type):
    """A metaclass whose __call__ takes anything, as Flax's nnx.Object's does: inspect.signature(cls) then says
    (*args, **kwargs), and every parameter of __init__ would read "absent"."""

    def __call__(cls, *args, **kwargs):
        return super().__call__(*args, **kwargs)


class _Wrapper(metaclass=_Hiding):
    def __init__(self, model, tx, *, wrt, graph=None):
        pass


def test_a_class_whose_metaclass_hides_its_signature_is_read_from_its_init(monkeypatch):
    monkeypatch.setattr(defaults, "resolve", lambda name: _Wrapper)
    params = ("model", "tx", "wrt", "graph")
    assert defaults.defaults("x.Wrapper", params) == {"model": "required", "tx": "required", "wrt": "required",
                                                      "graph": "None"}
    assert defaults.kinds("x.Wrapper", params)["wrt"] == "keyword-only"
    assert defaults.kinds("x.Wrapper", params)["model"] == "positional or keyword"
