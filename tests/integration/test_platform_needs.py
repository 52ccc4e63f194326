"""Checks a platform cannot run are refused before they run, as "not on this platform" (harness.platforms,
harness.contract.platform_needs). No accelerator here: a fake platform (HARNESS_PLATFORM_LACKS) refuses on the
CPU what a TPU lacks; the built-in checks that turn x64 on are found by reading the suite's own source."""

import ast
import json
from pathlib import Path

import pytest

from harness import platforms
from harness.contract import platform_needs

BUILTIN = Path(platforms.__file__).parent / "builtin"

NEEDING_SUITE = '''
import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytestmark = pytest.mark.family("demo")


@pytest.mark.needs("float64")
def test_float64(check):
    with jax.enable_x64(True):
        check.exact("dtype", str(jnp.ones(2, jnp.float64).dtype), "float64")


def test_float32(check):
    check.exact("dtype", str(jnp.ones(2, jnp.float32).dtype), "float32")
'''


def _calls_enable_x64(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in ("enable_x64", "jax_enable_x64") for n in ast.walk(node))


def _declared_needs(function: ast.FunctionDef) -> set[str]:
    found = set()
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == f"pytest.mark.{platform_needs.MARKER}":
            found |= {getattr(platforms, a.attr) if isinstance(a, ast.Attribute) else a.value for a in decorator.args}
    return found


def _x64_tests() -> dict[str, set[str]]:
    """Every built-in test that turns x64 on, with the needs it declares: read from the suite's source."""
    found = {}
    for module in sorted(BUILTIN.glob("test_*.py")):
        for node in ast.parse(module.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test") and _calls_enable_x64(node):
                found[f"{module.name}::{node.name}"] = _declared_needs(node)
    return found


def test_every_builtin_check_turning_x64_on_declares_what_it_needs():
    tests = _x64_tests()
    assert len(tests) >= 3, "the suite's x64 checks were not found: the scan is broken"
    undeclared = {name: needs for name, needs in tests.items() if platforms.FLOAT64 not in needs}
    assert not undeclared, f"turn x64 on without @pytest.mark.needs(platforms.FLOAT64): {sorted(undeclared)}"
    complex_ones = [n for n in tests if "complex128" in (BUILTIN / n.split("::")[0]).read_text()
                    and "complex" in n]
    assert complex_ones and all(platforms.COMPLEX128 in tests[n] for n in complex_ones)


def test_no_helper_outside_a_test_turns_x64_on():
    """The scan above reads test functions: x64 turned on in a shared helper would escape it."""
    for module in sorted(BUILTIN.glob("*.py")):
        for node in ast.parse(module.read_text()).body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
                assert not _calls_enable_x64(node), f"{module.name}: {getattr(node, 'name', node)} turns x64 on"


@pytest.fixture
def needing(pytester):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_needs=NEEDING_SUITE)
    pytester.mkdir("golden")

    def run(monkeypatch, lacks: str | None, *args: str):
        if lacks is None:
            monkeypatch.delenv(platforms.FAKE_LACKS, raising=False)
        else:
            monkeypatch.setenv(platforms.FAKE_LACKS, lacks)
        result = pytester.runpytest_subprocess("-q", "-p", "no:randomly", "--harness-report=report.json",
                                               "--harness-golden-dir=golden", "-rs", *args)
        path = pytester.path / "report.json"
        return result, (json.loads(path.read_text()) if path.exists() else None)

    return run


def test_a_platform_without_float64_records_the_check_as_not_on_this_platform(needing, monkeypatch):
    result, report = needing(monkeypatch, "float64")
    assert result.ret == 0, result.stdout.str()
    checks = {c["id"]: c for c in report["checks"]}
    refused = checks["demo/test_float64"]
    assert refused["outcome"] == "skipped"
    assert refused["message"].endswith("not on this platform: cpu has no float64")  # pytest says "Skipped: "
    assert checks["demo/test_float32"]["outcome"] == "passed"


