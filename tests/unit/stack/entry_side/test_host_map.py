"""A run on an emulated host takes the checks whose golden values the recording measured that host moving, at every
turn, and one bucket of the others, turning with each commit, so every check runs there once in SAMPLE_OF
(harness.stack.entry_side.host_map). The golden files and the report are made here; the recording's measured map
is each value's `host_noise`."""

from __future__ import annotations

import dataclasses
import json

from harness.stack.entry_side import host_map


@dataclasses.dataclass(frozen=True)
class Compared:
    label: str


@dataclasses.dataclass(frozen=True)
class Checked:
    id: str
    family: str
    comparisons: tuple[Compared, ...]


@dataclasses.dataclass(frozen=True)
class Ran:
    checks: tuple[Checked, ...]


def _golden(tmp_path):
    golden = tmp_path / "golden"
    golden.mkdir()
    values = {"orthogonal/q": {"dtype": "float32", "shape": [2], "values": [0.02, 0.9],
                               "host_noise": {"blas": 3e-8, "fma": 1e-8}},
              "adam/w": {"dtype": "float32", "shape": [1], "values": [0.5], "host_noise": {"fma": 6e-8}},
              "uniform": {"dtype": "float32", "shape": [1], "values": [0.25]}}
    (golden / "initializers.json").write_text(json.dumps({"format": 1, "family": "initializers", "values": values}))
    return golden


def _report() -> Ran:
    checks = [Checked("initializers/test_orthogonal", "initializers", (Compared("golden:orthogonal/q"),)),
              Checked("initializers/test_adam", "initializers", (Compared("golden:adam/w"),
                                                                 Compared("reference:adam"))),
              Checked("initializers/test_uniform", "initializers", (Compared("golden:uniform"),)),
              Checked("masks/test_orthogonal", "masks", (Compared("golden:orthogonal/q"),))]  # another family's key
    checks += [Checked(f"shapes/test_{i}", "shapes", (Compared(f"reference:{i}"),)) for i in range(60)]
    return Ran(tuple(checks))


def test_the_checks_a_dimension_moved_run_at_every_turn_and_the_others_once_in_sample_of(tmp_path):
    golden, report = _golden(tmp_path), _report()
    assert host_map.sensitive(report, golden) == {"initializers/test_orthogonal": frozenset({"blas", "fma"}),
                                                  "initializers/test_adam": frozenset({"fma"})}
    others = [c.id for c in report.checks if c.id not in ("initializers/test_orthogonal", "initializers/test_adam")]
    seen: list[str] = []
    for turn in range(host_map.SAMPLE_OF):
        blas = host_map.select(report, golden, "blas", turn)
        assert blas.sensitive == ("initializers/test_orthogonal",)
        assert "initializers/test_orthogonal" in blas.checks and len(blas.checks) < len(report.checks) // 2
        assert host_map.select(report, golden, "fma", turn).sensitive == ("initializers/test_adam",
                                                                           "initializers/test_orthogonal")
        seen += [c for c in blas.sampled]
    assert sorted(seen) == sorted(c for c in others + ["initializers/test_adam"])  # each once in SAMPLE_OF turns


def test_a_selection_is_the_same_for_one_turn_and_written_one_id_a_line(tmp_path):
    golden, report = _golden(tmp_path), _report()
    first = host_map.select(report, golden, "vector", 3)
    assert first == host_map.select(report, golden, "vector", 3) and first.sensitive == ()
    written = host_map.write(first, tmp_path / "sel" / "vector.txt").read_text().splitlines()
    assert written == first.checks and "bucket 4 of 8" in first.said()
