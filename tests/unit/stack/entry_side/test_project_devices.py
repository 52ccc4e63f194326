"""A data-parallel team's devices on the entry's side: the built-in contracts' process is told no CPU device count
(whatever the shell exported for the team's own contracts), the team's process keeps what it was given, and the
entry's report says on how many devices each part ran."""

from __future__ import annotations

import dataclasses

import pytest

from harness import devices
from harness.model import report_io, report_merge
from harness.model.report import JaxPlatform
from harness.run_options import RunOptions
from harness.verdict import views
from unit.stack.entry_side.test_data_parallel_wiring import FOUR
from unit.stack.entry_side.test_parts import _acting, _run, _split, _report

SIMULATED = "--xla_force_host_platform_device_count=4"


@pytest.mark.parametrize("given, left", [
    ("", ""),
    (SIMULATED, ""),
    (f"--xla_cpu_max_isa=AVX2 {SIMULATED} --xla_backend_optimization_level=0",
     "--xla_cpu_max_isa=AVX2 --xla_backend_optimization_level=0"),
    (f"  {SIMULATED}   --xla_force_host_platform_device_count=8 ", ""),
    ("--xla_force_host_platform_device_count_other=2", "--xla_force_host_platform_device_count_other=2"),
])
def test_the_device_count_alone_is_taken_out_of_xla_flags(given, left):
    assert devices.without_device_count(given) == left


def test_an_exported_device_count_reaches_the_teams_process_not_the_built_in_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", f"--xla_cpu_max_isa=AVX2 {SIMULATED}")
    builtin, own = _split(_report())
    session, run = _run(tmp_path, monkeypatch, _acting(builtin, own))
    run()
    (first, builtin_env), (second, own_env) = session.commands
    assert "--noconftest" in first and "--noconftest" not in second  # the built-in part, then the team's
    assert builtin_env["XLA_FLAGS"] == "--xla_cpu_max_isa=AVX2"  # the other flags kept, the count left out
    assert "XLA_FLAGS" not in own_env  # the team's process inherits the session's, its count with them


def test_the_entrys_report_says_on_how_many_devices_each_part_ran(tmp_path, monkeypatch):
    builtin, own = _split(_report())
    assert builtin.environment.jax.device_count == 1
    own = dataclasses.replace(own, environment=dataclasses.replace(own.environment, jax=FOUR))
    session, run = _run(tmp_path, monkeypatch, _acting(builtin, own))
    run()
    joined = report_io.load(tmp_path / "baseline.json")
    assert joined.environment.jax.device_count == 1  # the built-in contracts' process
    assert joined.environment.own_jax == FOUR
    shown = views.platform_text(report_merge.platforms(joined.environment))
    assert shown == " on cpu (1 cpu device; your contracts: 4 cpu devices)"


def test_a_report_of_one_process_names_no_other():
    """A project of one kind of contracts (or a recording) runs them in one process: `jax` alone is shown; a team's
    process that wrote no report is shown as such, not left out."""
    env = _report().environment
    assert env.own_jax is None
    assert views.platform_text(report_merge.platforms(env)) == " on cpu (1 cpu device)"
    unknown = dataclasses.replace(env, own_jax=JaxPlatform(backend=None))
    assert views.platform_text(report_merge.platforms(unknown)) == " on cpu (1 cpu device; your contracts: no devices)"


def test_a_replay_of_properties_of_both_kinds_replays_the_built_in_ones_in_their_own_process(tmp_path, monkeypatch):
    """A replay's built-in examples run without the team's code (its training module may set 4 devices), as the
    candidate's failures they replay did; its own ones in the team's process."""
    (tmp_path / "only.txt").write_text("masks/test_bad_mask\nteam/test_loss\n")
    (tmp_path / "examples.json").write_text("{}")
    builtin, own = _split(_report())
    options = RunOptions(only=tmp_path / "only.txt", replay=tmp_path / "examples.json")
    session, run = _run(tmp_path, monkeypatch, _acting(builtin, own), options)
    run()
    assert ["--noconftest" in args for args, _ in session.commands] == [True, False]
    joined = report_io.load(tmp_path / "baseline.json")
    assert [c.id for c in joined.checks] == [c.id for c in builtin.checks] + ["team/test_loss"]
