"""`--platform`: the entries' contracts run on an accelerator's JAX platform, judged against the golden values
recorded there (golden/platforms/<platform>/), one entry at a time on the chip; the report key keeps a chip's
reports apart from the CPU's; the verdict names where it judged and never compares two platforms.
No accelerator here: what the entries are told, and what the host decides, is checked on the CPU."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness import env_vars, golden_layout, platforms
from harness.errors import HarnessError
from harness.model import report_io
from harness.model.report import JaxPlatform
from harness.run_options import RunOptions
from harness.stack import paths, project
from harness.stack.commands import upgrade
from harness.stack.entry_side import entry as stack_entry
from harness.stack.pins import current
from harness.stack.run import run_plan, report_key
from harness.stack.workspace import Workspace
from harness.verdict import compare
from support import upgrade_reports


def _on(ws: Workspace, platform: str | None) -> Workspace:
    return ws.with_options(dataclasses.replace(ws.options, platform=platform))


def test_the_golden_directory_of_an_accelerator_is_its_own_folder():
    checkout = Workspace.of(paths.SOURCE)
    assert project.load(_on(checkout, None)).golden == paths.SOURCE / "golden"
    assert project.load(_on(checkout, "cpu")).golden == paths.SOURCE / "golden"
    assert project.load(_on(checkout, "tpu")).golden == paths.SOURCE / "golden" / golden_layout.PLATFORMS / "tpu"


def test_an_entry_on_an_accelerator_is_told_its_platform_and_the_tools_values_recorded_there(tmp_path):
    entry = current.entries(Workspace.of(paths.SOURCE))["baseline"]
    on_tpu = stack_entry.suite_environment(entry, "r.json", str(tmp_path), Path("golden"), False,
                                           options=RunOptions(platform="tpu"))
    assert on_tpu["JAX_PLATFORMS"] == "tpu,cpu"  # host callbacks need the CPU beside the chip
    assert on_tpu[env_vars.BUILTIN_GOLDEN_DIR] == str(paths.BUILTIN_GOLDEN / golden_layout.PLATFORMS / "tpu")
    default = stack_entry.suite_environment(entry, "r.json", str(tmp_path), Path("golden"), False)
    assert "JAX_PLATFORMS" not in default  # no --platform: left as it was, JAX's own choice (or the user's variable)
    assert default[env_vars.BUILTIN_GOLDEN_DIR] == str(paths.BUILTIN_GOLDEN)
    on_cpu = stack_entry.suite_environment(entry, "r.json", str(tmp_path), Path("golden"), False,
                                           options=RunOptions(platform="cpu"))
    assert on_cpu["JAX_PLATFORMS"] == "cpu" and on_cpu[env_vars.BUILTIN_GOLDEN_DIR] == str(paths.BUILTIN_GOLDEN)


@pytest.mark.parametrize(("platform", "jobs"), [(None, 2), ("cpu", 2), ("tpu", 1), ("gpu", 1)])
def test_entries_hold_an_accelerator_one_at_a_time(platform, jobs):
    argv = ["--jobs", "2"] + (["--platform", platform] if platform else [])
    assert upgrade.parse_options(Workspace.of(paths.SOURCE), argv).options.jobs == jobs


def test_entries_on_an_accelerator_share_one_compilation_cache_the_cpus_keep_their_own(tmp_path):
    """One after another on a chip, the candidate loads what the baseline (and the recording) compiled; on the
    CPU, entries run at once and JAX writes a cache entry in place, so each environment keeps its own."""
    entry = current.entries(Workspace.of(paths.SOURCE))["baseline"]

    def cache(venv: str, platform: str | None) -> str:
        options = RunOptions(platform=platform)
        return stack_entry.suite_environment(entry, "r.json", str(tmp_path / venv), Path("golden"), False,
                                             options=options)["JAX_COMPILATION_CACHE_DIR"]

    assert cache("baseline", "tpu") == cache("candidate", "tpu") == cache("golden", "tpu") == str(
        tmp_path / "jax-compilation-cache-tpu")
    assert cache("baseline", "gpu") == str(tmp_path / "jax-compilation-cache-gpu")  # never a chip's programs
    for platform in (None, "cpu"):
        assert cache("baseline", platform) == str(tmp_path / "baseline" / "jax-compilation-cache")
        assert cache("candidate", platform) == str(tmp_path / "candidate" / "jax-compilation-cache")


def test_a_platform_with_no_golden_values_recorded_is_refused_before_anything_runs(tmp_path, monkeypatch):
    copy = tmp_path / "golden"
    copy.mkdir()
    (copy / "schedules.json").write_text("{}")
    ws = _on(Workspace.of(paths.SOURCE), "tpu")
    found = project.load(ws)
    monkeypatch.setattr(project, "load", lambda _ws: dataclasses.replace(found, golden=copy / "platforms" / "tpu"))
    said = run_plan.platform_golden_problem(ws)
    assert said == (f"no golden values are recorded on tpu ({copy}/platforms/tpu holds none): the CPU's do not hold "
                    "on an accelerator. Record the baseline's on this machine first: `nox -s golden -- --platform tpu`.")
    (copy / "platforms" / "tpu").mkdir(parents=True)
    (copy / "platforms" / "tpu" / "schedules.json").write_text("{}")
    assert run_plan.platform_golden_problem(ws) is None
    assert run_plan.platform_golden_problem(_on(ws, "cpu")) is None


def test_a_chips_report_is_never_reused_for_the_cpu_and_its_golden_values_leave_the_cpus_key_alone(tmp_path):
    ws = Workspace.of(paths.SOURCE)
    entry = current.entries(ws)["baseline"]

    def key(platform):
        on = _on(ws, platform)
        return report_key.key_of(on, entry, project.load(on), {env_vars.PROFILE: "ci"}, 1)

    default, tpu, cpu = key(None), key("tpu"), key("cpu")
    assert set(default.changed(tpu)) == {"suite", "golden"}
    # --platform cpu reads the same golden values, but JAX is told cpu where unset it picks an accelerator it finds
    assert default.changed(cpu) == ["suite"]


def _report(name: str, backend: str, kinds: list[str]):
    doc = upgrade_reports.load(name)
    doc["environment"]["jax"].update(backend=backend, device_kinds=kinds, device_count=1)
    return report_io.parse(doc, name)


def test_the_headline_names_the_accelerator_it_judged_on():
    base, cand = _report("baseline", "tpu", ["TPU v5 lite"]), _report("candidate", "tpu", ["TPU v5 lite"])
    verdict = compare.judge(base, [cand])
    assert verdict.headline.endswith(" (judged on tpu: 1 TPU v5 lite)")
    on_cpu = compare.judge(_report("baseline", "cpu", ["cpu"]), [_report("candidate", "cpu", ["cpu"])])
    assert "judged on" not in on_cpu.headline


def test_a_baseline_and_a_candidate_from_two_platforms_are_not_compared():
    verdict = compare.judge(_report("baseline", "cpu", ["cpu"]), [_report("candidate", "tpu", ["TPU v5 lite"])])
    assert verdict.exit_status == 2
    assert verdict.headline.startswith("CANNOT JUDGE: the baseline ran on cpu and candidate on tpu: a platform's "
                                       "own drift is not the bump's; run both on one (--platform)")
