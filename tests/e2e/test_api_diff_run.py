"""The API diff of a run (harness.stack.run.api_diff, reader, sources): read under the matrix's Python in an
environment of its own (a 3.12-only module is read), cached by what it depends on; from the wheels of the
versions the reports ran when an entry's environment is gone or holds others, the same diff either way;
the verdict's exit rule in report mode; the section in HTML.

Here: the tests that start real uv and nox processes; the others are in
tests/unit/stack/api/test_api_diff_run.py."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from harness.errors import HarnessError
from harness.model import api_diff
from harness.model.api_diff import ApiChangeKind as K
from harness.stack.run import api_diff as for_run
from harness.stack.api import reader, sources
from harness.stack.environments import uv_program
from unit.stack.api.test_api_diff_run import (  # noqa: F401 (fixtures and helpers shared with it)
    ENTRIES, baseline, run,
)


REAL_FETCH = sources.fetch  # taken before the tests' guard (conftest.no_package_index) replaces it


def test_the_diff_reads_a_312_module_under_the_matrix_python_and_is_cached(run, monkeypatch, uv_bin, capsys):
    ws, directory, _ = run
    monkeypatch.setattr(uv_program, "uv", lambda: uv_bin)
    written = for_run.compute(ws, directory, ENTRIES)
    found = api_diff.read(written)
    jax = next(p for p in found.packages if p.package == "jax")
    assert jax.unread == [] and jax.problem is None  # `type Fun = object` parses under 3.12 only
    jit = next(c for c in jax.changes if c.symbol == "jax.jit")
    assert (jit.kind, jit.parameter, jit.new) == (K.PARAMETER_ADDED, "donate_argnums", "None") and jit.used_by_checks
    optax = {(c.kind, c.symbol, c.parameter) for c in found.packages[0].changes}
    assert optax == {(K.REMOVED, "optax.gone", None), (K.PARAMETER_ADDED, "optax.MultiSteps", "accumulator_dtype")}
    assert (ws.root / ".nox" / for_run.READER / "python3.12" / ".harness-api-reader").read_text().strip() == \
        reader.requirement()
    written.unlink()

    def not_again(*args, **kwargs):
        raise AssertionError("computed again though nothing it depends on changed")

    monkeypatch.setattr(reader, "run", not_again)
    assert api_diff.read(for_run.compute(ws, directory, ENTRIES)) == found  # from .nox/api-diff/


def test_the_diff_is_the_same_from_the_environments_or_from_the_wheels(run, monkeypatch, uv_bin):
    """Whatever is left in .nox/: the entries' environments are a fast path, the wheels of the versions the
    reports ran the rule (a run that rebuilt or pruned them, or reused its reports, has the same diff)."""
    ws, directory, libraries = run
    monkeypatch.setattr(uv_program, "uv", lambda: uv_bin)
    from_envs = api_diff.read(for_run.compute(ws, directory, ENTRIES))
    assert libraries.fetched == [] and any(p.changes for p in from_envs.packages)
    shutil.rmtree(libraries.root / "cache")
    libraries.envs, libraries.wheels = False, True  # the environments are gone
    from_wheels = api_diff.read(for_run.compute(ws, directory, ENTRIES))
    assert libraries.fetched == ["baseline", "candidate"]
    assert dataclasses.replace(from_wheels, seconds=0) == dataclasses.replace(from_envs, seconds=0)


def test_fetch_unpacks_the_versions_wheels_once(tmp_path, monkeypatch, uv_bin):
    monkeypatch.setattr(uv_program, "uv", lambda: uv_bin)
    monkeypatch.setattr(sources, "fetch", REAL_FETCH)
    entry = ENTRIES[0]
    site = sources.fetch(tmp_path, entry, {"optax": "0.2.6", "flax": None, "jax": None})
    assert for_run.installed(site)["optax"] == "0.2.6" and (site / "optax" / "__init__.py").is_file()
    assert not any(site.glob("jax*"))  # no dependencies
    monkeypatch.setattr(uv_program, "uv", lambda: None)  # fetched already: uv is not asked again
    assert sources.fetch(tmp_path, entry, {"optax": "0.2.6", "flax": None, "jax": None}) == site
    with pytest.raises(HarnessError, match="could not get optax==0.0.404"):
        monkeypatch.setattr(uv_program, "uv", lambda: uv_bin)
        sources.fetch(tmp_path, entry, {"optax": "0.0.404"})