def _recording(pytester, monkeypatch, suite: str, lacks: str | None):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_rec=suite + '\n\ndef test_value(check):\n    check.golden("ones", jnp.ones(2, jnp.float32))\n')
    pytester.mkdir("golden")
    if lacks is None:
        monkeypatch.delenv(platforms.FAKE_LACKS, raising=False)
    else:
        monkeypatch.setenv(platforms.FAKE_LACKS, lacks)
    result = pytester.runpytest_subprocess("-q", "-p", "no:randomly", "--harness-golden-dir=golden",
                                           "--harness-record-golden")
    return result, sorted(p.name for p in (pytester.path / "golden").glob("*.json"))


def test_a_recording_there_writes_what_the_platform_runs(pytester, monkeypatch):
    """A check refused as not on this platform records nothing and stops nothing: the chip's first recording
    (measured on a TPU v5e: the three x64 checks, refused, made the recording write nothing)."""
    result, written = _recording(pytester, monkeypatch, NEEDING_SUITE, "float64")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*1 skipped*"])
    assert written == ["demo.json"], result.stdout.str()


def test_another_skip_still_stops_a_recording(pytester, monkeypatch):
    """Only the platform's refusal is let through: a check skipped for any other reason records nothing it
    should have, so the recording writes nothing."""
    other = NEEDING_SUITE.replace('@pytest.mark.needs("float64")', '@pytest.mark.skip(reason="flaky here")')
    result, written = _recording(pytester, monkeypatch, other, None)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*golden: NOT written: 1 checks did not pass while recording: demo/test_float64*"])
    assert written == []


def test_on_the_cpu_itself_the_check_runs(needing, monkeypatch):
    result, report = needing(monkeypatch, None)
    assert result.ret == 0, result.stdout.str()
    assert {c["id"]: c["outcome"] for c in report["checks"]}["demo/test_float64"] == "passed"


