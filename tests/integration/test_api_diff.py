"""The API diff (harness.stack.api, harness.verdict.api_view): griffe's breaking changes and the
additions between two tiny fake packages; which checks and which lines of a team's code call a changed
name; the verdict's section and its links to the changed contracts; the exit rule.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/api/test_api_diff.py."""

from __future__ import annotations

from pathlib import Path

from harness.model import api_diff as model
from harness.model.api_diff import ApiChange, ApiChangeKind as K
from harness.stack.api import compare_stack, diff, loading, surface
from harness.stack.selection import usage
from unit.stack.api.test_api_diff import (  # noqa: F401 (fixtures and helpers shared with it)
    NEW, OLD, _package, changes,
)


def _found(changes: list[ApiChange]) -> set[tuple]:
    return {(c.kind, c.symbol, c.parameter) for c in changes}


def test_every_kind_of_change_between_two_fake_packages(changes):
    assert _found(changes) == {
        (K.REMOVED, "fakelib.gone", None),
        (K.MODULE_REMOVED, "fakelib.sub_gone", None),
        (K.PARAMETER_REMOVED, "fakelib.params", "b"),
        (K.KEYWORD_ONLY, "fakelib.kwonly", "b"),
        (K.DEFAULT_CHANGED, "fakelib.default_changed", "x"),
        (K.PARAMETER_ADDED, "fakelib.params", "c"),
        (K.PARAMETER_ADDED, "fakelib.Acc", "dtype"),  # a class's parameters are its constructor's
        (K.ADDED, "fakelib.fresh", None),
        (K.MODULE_ADDED, "fakelib.sub_new", None),
    }  # nothing for `same`, the members of the removed and added modules, or the package's own tests
    assert [c.kind.breaking for c in changes] == sorted((c.kind.breaking for c in changes), reverse=True)
    by = {(c.kind, c.symbol): c for c in changes}
    assert (by[K.DEFAULT_CHANGED, "fakelib.default_changed"].old, by[K.DEFAULT_CHANGED, "fakelib.default_changed"].new) == ("1", "2")
    added = by[K.PARAMETER_ADDED, "fakelib.Acc"]
    assert (added.new, added.doc) == ("'float32'", "the accumulator's dtype; defaults to float32.")


def test_the_same_package_has_no_change(tmp_path):
    site = _package(tmp_path / "old", "fakelib", OLD)
    old, new = loading.load_package("fakelib", site), loading.load_package("fakelib", site)
    assert diff.compare("fakelib", old, new, surface.walk(old), surface.walk(new)) == []


def test_load_names_reads_only_the_modules_the_names_need(tmp_path):
    site = _package(tmp_path / "new", "fakelib", NEW)
    root = loading.load_names({"fakelib.params"}, site)
    assert surface.resolve(root["params"]).path == "fakelib._src.impl.params"
    assert "sub_new" not in root.members  # not needed for fakelib.params: not read


def _fake_optax(root: Path, files: dict[str, str]) -> Path:
    return _package(root, "optax", {k: v.replace("fakelib", "optax") for k, v in files.items()
                                    if not k.endswith("_test.py")})


def test_a_team_code_use_of_a_changed_name_is_marked(tmp_path):
    sites = (_fake_optax(tmp_path / "old", OLD), _fake_optax(tmp_path / "new", NEW))
    code = tmp_path / "project" / "trainer"
    code.mkdir(parents=True)
    (code / "train.py").write_text("import optax\n\n\ndef run():\n    optax.gone()\n    return optax.same(1)\n")
    project = usage.scan(code.parent, usage.python_files(code.parent))
    found = compare_stack.compare_entries("candidate", sites, ({"optax": "1"}, {"optax": "2"}), [], project,
                                          code.parent)
    optax = found.packages[0]
    gone = next(c for c in optax.changes if c.symbol == "optax.gone")
    assert gone.used_by_project == ["trainer/train.py:5"] and gone.used_by_checks == []
    assert [c.symbol for c in found.used_removals] == ["optax.gone"]
    assert all(not c.used_by_project for c in optax.changes if c.symbol != "optax.gone")
    assert found.packages[1].problem  # no flax in the fake sites: said, not fatal
    model.write(tmp_path / "api-diff.json", found)
    assert model.read(tmp_path / "api-diff.json") == found
