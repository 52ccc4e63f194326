"""A run on an emulated host takes the checks whose golden values the recording measured that host moving, at every
turn, and one bucket of the others, turning with each commit, so every check runs there once in SAMPLE_OF
(harness.stack.entry_side.host_map). The golden files and the report are made here; the recording's measured map
is each value's `host_noise`."""

from __future__ import annotations

import json

from harness.model.enums import CheckKind, ComparisonKind, Outcome
from harness.model.report import CheckRecord, Comparison, Tolerance
from harness.stack.entry_side import host_map


def _check(check_id: str, family: str, *labels: str) -> CheckRecord:
    comparisons = [Comparison(label, ComparisonKind.GOLDEN if label.startswith("golden:") else ComparisonKind.REFERENCE,
                              True, Tolerance(4), "float32", [1]) for label in labels]
    return CheckRecord(id=check_id, nodeid=f"{family}.py::x", family=family, kind=CheckKind.GOLDEN,
                       outcome=Outcome.PASSED, duration_s=0.0, exception=None, message="", falsifying_example=None,
                       examples=None, max_abs_err=None, max_rel_err=None, comparisons=comparisons, errors_observed={},
                       series={})


def _golden(tmp_path):
    golden = tmp_path / "golden"
    golden.mkdir()
    values = {"orthogonal/q": {"dtype": "float32", "shape": [2], "values": [0.02, 0.9],
                               "host_noise": {"blas": 3e-8, "fma": 1e-8}},
              "adam/w": {"dtype": "float32", "shape": [1], "values": [0.5], "host_noise": {"fma": 6e-8}},
              "uniform": {"dtype": "float32", "shape": [1], "values": [0.25]}}
    (golden / "initializers.json").write_text(json.dumps({"format": 1, "family": "initializers", "values": values}))
    return golden


def _report() -> list[CheckRecord]:
    checks = [_check("initializers/test_orthogonal", "initializers", "golden:orthogonal/q"),
              _check("initializers/test_adam", "initializers", "golden:adam/w", "reference:adam"),
              _check("initializers/test_uniform", "initializers", "golden:uniform"),
              _check("masks/test_orthogonal", "masks", "golden:orthogonal/q")]  # another family's key
    return checks + [_check(f"shapes/test_{i}", "shapes", f"reference:{i}") for i in range(60)]


def test_the_checks_a_dimension_moved_run_at_every_turn_and_the_others_once_in_sample_of(tmp_path):
    golden, report = _golden(tmp_path), _report()
    moved = host_map.sensitive(report, golden)
    assert moved == {"initializers/test_orthogonal": frozenset({"blas", "fma"}),
                                                  "initializers/test_adam": frozenset({"fma"})}
    others = [c.id for c in report if c.id not in ("initializers/test_orthogonal", "initializers/test_adam")]
    seen: list[str] = []
    for turn in range(host_map.SAMPLE_OF):
        blas = host_map.select(report, moved, "blas", turn)
        assert blas.sensitive == ("initializers/test_orthogonal",)
        assert "initializers/test_orthogonal" in blas.checks and len(blas.checks) < len(report) // 2
        assert host_map.select(report, moved, "fma", turn).sensitive == ("initializers/test_adam",
                                                                           "initializers/test_orthogonal")
        seen += [c for c in blas.sampled]
    assert sorted(seen) == sorted(c for c in others + ["initializers/test_adam"])  # each once in SAMPLE_OF turns


def test_a_selection_is_the_same_for_one_turn_and_written_one_id_a_line(tmp_path):
    report = _report()
    moved = host_map.sensitive(report, _golden(tmp_path))
    first = host_map.select(report, moved, "vector", 3)
    assert first == host_map.select(report, moved, "vector", 3) and first.sensitive == ()
    written = host_map.write(first, tmp_path / "sel" / "vector.txt").read_text().splitlines()
    assert written == first.checks and "bucket 4 of 8" in first.said()


def test_the_map_takes_every_directory_a_family_is_recorded_in_and_leaves_out_the_rest(tmp_path):
    """A team's recording reads its own files, its copies of the built-in families and the tool's values: a key's
    dimensions are the union (more emulated, never fewer); what the selection does not take is left out, and a
    check the report does not hold is in neither list (it runs)."""
    golden, report = _golden(tmp_path), _report()
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    values = {"uniform": {"dtype": "float32", "shape": [1], "values": [0.25], "host_noise": {"vector": 1e-8}}}
    (shipped / "initializers.json").write_text(json.dumps({"format": 1, "family": "initializers", "values": values}))
    moved = host_map.sensitive(report, golden, shipped)
    assert moved["initializers/test_uniform"] == frozenset({"vector"})
    assert moved["initializers/test_orthogonal"] == frozenset({"blas", "fma"})
    selection = host_map.select(report, moved, "vector", 0)
    left = host_map.left_out(report, selection)
    assert "initializers/test_uniform" in selection.checks and "initializers/test_uniform" not in left
    assert sorted(left + selection.checks) == sorted(c.id for c in report)
    written = host_map.write_ids(left, tmp_path / "left.txt").read_text().splitlines()
    assert written == left and "initializers/test_new" not in written


def test_the_tests_emulated_runs_count_no_check_of_the_data_parallel_family(tmp_path, monkeypatch):
    """Its process is not emulated: `nox -s tests`' selection says how many of the checks a host can run it takes."""
    from harness import host_emulation
    from harness.stack.entry_side import emulated

    report = _report() + [_check("data_parallel/test_pmean", "data_parallel", "golden:pmean")]
    monkeypatch.setattr(emulated.report_io, "load", lambda path: type("Report", (), {"checks": report})())
    monkeypatch.setattr(emulated.project, "load", lambda ws: type("Project", (), {"golden": _golden(tmp_path),
                                                                                   "root": tmp_path})())
    monkeypatch.setattr(emulated.host_map, "turn", lambda root: 0)
    blas = next(e for e in host_emulation.EMULATIONS if e.dimension.value == "blas")
    monkeypatch.setattr(emulated, "tested", lambda session: [blas])
    taken = []
    monkeypatch.setattr(emulated, "run_on", lambda session, ws, entry, emulation, report, selection, spread=():
                        taken.append(selection))
    monkeypatch.setattr(emulated.stack_entry, "report_path", lambda reports, entry, name: tmp_path / f"{name}.json")
    emulated.run_tested(None, type("Ws", (), {"reports": tmp_path})(), None, tmp_path / "native.json")
    (selection,) = taken
    assert selection.total == len(report) - 1 and not any(c.startswith("data_parallel/") for c in selection.checks)
