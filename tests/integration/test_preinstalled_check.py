"""An entry's Python asked, before its suite, which of its lock's packages it imports from outside its environment
(harness.stack.entry_side.preinstalled, through the contract side's own lookup in that Python)."""

from harness.stack.entry_side import preinstalled


def test_the_entrys_python_is_asked_and_a_package_from_outside_its_environment_is_named(tmp_path):
    """check() end to end: an "environment" whose python runs this test's interpreter, so every package it imports
    comes from outside that folder; the lock pins another jax than the one found."""
    import os
    import sys
    from importlib.metadata import version

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # this environment's Python
    os.chmod(venv / "bin" / "python", 0o755)
    lock = tmp_path / "lock.txt"
    lock.write_text(f"jax==0.0.1\nnumpy=={version('numpy')}\n")
    said = preinstalled.check(str(venv), lock)
    assert said is not None and f"jax {version('jax')} from " in said and "instead of the locked jax==0.0.1" in said
    assert "numpy" not in said.split("pin ", 1)[1]  # the matching pin is not named
    lock.write_text(f"jax=={version('jax')}\n")
    assert preinstalled.check(str(venv), lock) is None