def test_a_need_no_platform_knows_is_named_with_its_fix(pytester):
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_bad='import pytest\n\n@pytest.mark.needs("float128")\ndef test_x():\n    pass\n')
    result = pytester.runpytest_subprocess("-q", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_x*needs(float128) names no need a platform can lack; use float64, complex128*"])


def test_a_fake_platform_naming_an_unknown_need_is_refused(needing, monkeypatch):
    result, _ = needing(monkeypatch, "float64,bfloat8")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{platforms.FAKE_LACKS}=*bfloat8 is not a need a check can declare*"])


@pytest.mark.parametrize(("backend", "lacking", "expected"), [
    ("tpu", {}, "not on this platform: tpu has no complex128 or float64"),
    ("cpu", {}, None),
    ("gpu", {}, None),
    ("cpu", {platforms.FAKE_LACKS: "complex128"}, "not on this platform: cpu has no complex128"),
])
def test_what_each_platform_refuses(backend, lacking, expected):
    needs = {platforms.FLOAT64, platforms.COMPLEX128}
    assert platforms.refusal(needs, backend, platforms.lacks(backend, lacking)) == expected


def test_the_backend_is_not_asked_when_no_check_needs_anything():
    asked = []
    assert platform_needs.refuse([], environ={}, backend_of=lambda: asked.append(1) or "tpu") == 0
    assert not asked


def test_a_builtin_x64_check_on_a_platform_without_float64_is_refused_as_an_entry_runs_it(tmp_path, monkeypatch):
    """The built-in suite as an entry's process runs it (its ini, the plugin, a report), the fake platform on."""
    import subprocess
    import sys

    root = BUILTIN.parent.parent
    report = tmp_path / "report.json"
    monkeypatch.setenv(platforms.FAKE_LACKS, "float64,complex128")
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(root / "harness/contract/pytest.ini"), "--rootdir",
                           str(root), "-q", "-p", "no:randomly", "-p", "harness.contract.plugin", "--noconftest",
                           str(BUILTIN / "test_clipping_complex.py"), "-k", "x64", f"--harness-report={report}",
                           f"--harness-golden-dir={root / 'golden'}"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    checks = {c["id"]: c for c in json.loads(report.read_text())["checks"]}
    refused = checks["clipping/test_complex128_with_x64"]
    assert refused["outcome"] == "skipped"
    assert refused["message"].endswith("not on this platform: cpu has no complex128 or float64")


def test_a_platforms_own_tolerance_applies_only_on_that_platform():
    from harness.contract import tolerances
    from harness.model.enums import ComparisonKind

    check = "optimizers/test_muon[muon/given]"
    on_tpu = tolerances.lookup(ComparisonKind.REFERENCE, "float32", check, platform="tpu")
    assert (on_tpu.tolerance.ulps, on_tpu.tolerance.ulp_dtype, on_tpu.named) == (17, "bfloat16", True)
    assert "measured up to 8.3 ulp of bfloat16" in on_tpu.why
    for elsewhere in (None, "cpu", "gpu"):
        assert tolerances.lookup(ComparisonKind.REFERENCE, "float32", check, platform=elsewhere) == \
            tolerances.POLICY[(ComparisonKind.REFERENCE, "float32")]
    rows = [r for r in tolerances.table() if r.why.startswith("on tpu only: ")]
    assert {r.check for r in rows} == {c for (_, _, c) in tolerances.PLATFORM_OVERRIDES}


def test_every_platform_rule_names_a_check_the_suite_has(baseline_report_ids):
    """A rule for a check renamed or removed would silently stop applying on the chip."""
    from harness.contract import tolerances

    assert {c for (_, _, c) in tolerances.PLATFORM_OVERRIDES} <= baseline_report_ids


@pytest.fixture(scope="module")
def baseline_report_ids():
    import os

    given = os.environ.get("HARNESS_BASELINE_REPORT")
    if not given:
        pytest.skip("needs the baseline report `nox -s tests` writes (HARNESS_BASELINE_REPORT)")
    return {c["id"] for c in json.loads(Path(given).read_text())["checks"]}


def test_a_comparison_on_a_fake_tpu_takes_the_tpu_rule(monkeypatch):
    """The rule is chosen by the backend the process runs on (harness.contract.platform_needs.running_on)."""
    import numpy as np

    from harness.contract import checks, platform_needs
    from harness.contract.golden import GoldenStore

    monkeypatch.setattr(platform_needs, "running_on", lambda: "tpu")
    check = checks.Check("schedules/test_jit_matches_eager[warmup_cosine]", "schedules",
                         GoldenStore(Path("/nonexistent")), recording=False)
    expected = np.float32(0.0012464867904782295)
    observed = np.nextafter(expected, np.float32(0), dtype=np.float32)
    for _ in range(255):
        observed = np.nextafter(observed, np.float32(0), dtype=np.float32)  # 256 ulp below: as measured on a v5e
    check.agree("warmup_cosine: jit vs eager", observed, expected)  # within the chip's 512
    monkeypatch.setattr(platform_needs, "running_on", lambda: "cpu")
    with pytest.raises(checks.ContractFailure, match="outside 64 ulp"):
        check.agree("warmup_cosine: jit vs eager (cpu)", observed, expected)


def test_a_module_its_platform_refuses_is_one_skipped_check_saying_why(pytester):
    """The data-parallel family on one chip: its layouts need 4 devices (harness/builtin/test_data_parallel.py)."""
    pytester.makeconftest('pytest_plugins = ["harness.contract.plugin"]\n')
    pytester.makepyfile(test_layouts='import pytest\n\npytest.skip("not on this platform: needs 4 devices, found 1", '
                                     'allow_module_level=True)\n\n\ndef test_x(check):\n    pass\n',
                        test_other='import pytest\n\npytest.skip("not installed", allow_module_level=True)\n')
    pytester.mkdir("golden")
    result = pytester.runpytest_subprocess("-q", "-p", "no:randomly", "--harness-report=report.json",
                                           "--harness-golden-dir=golden")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    checks = {c["id"]: c for c in json.loads((pytester.path / "report.json").read_text())["checks"]}
    assert list(checks) == ["layouts/collection"]  # a module skipped for another reason stays as it was: no check
    assert checks["layouts/collection"]["outcome"] == "skipped"
    assert checks["layouts/collection"]["message"].endswith("not on this platform: needs 4 devices, found 1")
