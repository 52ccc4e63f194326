"""A data-parallel team's devices under the harness's plugin: its training module sets the CPU's device count before
it imports jax (the usual idiom, as in its own pytest), and its contracts run on those devices; a contract needing
more than it got is not judged and says how to give them; a built-in contract is never judged on the team's devices.

Each run is a pytest subprocess (JAX reads XLA_FLAGS once a process, when its backend starts), a harness run as an
entry's is (--harness-report, the team's contract folder named)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.stack import paths

# The two ways JAX's docs give a CPU several devices, as a training module's first lines: XLA_FLAGS assigned outright
# before `import jax` (its sharding tutorials), or the config option before anything asks for a device.
BY_XLA_FLAGS = '''
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import jax
'''
BY_CONFIG = '''
import jax

jax.config.update("jax_num_cpu_devices", 4)
'''

# The rest of the team's training module.
TRAIN = '''
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def mesh():
    """Every device on one "data" axis: however many there are (the job does not check its count)."""
    return Mesh(np.array(jax.devices()), ("data",))


def loss(batch):
    return jnp.mean(batch ** 2)


def sharded_loss(batch):
    return jax.jit(loss)(jax.device_put(batch, NamedSharding(mesh(), P("data"))))
'''

CONTRACTS = '''
import jax.numpy as jnp

from team import train


def test_the_mesh_has_the_devices_the_job_asked_for(check):
    check.exact("mesh devices", train.mesh().devices.size, 4)


def test_sharded_equals_unsharded(check):
    batch = jnp.arange(32.0).reshape(8, 4)
    check.agree("sharded loss", train.sharded_loss(batch), train.loss(batch))


def test_a_mesh_of_eight(check):
    devices = check.devices(8)
    check.exact("devices", len(devices), 8)
'''

BUILTIN_MODULE = Path(paths.SOURCE) / "harness" / "builtin" / "test_masks_noise.py"  # 3 checks, a few seconds


@pytest.fixture
def team(pytester, monkeypatch):
    """A team's project (team/train.py, contracts/test_mesh.py); run(*args, xla_flags=...) runs a harness pytest
    process on it, as an entry's session does, and returns (its result, its report as JSON)."""
    for name in ("XLA_FLAGS", "JAX_PLATFORMS", "HARNESS_JOB", "HARNESS_REPORT", "HARNESS_GOLDEN_DIR",
                 "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    (pytester.path / "team").mkdir()
    (pytester.path / "team" / "__init__.py").write_text("")
    (pytester.path / "team" / "train.py").write_text(BY_XLA_FLAGS + TRAIN)
    (pytester.path / "contracts").mkdir()
    (pytester.path / "contracts" / "test_mesh.py").write_text(CONTRACTS)
    (pytester.path / "golden").mkdir()

    def run(*args, xla_flags: str | None = None):
        if xla_flags is not None:
            monkeypatch.setenv("XLA_FLAGS", xla_flags)
        result = pytester.runpytest_subprocess(
            "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "pythonpath=.", "--harness-report=report.json",
            "--harness-golden-dir=golden", f"--harness-builtin-golden-dir={paths.builtin_golden(None)}",
            "--harness-own-contracts=contracts", *args)
        report = pytester.path / "report.json"
        return result, (json.loads(report.read_text()) if report.exists() else None)

    return run


def _checks(report: dict) -> dict[str, dict]:
    return {c["id"]: c for c in report["checks"]}


@pytest.mark.parametrize("sets, flags", [(BY_XLA_FLAGS, "--xla_force_host_platform_device_count=4"), (BY_CONFIG, "")])
def test_the_teams_contracts_run_on_the_devices_its_training_module_sets(team, pytester, sets, flags):
    (pytester.path / "team" / "train.py").write_text(sets + TRAIN)
    result, report = team("contracts")
    checks = _checks(report)
    assert checks["mesh/test_the_mesh_has_the_devices_the_job_asked_for"]["outcome"] == "passed", result.stdout.str()
    assert checks["mesh/test_sharded_equals_unsharded"]["outcome"] == "passed"
    assert report["environment"]["jax"]["device_count"] == 4
    assert report["environment"]["jax"]["xla_flags"] == flags


def test_a_contract_needing_more_devices_than_it_got_says_how_many_and_how_to_give_them(team):
    _, report = team("contracts")
    eight = _checks(report)["mesh/test_a_mesh_of_eight"]
    line = CONTRACTS.splitlines().index("    devices = check.devices(8)") + 1
    assert eight["outcome"] == "failed" and eight["raised_at"] == f"contracts/test_mesh.py:{line}"  # it raised there
    assert eight["message"].startswith("TooFewDevices: this contract needs 8 devices; JAX found 4 on cpu.")
    assert "--xla_force_host_platform_device_count=8" in eight["message"]


def test_the_flags_the_harness_gave_the_process_survive_a_module_that_assigns_xla_flags(team):
    """An emulated host's process (XLA capped at AVX2): the module's assignment would drop the cap; it is put back
    before the module's own flags, and the report's host is the emulated one."""
    _, report = team("contracts", xla_flags="--xla_cpu_max_isa=AVX2")
    assert report["environment"]["jax"]["device_count"] == 4
    assert report["environment"]["jax"]["xla_flags"] == (
        "--xla_cpu_max_isa=AVX2 --xla_force_host_platform_device_count=4")
    assert report["environment"]["host"]["vector"] == "AVX2"


def test_built_in_checks_beside_the_teams_contracts_are_not_judged_on_its_devices(team):
    """A process holding both (`golden --record-builtin`): each built-in check is an error saying why,
    before it runs; the team's contracts run on their 4 devices."""
    _, report = team("contracts", str(BUILTIN_MODULE))
    checks = _checks(report)
    builtin = [c for c in checks.values() if c["family"] == "masks"]
    assert len(builtin) == 3 and {c["outcome"] for c in builtin} == {"error"}
    assert builtin[0]["message"].startswith(
        "setup failed: OtherDeviceCount: not judged: the built-in contracts' golden values were recorded on 1 CPU "
        "device and this process has 4 (set by the project's code")
    assert "XLA_FLAGS='--xla_force_host_platform_device_count=4'" in builtin[0]["message"]
    assert checks["mesh/test_sharded_equals_unsharded"]["outcome"] == "passed"


def test_built_in_checks_in_a_process_of_their_own_run_on_one_device(team):
    """The built-in part's process, as an upgrade runs it (no team code, the exported count left out by the
    entry): the same module is judged, on one device, against the tool's values."""
    result, report = team(str(BUILTIN_MODULE), "--noconftest")
    assert report["environment"]["jax"]["device_count"] == 1
    assert {c["outcome"] for c in report["checks"]} == {"passed"}, result.stdout.str()


def test_a_device_count_exported_to_a_run_of_built_in_checks_by_hand_is_refused(team):
    _, report = team(str(BUILTIN_MODULE), "--noconftest", xla_flags="--xla_force_host_platform_device_count=2")
    assert report["environment"]["jax"]["device_count"] == 2
    assert {c["outcome"] for c in report["checks"]} == {"error"}
    assert "this process has 2" in report["checks"][0]["message"]
