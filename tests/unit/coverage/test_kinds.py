"""The values a kind argument takes are read from the library's own annotation or body
(harness.coverage.kinds), and the audit asks a contract (or a gap's reason) for each (harness.coverage.audit)."""

import pytest

from harness.coverage import audit, kinds, ledger
from harness.coverage.surface import Param, PublicCallable


@pytest.mark.parametrize("annotation, compared, takes", [
    ("bool", (), ("True", "False")),
    ("bool | None", (), ("True", "False", "None")),
    ("Optional[bool]", (), ("True", "False", "None")),
    ("Literal['fan_in'] | Literal['fan_out']", (), ("fan_in", "fan_out")),
    ("tuple[Literal['distance', 'learning_rate', 'heuristic'], float]", (), ("distance", "learning_rate", "heuristic")),
    ("Literal['a', 'b'] | None", (), ("a", "b", "None")),
    ("str", ("mean", "sum", "none"), ("mean", "sum", "none")),
    ("", ("sps", "sps+"), ("sps", "sps+")),
    ("float", (), ()),
    ("base.ScalarOrSchedule", (), ()),
    ("int", ("x",), ()),  # an int compared with a string is no kind argument of strings
    (None, (), ()),
])
def test_the_values_an_argument_takes_are_its_annotations_or_its_bodys(annotation, compared, takes):
    assert kinds.values(annotation, compared) == takes


@pytest.mark.parametrize("default, value", [
    ("'fan_in'", "fan_in"), ('"mean"', "mean"), ("True", "True"), ("None", "None"),
    ("('heuristic', 1e-06)", "heuristic"), (None, None),
])
def test_a_defaults_value_is_read_from_its_source_text(default, value):
    assert kinds.default_value(default) == value


def test_the_strings_a_body_compares_an_argument_with_are_found_in_order():
    source = '''
    def loss(x, reduction="mean", other="a"):
        if reduction == "mean":
            return x.mean()
        elif "sum" == reduction:
            return x.sum()
        elif reduction in ("none", "keep"):
            return x
        if other != "b" and reduction is not None:
            raise ValueError(f"reduction must be 'mean', got {reduction}")
    '''
    assert kinds.compared_strings(source, "reduction") == ("mean", "sum", "none", "keep")
    assert kinds.compared_strings(source, "other") == ("b",)
    assert kinds.compared_strings("def broken(:", "x") == ()


CALLS = ("losses/test_dice_loss",)
CONTRACTS = {"losses/test_dice_loss", "losses/test_dice_reductions", "losses/test_elsewhere"}


def _dice(**params) -> PublicCallable:
    return PublicCallable("optax.dice", "function", "optax.losses.dice", (), (
        Param("x", "positional or keyword", None, "chex.Array"),
        Param("reduction", "positional or keyword", '"mean"', "str", ("mean", "sum", "none")),
        Param("apply_softmax", "positional or keyword", "True", "bool"), *params.values()))


def _entry(params=None, values=None, gaps=None, calls=CALLS) -> ledger.InScope:
    params = {"x": ("losses/test_dice_loss",), **(params or {})}
    return ledger.InScope("optax.dice", ledger.Area.LOSS, params, gaps or {}, None, calls,
                          gradient=("losses/test_dice_loss",), values=values or {})


@pytest.mark.parametrize("entry, finds", [
    # the default by the callable's contracts, a flag's other value by its params line, each other value by its own
    (_entry({"apply_softmax": ("losses/test_elsewhere",), "reduction": ("losses/test_dice_reductions",)},
            {"reduction": {"sum": ("losses/test_dice_reductions",), "none": ("losses/test_dice_reductions",)}}), []),
    # a value no contract is named for
    (_entry({"apply_softmax": ("losses/test_elsewhere",), "reduction": ("losses/test_dice_reductions",)},
            {"reduction": {"sum": ("losses/test_dice_reductions",)}}), ["NO_VALUE_LINE"]),
    # ... unless a gap says why
    (_entry({"apply_softmax": ("losses/test_elsewhere",), "reduction": ("losses/test_dice_reductions",)},
            {"reduction": {"sum": ("losses/test_dice_reductions",)}}, {"reduction=none": "not yet"}), []),
    # a flag's off value without a params line: nothing passes it
    (_entry({"reduction": ("losses/test_dice_reductions",)},
            {"reduction": {"sum": ("losses/test_dice_reductions",), "none": ("losses/test_dice_reductions",)}}),
     ["UNKNOWN_PARAM", "NO_VALUE_LINE"]),  # (the flag itself is not accounted for either)
    # the default is not exercised by the contracts named only for passing the argument off it
    # (one contract passes both off their defaults: neither reduction=mean nor apply_softmax=True is exercised)
    (_entry({"x": ("losses/test_dice_reductions",), "apply_softmax": ("losses/test_dice_reductions",),
             "reduction": ("losses/test_dice_reductions",)},
            {"reduction": {"sum": ("losses/test_dice_reductions",), "none": ("losses/test_dice_reductions",)}},
            calls=()), ["NO_VALUE_LINE", "NO_VALUE_LINE"]),
    # a value the argument does not take, a contract that does not exist
    (_entry({"apply_softmax": ("losses/test_elsewhere",), "reduction": ("losses/test_dice_reductions",)},
            {"reduction": {"sum": ("losses/test_dice_reductions",), "none": ("losses/test_nowhere",),
                           "max": ("losses/test_dice_reductions",)}}), ["NO_SUCH_VALUE", "NO_SUCH_CONTRACT"]),
])
def test_each_value_of_a_kind_argument_names_its_contracts_or_a_gap(entry, finds):
    problems = audit._params(entry, _dice(), CONTRACTS)
    assert [p.problem.name for p in problems] == finds, problems


def test_the_counts_say_how_many_values_are_exercised():
    entry = _entry({"apply_softmax": ("losses/test_elsewhere",), "reduction": ("losses/test_dice_reductions",)},
                   {"reduction": {"sum": ("losses/test_dice_reductions",)}}, {"reduction=none": "not yet"})
    found = audit.kind_values(entry, _dice())
    assert [(v.param, v.value, v.exercised) for v in found] == [
        ("reduction", "mean", True), ("reduction", "sum", True), ("reduction", "none", False),
        ("apply_softmax", "True", True), ("apply_softmax", "False", True)]
    assert found[2].gap == "not yet"
