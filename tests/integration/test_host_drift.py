"""A host-dependent golden value planted and judged (harness.host_emulation, harness.verdict.host_drift): a made-up
library whose QR factor's small element moves with the BLAS kernel, as scipy's OpenBLAS does with
OPENBLAS_CORETYPE. Its values are recorded on one kernel with another emulated beside it; on a host running a
third kernel the baseline drifts within the host noise measured then: the verdict judges on, says so in one line,
and judges the candidate against this machine's baseline values, so that a change smaller than the host's
allowance is still a change and a candidate that only drifts as the baseline does is none. Beyond that noise the
baseline is broken: CANNOT JUDGE."""

from __future__ import annotations

import json

import pytest

from harness.contract import environment
from harness.model import report_io
from harness.model.enums import Mark
from harness.model.host import Host
from harness.verdict import compare, host_drift, html, markdown, render

LIBRARY = '''
import os
import numpy as np

# How far each kernel moves the small element, in units of 1.2e-7 (about 64 ulp of float32 at 0.02): the
# recording's kernel not at all, the emulated one once, a kernel never emulated three times, a broken one ten;
# one within the golden ulps (3 ulp), one at the edge of the host's allowance (4x the emulated move).
MOVES = {"SkylakeX": 0, "Haswell": 1, "Zen9": 3, "Broken": 10, "Tiny": 0.05, "Edge": 3.95}
RELEASES = {"1": 0, "2": 0.5, "3": 0.1}  # release 2 moves it by 32 ulp, release 3 by 6.4 ulp


def q():
    """A 'QR factor': its small element depends on the kernel and on the release, each a change smaller than any
    host allowance."""
    small = 0.0201833 + (MOVES[os.environ["FAKE_KERNEL"]] + RELEASES[os.environ["FAKE_RELEASE"]]) * 1.2e-7
    return np.array([small, -0.9374888, 0.3481067], np.float32)
'''

CONTRACTS = '''
import os

import numpy as np
import pytest

import fakelib

pytestmark = pytest.mark.family("demo")


def test_q(check):
    """The factor, golden."""
    check.golden("q", fakelib.q())


def test_elsewhere(check):
    check.golden("one", np.float32(1.0))


def test_then_raises(check):
    """The factor, then whatever the library does next: on a release that raises, it raises."""
    check.golden("q_then", fakelib.q())
    if os.environ.get("FAKE_RAISE"):
        raise TypeError("the next call raised")
'''


