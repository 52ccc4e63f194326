"""`nox -s tests` runs, on each emulated host, only the checks the recording measured that host moving and one
bucket of the others, turning with each commit (harness.stack.entry_side.host_map): a host-dependent golden value
planted under another BLAS kernel is still caught. The value reads the kernel from OPENBLAS_CORETYPE, as a QR
factor computed by OpenBLAS does: recorded natively, it moves under the emulated kernel beyond its golden ulps.

- A check the map names (its recording measured that kernel moving it a little, and it now moves far more) fails on
  the emulated host at every turn.
- A check that became host-dependent without the map saying so fails there at its bucket's turn, one turn in
  SAMPLE_OF: within SAMPLE_OF commits.
Each run is the contract suite's real pytest process under the emulation's variables, its checks the selection's."""

from __future__ import annotations

import json
import os

import pytest

from harness import host_emulation
from harness.model import report_io
from harness.model.host import Dimension
from harness.stack.entry_side import host_map

CONTRACTS = '''
import os

import numpy as np
import pytest

pytestmark = pytest.mark.family("factors")
RECORDED_ON = os.environ.get("PLANTED_RECORDED_ON", "")


def factor(moves_by):
    """A QR factor's small element: on another kernel than the recording's, `moves_by` float32 ulps away."""
    value = np.float32(0.0201833)
    other_kernel = os.environ.get("OPENBLAS_CORETYPE", "") != RECORDED_ON
    return np.array([value + np.float32(moves_by) * np.spacing(value) if other_kernel else value, -0.9374888],
                    np.float32)


def test_mapped(check):
    check.golden("mapped", factor(400))


def test_newly_host_dependent(check):
    check.golden("new", factor(400))


@pytest.mark.parametrize("n", range(40))
def test_stable(check, n):
    check.golden(f"stable/{n}", np.array([n * 0.25], np.float32))
'''


def _blas_emulation() -> host_emulation.Emulation:
    """A BLAS kernel other than this machine's own (the variable left as the environment sets it)."""
    own = os.environ.get("OPENBLAS_CORETYPE", "")
    return next(e for e in host_emulation.EMULATIONS
                if e.dimension == Dimension.BLAS and e.blas and e.blas.lower() != own.lower())


@pytest.fixture
def planted(pytester):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_factors=CONTRACTS)
    pytester.mkdir("golden")
    environ = {"PLANTED_RECORDED_ON": os.environ.get("OPENBLAS_CORETYPE", "")}

    def run(*args, env=None):
        with pytest.MonkeyPatch.context() as patch:
            for name, value in {**environ, **(env or {})}.items():
                patch.setenv(name, value)
            return pytester.runpytest_subprocess("-q", "-p", "no:randomly", "--harness-golden-dir=golden",
                                                 "--harness-profile=ci", *args)

    assert run("--harness-record-golden", "--harness-report=recorded.json").ret == 0
    # The map the recording measured: that kernel moved `mapped` by a little (its host noise), nothing else.
    store = pytester.path / "golden" / "factors.json"
    doc = json.loads(store.read_text())
    doc["values"]["mapped"][host_emulation.HOST_NOISE] = {"blas": 2e-9}
    store.write_text(json.dumps(doc))
    return run


def test_a_value_planted_under_another_kernel_is_caught_there(planted, pytester):
    emulation = _blas_emulation()
    assert planted("--harness-report=native.json").ret == 0  # natively every value holds
    checks = report_io.load(pytester.path / "native.json").checks
    moved = host_map.sensitive(checks, pytester.path / "golden")
    assert moved == {"factors/test_mapped": frozenset({"blas"})}
    new = "factors/test_newly_host_dependent"
    caught_new = []
    for turn in range(host_map.SAMPLE_OF):
        selection = host_map.select(checks, moved, Dimension.BLAS.value, turn)
        only = host_map.write(selection, pytester.path / f"turn{turn}.txt")
        result = planted(f"--harness-only={only}", f"--harness-report=turn{turn}.json",
                         env=emulation.environment(dict(os.environ)))
        failed = {c.id for c in report_io.load(pytester.path / f"turn{turn}.json").checks if c.outcome.value != "passed"}
        assert result.ret == 1 and "factors/test_mapped" in failed, (turn, failed)  # every turn
        assert failed <= {"factors/test_mapped", new}, failed
        assert len(selection.checks) < len(checks) // 2  # a share of the run, not all of it
        if new in failed:
            caught_new.append(turn)
    assert caught_new == [host_map.bucket_of(new)]  # once in SAMPLE_OF turns: within SAMPLE_OF commits
