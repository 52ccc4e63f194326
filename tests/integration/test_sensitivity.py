"""The committed equivalent mutants (harness/sensitivity/equivalent.toml) against the baseline's Optax, JAX and Flax
installed here: every mutant it names exists in that source (slow: cosmic-ray lists every mutant of the package).

The rest of the sensitivity tests is tests/unit/stack/sensitivity/test_sensitivity.py (one module, in-process)
and tests/e2e/test_sensitivity.py (cosmic-ray's workers)."""

from importlib.util import find_spec
from pathlib import Path

from harness.stack.sensitivity import equivalents, scope
from harness.stack.sensitivity.mutants import MutantId
from unit.stack.sensitivity.test_sensitivity import _session  # noqa: F401 (fixtures and helpers shared with it)


def test_the_committed_equivalent_file_names_mutants_of_the_baseline_optax(tmp_path):
    """Every entry of harness/sensitivity/equivalent.toml is a mutant cosmic-ray makes of the installed optax, jax
    or flax (every package a mutated module lies in)."""
    from harness.stack.sensitivity import crsession

    for package in scope.packages():
        (tmp_path / package).symlink_to(Path(find_spec(package).origin).parent)
    db = _session(tmp_path, list(scope.MODULES))
    known = [MutantId(m["module"], m["operator"], m["occurrence"], m["line"]) for m in crsession.list_mutants([str(db)])]
    assert len(known) > 1000
    equivalents.load(equivalents.PATH, known)  # raises on an entry that names no mutant