@pytest.fixture
def demo(pytester, monkeypatch):
    """run(*args, kernel=K, release=N, report=...): the contract suite on kernel K (this host's BLAS, as the
    report and the golden provenance name it) and release N of the library (pytester, in process)."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(fakelib=LIBRARY, test_demo=CONTRACTS)
    pytester.mkdir("golden")
    monkeypatch.syspath_prepend(str(pytester.path))
    monkeypatch.setattr(environment, "host", lambda: Host(
        cpu="AMD EPYC", machine="x86_64", numerics_features=["avx512_bf16", "fma"], vector="AVX512", fma=True,
        blas=__import__("os").environ["FAKE_KERNEL"]))

    def run(*args, kernel: str = "SkylakeX", release: int = 1, report: str = "report.json", raising: bool = False):
        monkeypatch.setenv("FAKE_KERNEL", kernel)
        monkeypatch.setenv("FAKE_RELEASE", str(release))
        if raising:
            monkeypatch.setenv("FAKE_RAISE", "1")
        else:
            monkeypatch.delenv("FAKE_RAISE", raising=False)
        result = pytester.runpytest_inprocess("-q", "-p", "no:randomly", f"--harness-report={report}",
                                              "--harness-golden-dir=golden", *args)
        path = pytester.path / report
        return result, (report_io.load(path) if path.exists() else None)

    return run


@pytest.fixture
def recorded(demo, pytester):
    """The values recorded on SkylakeX, the Haswell kernel emulated beside it (as `golden` does)."""
    result, _ = demo("--harness-record-golden", "--harness-observe-noise", "--harness-golden-dir=emulated",
                     kernel="Haswell", report="emulated.json")
    assert result.ret == 0, result.stdout.str()
    result, _ = demo("--harness-record-golden", "--harness-host-noise-from=blas=emulated")
    assert result.ret == 0, result.stdout.str()
    return json.loads((pytester.path / "golden" / "demo.json").read_text())


def _change(verdict, check_id: str):
    return next(c for c in verdict.entries[0].changes if c.check_id == check_id)


def test_the_recording_keeps_the_kernels_move_and_its_host(recorded):
    assert recorded["values"]["q"]["host_noise"]["blas"] > 0
    assert "host_noise" not in recorded["values"]["one"]
    assert recorded["provenance"]["host"]["blas"] == "SkylakeX"
    assert recorded["provenance"]["host_noise_from"] == {"blas": ["emulated"]}


def test_on_another_kernel_the_baseline_drifts_and_a_candidate_that_drifts_alike_is_unchanged(demo, recorded):
    result, base = demo(kernel="Zen9", report="baseline.json")
    assert result.ret == 0, result.stdout.str()  # 3x the emulated move: within 4x, host drift
    (judged,) = [c for c in base.check("demo/test_q").comparisons if c.label == "golden:q"]
    assert judged.passed and judged.host.within and judged.host.dimensions == ["blas"]
    _, same = demo(kernel="Zen9", report="candidate.json")
    verdict = compare.judge(base, [same])
    assert verdict.exit_status == 0 and verdict.headline.startswith("OK")
    text = render.text(verdict)
    drifted = sorted(c.id for c in base.checks if host_drift.drifted(c))
    assert len(drifted) == 2
    assert (f"host drift: 2 golden values in 2 checks ({', '.join(drifted)}) differ here, on AMD EPYC (x86_64, "
            "AVX512, FMA, avx512_bf16; OpenBLAS Zen9), from their recording within the host noise measured when "
            "recorded (BLAS kernel differs from the recording host's); the other entries on this host are judged "
            "against its baseline values there") in text
    assert ("this host: AMD EPYC (x86_64, AVX512, FMA, avx512_bf16; OpenBLAS Zen9); golden values recorded on "
            "AMD EPYC (x86_64, AVX512, FMA, avx512_bf16; OpenBLAS SkylakeX): BLAS kernel Zen9 here, SkylakeX where "
            "recorded") in text
    assert "Host: host drift: 2 golden values" in markdown.markdown(verdict)
    assert "id='host-drift'" in html.page(verdict, [same])


def test_a_change_smaller_than_the_hosts_allowance_is_a_change_judged_on_this_machine(demo, recorded):
    _, base = demo(kernel="Zen9", report="baseline.json")
    result, candidate = demo(kernel="Zen9", release=2, report="candidate.json")
    assert result.ret == 0  # against the recording, within the host's allowance: the candidate alone hides it
    verdict = compare.judge(base, [candidate])
    change = _change(verdict, "demo/test_q")
    assert change.mark == Mark.VALUE_CHANGED and verdict.exit_status == 1
    assert "of this machine's baseline values (host drift: the recording is another host's)" in change.detail
    assert _change(verdict, "demo/test_elsewhere").mark == Mark.UNCHANGED


def test_on_the_recording_host_there_is_no_allowance_and_nothing_to_say(demo, recorded):
    _, base = demo(report="baseline.json")
    result, candidate = demo(release=2, report="candidate.json")
    assert result.ret == 1  # 32 ulp from its recording, where no host moves it
    verdict = compare.judge(base, [candidate])
    assert _change(verdict, "demo/test_q").mark == Mark.VALUE_CHANGED and verdict.host_line is None
    assert "where the golden values were recorded" in render.text(verdict)


def test_beyond_the_host_noise_the_baseline_is_broken(demo, recorded):
    result, base = demo(kernel="Broken", report="baseline.json")
    assert result.ret == 1
    assert "recorded on another host" in result.stdout.str()  # the failure names the host's difference
    (judged,) = [c for c in base.check("demo/test_q").comparisons if c.label == "golden:q"]
    assert not judged.passed and not judged.host.within and judged.host.used > 1
    _, candidate = demo(kernel="Broken", report="candidate.json")
    verdict = compare.judge(base, [candidate])
    assert verdict.exit_status == 2 and "the baseline fails 2 of its own checks" in verdict.headline


def test_reports_from_two_hosts_are_never_set_against_each_other(demo, recorded):
    """A CI fan-out's runners may differ: a differential comparison holds on one host only."""
    _, base = demo(kernel="Zen9", report="baseline.json")
    _, candidate = demo(kernel="Haswell", report="candidate.json")
    verdict = compare.judge(base, [candidate])
    assert verdict.exit_status == 0  # each within its own host's allowance of the recording
    assert "local ran on another host than the baseline: judged against the recording, within that noise" in \
        verdict.host_line


def test_a_candidate_that_drifts_where_the_baseline_did_not_is_judged_against_the_baseline(demo, recorded):
    """On a kernel that moves the value within its golden ulps, the baseline holds; a candidate whose release moves
    it beyond them, within the host's allowance of the recording, drifted: judged against this machine's
    baseline, a change of 32 ulp is a change, and the line names the candidate as the entry that drifted."""
    _, base = demo(kernel="Tiny", report="baseline.json")
    assert not host_drift.drifted(base.check("demo/test_q"))
    result, candidate = demo(kernel="Tiny", release=2, report="candidate.json")
    assert result.ret == 0
    verdict = compare.judge(base, [candidate])
    assert _change(verdict, "demo/test_q").mark == Mark.VALUE_CHANGED and verdict.exit_status == 1
    assert "on AMD EPYC (x86_64, AVX512, FMA, avx512_bf16; OpenBLAS Tiny) (local)" in verdict.host_line


def test_a_check_that_raised_after_its_mismatch_is_never_passed_by_the_differential(demo, recorded):
    """At the edge of the allowance, the baseline drifts within it and the candidate (6.4 ulp further) beyond it:
    against this machine's baseline it holds, so the plain check passes; the same mismatch followed by an
    exception is more than its comparisons, and stays failed."""
    _, base = demo(kernel="Edge", report="baseline.json")
    assert host_drift.drifted(base.check("demo/test_q"))
    result, candidate = demo(kernel="Edge", release=3, report="candidate.json")
    assert result.ret == 1  # against the recording, beyond the host's allowance
    verdict = compare.judge(base, [candidate])
    assert _change(verdict, "demo/test_q").mark == Mark.BITS_CHANGED  # 6.4 ulp from the baseline: within the golden 8
    assert verdict.exit_status == 0
    _, raised = demo(kernel="Edge", release=3, report="raised.json", raising=True)
    assert raised.check("demo/test_then_raises").exception == "RaisedAfterMismatches"
    change = _change(compare.judge(base, [raised]), "demo/test_then_raises")
    assert change.mark == Mark.VALUE_CHANGED and "the check raised TypeError" in change.detail
