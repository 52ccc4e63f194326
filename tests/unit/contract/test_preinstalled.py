"""The report says which of its stack's packages an entry imported from outside its environment (a TPU host's
JAX on PYTHONPATH), and the verdict's rows mark them "(preinstalled)": the judged pins take them as given."""

from __future__ import annotations

import copy
import sys

from harness.contract import environment
from harness.model import report_io
from harness.verdict import compare, render
from support import upgrade_reports


def test_inside_its_own_environment_nothing_is_preinstalled():
    assert environment.preinstalled() == {}  # this test environment installed its whole stack itself


def test_what_comes_from_outside_the_environment_is_named_with_its_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "prefix", str(tmp_path))  # as if the environment were elsewhere: all comes from outside
    found = environment.preinstalled()
    assert {"jax", "jaxlib", "numpy"} <= set(found)
    assert all(not path.startswith(str(tmp_path)) for path in found.values())


def test_of_two_copies_the_package_list_keeps_the_one_import_finds(monkeypatch):
    class Dist:
        def __init__(self, version):
            self.metadata, self.version = {"Name": "jax"}, version

    monkeypatch.setattr(environment.md, "distributions", lambda: [Dist("0.10.2"), Dist("0.11.2")])
    assert environment.packages() == {"jax": "0.10.2"}  # the first on sys.path, as `import jax` finds it


def test_the_verdict_marks_a_preinstalled_package_in_each_row():
    base, cand = copy.deepcopy(upgrade_reports.load("baseline")), copy.deepcopy(upgrade_reports.load("candidate"))
    for doc in (base, cand):
        doc["environment"]["preinstalled"] = {"jax": "/opt/device-scrub", "jaxlib": "/opt/device-scrub"}
    text = render.text(compare.judge(report_io.parse(base, "b"), [report_io.parse(cand, "c")]))
    assert "jax 0.11.2 (preinstalled) jaxlib 0.11.2 (preinstalled) optax 0.2.6" in text
    assert "jax 0.12.0.1 (preinstalled) jaxlib 0.12.0.1 (preinstalled) optax 0.2.8" in text
    plain = render.text(compare.judge(report_io.parse(upgrade_reports.load("baseline"), "b"),
                                      [report_io.parse(upgrade_reports.load("candidate"), "c")]))
    assert "(preinstalled)" not in plain
