"""What counts as the stack lacking what a built-in check calls (harness.contract.stack_lacks.reason): only
the exception's own word for it, never a failure inside a library call."""

import json
import sys
import types

import pytest

from harness.contract import stack_lacks


def _raised(fn):
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the exception is the subject
        return exc
    raise AssertionError("no exception")


@pytest.fixture
def library(monkeypatch):
    """A module of a library in the stack (optax's namespace), with one callable."""
    module = types.ModuleType("optax._fake_for_tests")

    def shrink(x, factor=0.5):
        if x is None:
            raise TypeError("shrink() got an unexpected keyword argument 'inner'")  # its own doing, running
        return x * factor

    shrink.__module__, shrink.__qualname__ = module.__name__, "shrink"  # as a module-level function is
    module.shrink = shrink
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module


def test_an_attribute_a_library_module_lacks(library):
    why = stack_lacks.reason(_raised(lambda: library.freeze))
    assert why is not None and why.startswith("not on this stack: optax ")
    assert why.endswith("has no optax._fake_for_tests.freeze")


def test_an_attribute_another_module_or_an_object_lacks_is_a_failure():
    assert stack_lacks.reason(_raised(lambda: json.no_such_thing)) is None
    assert stack_lacks.reason(_raised(lambda: object().model)) is None  # nnx's `.model` migration error is a fact


def test_a_keyword_the_library_callable_does_not_take(library):
    why = stack_lacks.reason(_raised(lambda: library.shrink(1.0, init_step=2)))
    assert why is not None and why.endswith("'s shrink takes no parameter 'init_step'")
    assert stack_lacks.reason(_raised(lambda: library.shrink(1.0, init_step=2)), keywords=False) is None


def test_a_keyword_error_raised_by_the_running_callable_is_its_own(library):
    assert stack_lacks.reason(_raised(lambda: library.shrink(None))) is None


def test_a_keyword_a_callable_takes_is_no_lack(library):
    exc = TypeError("shrink() got an unexpected keyword argument 'factor'")  # says so, but shrink takes it
    assert stack_lacks.reason(exc) is None


def test_a_module_that_does_not_import():
    why = stack_lacks.reason(_raised(lambda: __import__("optax.no_such_module_for_tests")))
    assert why is not None and why.endswith("has no module optax.no_such_module_for_tests")
    assert stack_lacks.reason(ModuleNotFoundError("No module named 'other'", name="other")) is None


def test_a_table_is_split_into_what_the_stack_builds_and_why_not_the_rest(library):
    def fails_inside():
        raise ValueError("the library's own complaint")

    buildable, lacking = stack_lacks.sort_buildable({
        "ok": lambda: library.shrink(1.0), "gone": lambda: library.gone(), "inside": fails_inside})
    assert sorted(buildable) == ["inside", "ok"]  # a failure that is no lack is left for the program to raise
    assert lacking["gone"].endswith("has no optax._fake_for_tests.gone")
