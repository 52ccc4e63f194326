"""The API diff (harness.stack.api, harness.verdict.api_view): griffe's breaking changes and the
additions between two tiny fake packages; which checks and which lines of a team's code call a changed
name; the verdict's section and its links to the changed contracts; the exit rule."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from harness.model import report_io
from harness.model.api_diff import ApiChange, ApiChangeKind as K, ApiDiff, PackageApiDiff
from harness.verdict import compare, markdown, render
from harness.stack.api import compare_stack, diff, loading, surface
from harness.stack.selection import usage

from support import upgrade_reports

OLD = {
    "__init__.py": """
        from fakelib._src.impl import Acc, default_changed, gone, kwonly, params, same
        from fakelib import sub_gone
        __all__ = ["Acc", "default_changed", "gone", "kwonly", "params", "same", "sub_gone"]
    """,
    "_src/impl.py": """
        class Acc:
            def __init__(self, k):
                self.k = k
        def default_changed(x=1): ...
        def gone(): ...
        def kwonly(a, b): ...
        def params(a, b=1): ...
        def same(a): ...
    """,
    "sub_gone/__init__.py": "def inside(): ...\n",
    "fakelib_test.py": "def test_x(): ...\n",
}
NEW = {
    "__init__.py": """
        from fakelib._src.impl import Acc, default_changed, fresh, kwonly, params, same
        from fakelib import sub_new
        __all__ = ["Acc", "default_changed", "fresh", "kwonly", "params", "same", "sub_new"]
    """,
    "_src/impl.py": """
        class Acc:
            def __init__(self, k, dtype="float32"):
                \"\"\"Init.

                Args:
                    k: steps.
                    dtype: the accumulator's dtype; defaults to float32.
                \"\"\"
                self.k = k
        def default_changed(x=2): ...
        def fresh(): ...
        def kwonly(a, *, b): ...
        def params(a, c=None): ...
        def same(a): ...
    """,
    "sub_new/__init__.py": "def inside(): ...\n",
    "fakelib_test.py": "def test_x(): ...\n",
}


def _package(root: Path, name: str, files: dict[str, str]) -> Path:
    """A site-packages folder holding package `name` ("_src" without __init__.py, as optax has it)."""
    for rel, text in files.items():
        path = root / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture()
def changes(tmp_path) -> list[ApiChange]:
    old_site, new_site = _package(tmp_path / "old", "fakelib", OLD), _package(tmp_path / "new", "fakelib", NEW)
    old, new = loading.load_package("fakelib", old_site), loading.load_package("fakelib", new_site)
    return diff.compare("fakelib", old, new, surface.walk(old), surface.walk(new))


PROJECT = '''
    import optax
    from optax import MultiSteps as MS

    CASES = {"multisteps": lambda: MS(optax.sgd(0.1), 2)}

    def helper():
        return optax.clip(1.0)

    def test_state(check):
        CASES["multisteps"]()

    def test_clip(check):
        helper()
'''


def test_usage_credits_each_test_with_what_it_reaches(tmp_path):
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(PROJECT))
    uses = compare_stack.check_uses(usage.scan(tmp_path, usage.python_files(tmp_path)))
    assert set(uses["test_mine.py::test_state"]) == {"optax.MultiSteps", "optax.sgd"}
    assert set(uses["test_mine.py::test_clip"]) == {"optax.clip"}


@pytest.fixture(scope="module")
def reports():
    return {name: report_io.parse(upgrade_reports.load(name), name) for name in ("baseline", "candidate")}


def _diff(*changes: ApiChange) -> ApiDiff:
    return ApiDiff(1, "candidate", [PackageApiDiff("optax", "public API", "0.2.6", "0.2.8", list(changes))], 0.5)


ACC = ApiChange("optax", K.PARAMETER_ADDED, "optax.MultiSteps", "accumulator_dtype", new="jnp.float32",
                doc="Optional `dtype` to be used for the accumulator; defaults to `float32`.",
                used_by_checks=["test_accumulation.py::test_state_layout"])
MODULE_GONE = ApiChange("optax", K.MODULE_REMOVED, "optax.monte_carlo")


def test_the_verdict_links_a_new_parameter_to_the_state_change_it_explains(reports):
    verdict = compare.judge(reports["baseline"], [reports["candidate"]], api=_diff(MODULE_GONE, ACC))
    text = render.text(verdict)
    block = re.split(r"\n {4}\S", text.split("\n    accumulation/test_state_layout")[1])[0]
    assert ("API: parameter added: optax.MultiSteps(accumulator_dtype=jnp.float32) (Optional `dtype` to be used "
            "for the accumulator; defaults to `float32`.); accumulator_dtype=bfloat16 keeps the baseline's "
            "behaviour here (bfloat16 → float32)") in block
    section = text.split("API changes, candidate vs baseline")[1]
    assert section.index("BREAKING module removed: optax.monte_carlo") < section.index("parameter added")
    assert "1 contract calls it" in section
    assert "accumulator_dtype=bfloat16 keeps" in markdown.markdown(verdict)
    assert render.as_json(verdict)["api_diff"]["packages"][0]["changes"][1]["parameter"] == "accumulator_dtype"


def test_a_removed_name_is_a_change_only_when_something_judged_calls_it(reports):
    base = reports["baseline"]
    unused = compare.judge(base, [base], api=_diff(MODULE_GONE, ACC))
    assert unused.exit_status == 0 and unused.headline.startswith("OK")
    used = ApiChange("optax", K.REMOVED, "optax.MultiSteps", used_by_checks=["test_accumulation.py::test_state_layout"])
    called = compare.judge(base, [base], api=_diff(used))
    assert called.exit_status == 1
    assert called.headline == "CHANGED: API: optax.MultiSteps removed, which 1 contract calls"
    param = ApiChange("optax", K.PARAMETER_REMOVED, "optax.clip", "max_delta", used_by_project=["trainer/train.py:7"])
    assert compare.judge(base, [base], api=_diff(param)).exit_status == 1
    added = ApiChange("optax", K.ADDED, "optax.signum", used_by_project=["trainer/train.py:9"])
    assert compare.judge(base, [base], api=_diff(added)).exit_status == 0


def test_a_package_installed_on_neither_side_is_said_so_not_none():
    """A project that does not use flax installs none: its API line says so, never "None on both"."""
    from harness.model.api_diff import PackageApiDiff
    from harness.verdict import api_view

    found = PackageApiDiff("flax", "flax.nnx", None, None, [], problem="not read: flax")
    assert api_view.package_title(found) == "flax.nnx: installed on neither side"
    assert api_view.package_title(PackageApiDiff("flax", "flax.nnx", "0.12.12", None, [], problem="gone")) == \
        "flax.nnx 0.12.12 → not installed: gone"
