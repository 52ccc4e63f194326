"""--harness-phases: a contract run says where its time went (start-up, collection, JAX compiling,
Hypothesis, the contract bodies, report writing)."""

import re

import pytest

from harness.model import phase_times  # here, not in a test: pytester's in-process runs unload what they import
from harness.model.enums import ReportPart


JITTED = '''
import jax
import numpy as np
import pytest

pytestmark = pytest.mark.family("jitted")


def test_jitted(check):
    check.exact("one plus one", float(jax.jit(lambda x: x + 1.0)(np.float32(1.0))), 2.0)
'''


MODULES = "per contract module (its checks: setup, call, teardown)"


def _rows(output: str) -> dict[str, list[str]]:
    """The table's rows by label: the numbers and the note after them (the phases, not the modules below)."""
    rows = {}
    for line in output.split(MODULES)[0].splitlines():
        found = re.match(r"^(\S.*?|  \S.*?)\s{2,}([\d.?]+)(?:\s+([\d.?]+))?(?:\s{2,}(\S.*))?$", line)
        if found:
            rows[found.group(1).strip()] = [g for g in found.groups()[1:] if g]
    return rows


def test_the_table_names_every_phase_and_counts_the_examples(recorded_suite):
    result, doc = recorded_suite("--harness-phases")
    text = result.stdout.str()
    assert "where this contract run's time went" in text
    rows = _rows(text)
    for label in ("start-up (Python, pytest, plugins)", "set-up (recorder, first report, JAX import)",
                  "collection (contract modules and their imports)", "checks (6 items)",
                  "Hypothesis: drawing examples", "Hypothesis: the rest of its engine",
                  "contract bodies (computations, references, comparisons)", "total",
                  "report writing (every write, within the phases above)"):
        assert label in rows, f"{label!r} missing from:\n{text}"
    assert rows["Hypothesis: drawing examples"][-1] == f"{doc['hypothesis']['examples_run']} examples"
    # measured and shown (a small report is written in well under 5 ms: it may round to 0.00)
    assert float(rows["report writing (every write, within the phases above)"][0]) >= 0


def test_compiles_are_counted_and_timed(suite, pytester):
    pytest.importorskip("jax")
    pytester.makepyfile(test_jitted=JITTED)
    result, _ = suite("--harness-phases", "-k", "jitted")
    row = _rows(result.stdout.str())["JAX tracing, lowering, compiling"]
    assert float(row[0]) > 0 and re.match(r"[1-9]\d* compiles", row[-1]), row


def test_each_module_is_shown_with_its_checks_and_programs(suite, pytester):
    pytest.importorskip("jax")
    pytester.makepyfile(test_jitted=JITTED)
    result, _ = suite("--harness-phases")
    below = result.stdout.str().split(MODULES)[1]
    modules = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^(test_\w+\.py)\s+([\d.]+)\s+([\d.]+)\s+checks: (\d+), JAX programs: (\d+)$", below, re.M)}
    assert set(modules) == {"test_demo.py", "test_jitted.py"}, below
    assert modules["test_jitted.py"][2:] == ("1", "1"), below  # one check, one jitted program
    assert modules["test_demo.py"][3] == "0", below  # the synthetic suite needs no JAX


def test_without_the_option_nothing_is_measured_or_printed(suite, pytester):
    result, _ = suite()
    assert "time went" not in result.stdout.str()
    config = pytester.parseconfigure("-p", "harness.contract.plugin")
    assert config.pluginmanager.get_plugin("harness-phases") is None




# --- an upgrade's --harness-phases: the entry's pytest run writes its phases as data --------------------------

def test_told_a_directory_the_run_writes_its_phases_as_data_and_prints_nothing(recorded_suite, tmp_path,
                                                                              monkeypatch):
    from support import jobs

    jobs.tell(monkeypatch, tmp_path / "job", phases_dir=tmp_path)  # as an upgrade's entry is told it
    result, doc = recorded_suite()
    assert "time went" not in result.stdout.str()
    written = phase_times.read(tmp_path)
    assert [(p.source, p.part) for p in written] == [(phase_times.Source.SUITE, ReportPart.ALL)]
    run = written[0]
    names = [t.name for t in run.timings]
    assert names == ["start-up (Python, pytest, plugins)", "set-up (recorder, first report, JAX import)",
                     "collection (contract modules and their imports)", "checks (6 items)",
                     "end (final report, summary, temporary files)", "total",
                     "report writing (every write, within the phases above)"]
    checks = run.timings[3]
    assert [p.name for p in checks.parts] == ["JAX tracing, lowering, compiling", "Hypothesis: drawing examples",
                                              "Hypothesis: the rest of its engine",
                                              "contract bodies (computations, references, comparisons)"]
    assert checks.parts[1].note == f"{doc['hypothesis']['examples_run']} examples"
    assert run.cpu_s == run.timings[5].cpu_s and run.ended_at >= (run.started_at or 0)


def test_a_run_writing_one_part_of_an_entrys_report_writes_that_parts_phases(recorded_suite, tmp_path,
                                                                               monkeypatch):
    """A team's entry runs its built-in and own contracts in a process each, each writing its part's report
    (`<entry>.<part>.json`): each writes its own phases file, so the upgrade's profile shows both."""
    from support import jobs

    jobs.tell(monkeypatch, tmp_path / "job", phases_dir=tmp_path)
    recorded_suite(report="candidate.builtin.json")
    recorded_suite(report="candidate.own.json")
    assert sorted(p.name for p in tmp_path.glob("suite*.json")) == ["suite-builtin.json", "suite-own.json"]
    assert {p.part for p in phase_times.read(tmp_path)} == {ReportPart.BUILTIN, ReportPart.OWN}  # one process here: no order


def test_the_printed_table_and_the_data_are_the_same_phases(recorded_suite, tmp_path, monkeypatch):
    from support import jobs

    jobs.tell(monkeypatch, tmp_path / "job", phases_dir=tmp_path)  # as an upgrade's entry is told it
    result, _ = recorded_suite("--harness-phases")
    rows = _rows(result.stdout.str())
    (written,) = phase_times.read(tmp_path)
    labels = [n for t in written.timings for n in (t.name, *(p.name for p in t.parts))]
    assert labels == list(rows)
