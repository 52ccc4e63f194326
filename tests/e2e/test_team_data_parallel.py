"""A data-parallel team, as issue 59 found it: its training module sets the CPU's device count before it imports jax
(the usual idiom), its batch sharded over a 4-device mesh, params and optimizer state replicated. With no variable
exported, `golden` records its contracts on 4 devices and `upgrade` judges them there, while the built-in contracts
run on one device; then the same project as a one-device team (the line removed, the 4-device contracts dropped)
gets the same built-in checks with the same outcomes and the same built-in sections of the verdict.

The candidate bumps optax alone (the table's candidate), so no attribution entries run: 84 s here, uv's cache warm.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from support.team_run import EXAMPLE, run_tool, said

pytestmark = pytest.mark.long_running(85)  # installs two stacks, records golden values twice and upgrades twice

SETS_DEVICES = ('os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") '
                '+ " --xla_force_host_platform_device_count=4"\n')

TRAIN = '''"""A data-parallel training loop: the batch sharded over the devices, params and state replicated."""
import os

{sets}
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def mesh():
    return Mesh(np.array(jax.devices()), ("data",))


def loss_fn(params, x, y):
    return jnp.mean((jnp.tanh(x @ params["w1"]) @ params["w2"] - y) ** 2)


def train(steps=4, sharded=True):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {{"w1": jax.random.normal(k1, (8, 16)) * 0.3, "w2": jax.random.normal(k2, (16, 1)) * 0.3}}
    x = jax.random.normal(k3, (32, 8))
    y = jnp.sin(x.sum(axis=1, keepdims=True))
    tx = optax.adam(1e-2)
    state = tx.init(params)
    if sharded:
        x, y = (jax.device_put(a, NamedSharding(mesh(), P("data"))) for a in (x, y))
        params = jax.device_put(params, NamedSharding(mesh(), P()))

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state)
        losses.append(loss)
    return losses
'''

LOSSES = '''from dp import train


def test_losses(check):
    """The loss of four data-parallel Adam steps."""
    for step, loss in enumerate(train.train()):
        check.golden(f"loss/step{step}", loss)
'''

ON_FOUR = '''from dp import train


def test_the_mesh_has_four_devices(check):
    check.devices(4)
    check.exact("mesh devices", train.mesh().devices.size, 4)
'''


def _builtin(report: dict) -> dict[str, str]:
    return {c["id"]: c["outcome"] for c in report["checks"] if not c.get("own")}


def _builtin_verdict(project) -> str:
    """What upgrade-summary.json says of the built-in contracts: the headline's part, each entry's changes and the
    baseline's failures, the line of the team's code they name left out (the one-device twin's is shorter)."""
    summary = json.loads((project / "reports" / "upgrade-summary.json").read_text())
    own = {family["name"] for family in summary["own_families"]}
    said_of_builtin = {"headline": summary["headline"].split("built-in contracts", 1)[1],
                       "changes": [[c for c in e["changes"] if c["family"] not in own] for e in summary["entries"]],
                       "baseline_failures": summary["baseline_failures"]}
    return re.sub(r"dp/train\.py:\d+", "dp/train.py", json.dumps(said_of_builtin, sort_keys=True))


def test_a_data_parallel_team_gets_its_devices_and_the_builtin_verdict_of_a_one_device_team(
        tool, checkout_copy, tmp_path, monkeypatch):
    monkeypatch.delenv("XLA_FLAGS", raising=False)  # nothing exported: the module says it
    project = tmp_path / "team"
    (project / "dp").mkdir(parents=True)
    (project / "dp" / "__init__.py").write_text("")
    (project / "dp" / "train.py").write_text(TRAIN.format(sets=SETS_DEVICES))
    shutil.copy(EXAMPLE / "requirements.txt", project / "requirements.txt")
    done = run_tool(tool, project, "init")
    assert done.returncode == 0, said(done)
    with (project / "pyproject.toml").open("a") as table:
        table.write('\n[tool.upgrade-harness.candidate]\noptax = "0.2.8"\n')
    (project / "contracts" / "test_losses.py").write_text(LOSSES)
    (project / "contracts" / "test_on_four.py").write_text(ON_FOUR)

    done = run_tool(tool, project, "golden")
    assert done.returncode == 0, said(done)
    recording = json.loads((project / "reports" / "golden-recording.json").read_text())
    assert recording["environment"]["jax"]["device_count"] == 4
    assert {c["outcome"] for c in recording["checks"]} == {"passed"}

    sharded = run_tool(tool, project, "upgrade")
    assert sharded.returncode == 0, said(sharded)
    baseline = json.loads((project / "reports" / "baseline.json").read_text())
    environment = baseline["environment"]
    assert environment["own_jax"]["device_count"] == 4 and environment["jax"]["device_count"] == 1
    own = {c["id"]: c["outcome"] for c in baseline["checks"] if c.get("own")}
    assert own == {"losses/test_losses": "passed", "on_four/test_the_mesh_has_four_devices": "passed"}, own
    assert "on cpu (1 cpu device; data_parallel: 4 cpu devices; your contracts: 4 cpu devices)" in sharded.stdout
    builtin_sharded, verdict_sharded = _builtin(baseline), _builtin_verdict(project)
    assert builtin_sharded and "OtherDeviceCount" not in json.dumps(baseline)

    # The same project as a one-device team: its built-in contracts' verdict is the same.
    (project / "dp" / "train.py").write_text(TRAIN.format(sets=""))
    (project / "contracts" / "test_on_four.py").unlink()
    done = run_tool(tool, project, "golden", "--accept-changes")
    assert done.returncode == 0, said(done)
    single = run_tool(tool, project, "upgrade", "--fresh")
    assert single.returncode == 0, said(single)
    baseline = json.loads((project / "reports" / "baseline.json").read_text())
    assert baseline["environment"]["own_jax"]["device_count"] == 1
    assert _builtin(baseline) == builtin_sharded
    assert _builtin_verdict(project) == verdict_sharded
    checkout_copy.assert_unchanged()
