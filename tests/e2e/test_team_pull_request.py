"""A team's bump, from the pull request that changes its pins: a plain JAX + Optax project (no Flax) with a
2-layer MLP whose second layer is bfloat16, trained with MultiSteps(chain(clip_by_global_norm, adamw(
warmup_cosine, mask=...)), k=4). Its pins are committed on `main` with its golden values; a branch bumps
optax 0.2.6 -> 0.2.8; `upgrade --baseline-from main:requirements.txt --candidate-from requirements.txt`
judges the branch: the team's changed checks come first with cause and size (never "None"), the built-in
section lists only the families that cover what its code calls, and no flax is pinned or installed.

Each step's wall time is printed (pytest -s) for docs/your-own-contracts.md ("A bump in a pull request").
"""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
import time

import pytest
from support.team_run import run_tool, said

pytestmark = pytest.mark.long_running(60)  # installs two stacks, records golden values, runs one upgrade

TRAIN = '''
"""The team's training step: what its checkpoints and its loss curve depend on."""
import jax
import jax.numpy as jnp
import optax

WARMUP_STEPS = 2


def init_params():
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    return {"dense1": {"w": jax.random.normal(k1, (4, 8)) * 0.5, "b": jnp.zeros(8)},
            "dense2": {"w": (jax.random.normal(k2, (8, 1)) * 0.5).astype(jnp.bfloat16),
                       "b": jnp.zeros(1, jnp.bfloat16)}}


def optimizer():
    schedule = optax.warmup_cosine_decay_schedule(0.0, 0.05, WARMUP_STEPS, 20)
    decay_mask = jax.tree_util.tree_map_with_path(lambda path, _: path[-1].key == "w", init_params())
    inner = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-2, mask=decay_mask))
    return optax.MultiSteps(inner, every_k_schedule=4)


def loss_fn(params, x, y):
    hidden = jax.nn.relu(x @ params["dense1"]["w"] + params["dense1"]["b"])
    out = hidden.astype(jnp.bfloat16) @ params["dense2"]["w"] + params["dense2"]["b"]
    return jnp.mean((out.astype(jnp.float32) - y) ** 2)


def train(steps=16):
    params, opt = init_params(), optimizer()
    state = opt.init(params)
    base = jnp.linspace(-1.0, 1.0, 32).reshape(8, 4)
    for step in range(steps):  # a new mini-batch each mini-step: the accumulated gradients differ
        x = base * (1.0 + 0.37 * step)
        y = jnp.sum(jnp.sin(x), axis=1, keepdims=True)
        grads = jax.grad(loss_fn)(params, x, y)
        updates, state = opt.update(grads, state, params)
        params = optax.apply_updates(params, updates)
    return params, state
'''
CONTRACT = '''
from trainer import train


def test_final_params(check):
    params, _ = train.train()
    check.golden_tree("final_params", params)


def test_optimizer_state_layout(check):
    _, state = train.train()
    check.layout("opt_state", state)
'''
REQUIREMENTS = "jax==0.11.2\njaxlib==0.11.2\noptax=={optax}\nnumpy==2.5.5\n"


def _git(project, *args):
    return subprocess.run(["git", "-C", str(project), "-c", "user.email=team@example.com", "-c", "user.name=team",
                           *args], check=True, capture_output=True, text=True).stdout


def _timed(times: dict, step: str, done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    times[step] = time.perf_counter() - times.pop("_start")
    return done


def test_a_teams_bump_is_judged_from_its_pull_request(tool, checkout_copy, tmp_path):
    project = tmp_path / "team"
    (project / "trainer").mkdir(parents=True)
    (project / "trainer" / "__init__.py").write_text("")
    (project / "trainer" / "train.py").write_text(textwrap.dedent(TRAIN))
    (project / "requirements.txt").write_text(REQUIREMENTS.format(optax="0.2.6"))
    (project / ".gitignore").write_text("reports/\n.nox/\n__pycache__/\n")
    times: dict = {}

    times["_start"] = time.perf_counter()
    done = _timed(times, "init", run_tool(tool, project, "init"))
    assert done.returncode == 0, said(done)  # no flax pinned: the code does not import it
    (project / "contracts" / "test_mlp.py").write_text(CONTRACT)
    times["_start"] = time.perf_counter()
    done = _timed(times, "golden", run_tool(tool, project, "golden"))
    assert done.returncode == 0, said(done)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "the team's stack, its contracts and golden values")

    _git(project, "checkout", "-q", "-b", "bump-optax")  # what a bot's pull request does: the pins file only
    (project / "requirements.txt").write_text(REQUIREMENTS.format(optax="0.2.8"))
    _git(project, "commit", "-qam", "Bump optax from 0.2.6 to 0.2.8")

    times["_start"] = time.perf_counter()
    done = _timed(times, "upgrade (the pull request's diff)", run_tool(
        tool, project, "upgrade", "--baseline-from", "main:requirements.txt", "--candidate-from", "requirements.txt"))
    assert done.returncode == 1, said(done)  # the team's contracts changed
    summary = json.loads((project / "reports" / "upgrade-summary.json").read_text())
    assert summary["baseline"]["versions"]["optax"] == "0.2.6" and summary["entries"][0]["versions"]["optax"] == "0.2.8"
    assert not summary["baseline"]["versions"].get("flax"), summary["baseline"]["versions"]  # none installed
    own = {c["change"]["check_id"]: c for c in summary["own_changes"]}
    assert "mlp/test_optimizer_state_layout" in own, sorted(own)
    assert "mlp/test_final_params" in own, sorted(own)
    params = own["mlp/test_final_params"]["change"]
    assert params["before"].startswith("final_params/dense") and "ulp" in params["size"], params
    assert "optax 0.2.6 → 0.2.8" in own["mlp/test_final_params"]["cause"], own["mlp/test_final_params"]
    for text in (done.stdout, (project / "reports" / "upgrade-summary.md").read_text(),
                 (project / "reports" / "upgrade-report.html").read_text()):
        # A finding never reads None (a parameter's default of None in the API section is Python's own).
        assert not re.search(r"None →|→ None|\[None|None on both", text), re.search(r".{100}None.{100}", text, re.S)
    note = summary["builtin_note"]
    assert note.startswith("built-in contracts run for what your code calls: "), note
    assert re.search(r"optax\.MultiSteps at trainer/train\.py:\d+ \(\d+ tests: accumulation \d+", note), note
    assert re.search(r"optax\.adamw at trainer/train\.py:\d+ \(\d+ tests: [^)]*masks \d+", note), note
    assert "your code does not import flax" in note, note
    ran = {c["id"].split("/")[0] for c in json.loads((project / "reports" / "baseline.json").read_text())["checks"]}
    assert {"accumulation", "clipping", "masks", "schedules"} <= ran and not ran & {"training", "checkpoints",
                                                                                     "data_parallel"}, ran
    checkout_copy.assert_unchanged()
    print("\nstep times: " + ", ".join(f"{step} {seconds:.0f} s" for step, seconds in times.items()))
