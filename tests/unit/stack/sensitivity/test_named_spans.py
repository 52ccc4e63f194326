"""The lines mutated in a module outside Optax: the named functions' spans (decorators included), the
private functions they reach, the JVP rules attached to them, and nothing of the functions not named."""

import pytest

from harness.errors import HarnessError
from harness.stack.sensitivity import named_spans

SOURCE = '''import functools


@functools.cache
def relu(x):
    return _helper(x)


relu.defjvps(lambda g, ans, x: g)


def _helper(x):
    return _inner(x)


def _inner(x):
    return x


@_helper.defjvp
def _helper_jvp(primals, tangents):
    return primals, tangents


def attention(q):
    return _only_attention(q)


def _only_attention(q):
    return q


swish = relu
'''


def _lines_of(name):
    lines = SOURCE.splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(name))


def test_the_named_functions_their_private_helpers_and_rules_and_nothing_else():
    found = named_spans.spans(SOURCE, ("relu", "swish", "tanh"))
    firsts = {first for first, _ in found}
    assert _lines_of("@functools.cache") in firsts  # relu from its decorator
    assert _lines_of("relu.defjvps") in firsts  # its JVP rule at module level
    assert {_lines_of("def _helper"), _lines_of("def _inner"), _lines_of("@_helper.defjvp")} <= firsts
    assert _lines_of("swish = relu") in firsts
    assert _lines_of("def attention") not in firsts and _lines_of("def _only_attention") not in firsts
    assert found == sorted(found)


def test_a_module_defining_none_of_the_names_is_an_error():
    with pytest.raises(HarnessError, match="nothing to mutate"):
        named_spans.spans(SOURCE, ("gelu",))
