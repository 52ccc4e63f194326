"""What an in-scope callable reaches in its module (harness.coverage.spans.reached): the private functions it
names, transitively, the rules attached to them at module level with what those name, and nothing of the
functions outside the scope; the callable's own span (griffe's) is not repeated."""

from harness.coverage import spans

SOURCE = '''import functools


@functools.cache
def relu(x):
    return _helper(x)


relu.defjvps(lambda g, ans, x: _rule_helper(g))


def _rule_helper(g):
    return g


def _helper(x):
    return _inner(x)


def _inner(x):
    return x


@_helper.defjvp
def _helper_jvp(primals, tangents):
    return primals, tangents


@_custom.defvjp
def _custom_rule(x):
    return x


def attention(q):
    return _only_attention(q)


def _only_attention(q):
    return q


def _custom(x):
    return x


_custom.defvjp(_custom_fwd)


def _custom_fwd(x):
    return x
'''


def _line(start):
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if line.startswith(start))


def test_private_helpers_rules_and_what_the_rules_name_and_nothing_else():
    found = spans.reached(SOURCE, {"relu"})
    firsts = {first for first, _ in found}
    assert _line("relu.defjvps") in firsts  # its JVP rule at module level
    assert _line("def _rule_helper") in firsts  # what that rule names
    assert {_line("def _helper"), _line("def _inner"), _line("@_helper.defjvp")} <= firsts  # transitively
    assert _line("@functools.cache") not in firsts  # relu's own span is griffe's, not repeated
    assert _line("def attention") not in firsts and _line("def _only_attention") not in firsts
    assert _line("def _custom") not in firsts and _line("_custom.defvjp") not in firsts  # reached by nothing
    assert found == sorted(found)


def test_a_rule_attached_to_a_reached_helper_brings_what_it_names():
    found = spans.reached(SOURCE, {"attention", "_custom"})
    firsts = {first for first, _ in found}
    assert {_line("def _only_attention"), _line("_custom.defvjp"), _line("def _custom_fwd"),
            _line("@_custom.defvjp")} <= firsts


def test_a_name_not_defined_at_top_level_reaches_nothing():
    assert spans.reached(SOURCE, {"gelu"}) == []
