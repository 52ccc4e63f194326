"""The sensitivity run's scope against the coverage ledger: every Optax module that defines an in-scope
callable is mutated (harness.stack.sensitivity.scope.MODULES) or named, with why, in NOT_MUTATED; every
mutated module defines one. The modules come from Optax's source (griffe), not from a list.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_sensitivity_scope.py."""

from harness.stack.sensitivity.lines import ScopeLines
from harness.stack.sensitivity.mutants import MutantId


def test_a_mutant_counts_only_within_an_in_scope_span_of_a_restricted_module_and_anywhere_in_a_whole_one():
    lines = ScopeLines({"optax/_src/t.py": ((10, 20), (40, 41))})
    mutants = [MutantId("optax/_src/t.py", "core/Op", i, line) for i, line in enumerate((9, 10, 20, 21, 41, 42))]
    whole = [MutantId("optax/w.py", "core/Op", 0, 1), MutantId("optax/w.py", "core/Op", 1, 999)]
    inside, outside = lines.split(mutants + whole)
    assert [m.line for m in inside] == [10, 20, 41, 1, 999]  # the first and last line of a span are in it
    assert outside == {"optax/_src/t.py": 3}  # 9, 21 and 42: counted, not dropped
