"""A team makes the check required on its pull requests, from nothing: a Flax NNX CNN classifier trained on
synthetic images through `nnx.Optimizer` with `MultiSteps(chain(clip_by_global_norm, adamw(warmup_cosine,
mask=...)), k=4)` and label-smoothed cross-entropy, a learned logit temperature kept in bfloat16; its pins in
`pyproject.toml` and `uv.lock`. Each pull request is judged by the generated workflow's own command
(`upgrade --baseline-from main:uv.lock --candidate-from uv.lock`):

- a jax-only bump: exit 0, the trained parameters' moves shown as numerical noise (not VALUE CHANGED);
- an optax bump that changes what the team calls (0.2.8 accumulates the bfloat16 temperature's gradients in
  float32): exit 1, the optimizer state's layout named;
- `accept` on that branch, lock and golden values committed: the PR check exits 0 and lists what was accepted;
- a same-stack code change (the weight decay edited): exit 1, the team's own code named;
- a `pyproject.toml` pin its `uv.lock` does not satisfy: exit 2, both files named;
- the built-in checks the team's calls take are counted (<= 460), and a code-only change re-runs none of them.

Each step's wall time is printed (pytest -s) for docs/your-own-contracts.md.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
import time

import pytest
from support.team_run import run_tool, said

from harness.stack.environments.interpreters import find_python

pytestmark = pytest.mark.long_running(120)  # four stacks, golden values with their noise, six upgrades

TRAIN = '''
"""The team's training: a small CNN classifier on synthetic images."""
import jax
import jax.numpy as jnp
import optax
from flax import nnx

CLASSES = 4
WEIGHT_DECAY = 1e-2
WARMUP = 3


class CNN(nnx.Module):
    def __init__(self, rngs):
        self.conv1 = nnx.Conv(1, 8, kernel_size=(3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(8, 16, kernel_size=(3, 3), strides=(2, 2), rngs=rngs)
        self.norm = nnx.LayerNorm(16 * 4 * 4, rngs=rngs)
        self.head = nnx.Linear(16 * 4 * 4, CLASSES, rngs=rngs)
        # a learned logit temperature, kept in bfloat16 as the team's mixed-precision recipe keeps scalars
        self.temperature = nnx.Param(jnp.ones((), jnp.bfloat16))

    def __call__(self, x):
        x = nnx.relu(self.conv1(x))
        x = nnx.relu(self.conv2(x))
        x = nnx.avg_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape(x.shape[0], -1)
        return self.head(self.norm(x)) * self.temperature.value.astype(jnp.float32)


def data(step, batch=16):
    kx, ky = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(42), step))
    labels = jax.random.randint(ky, (batch,), 0, CLASSES)
    images = jax.random.normal(kx, (batch, 16, 16, 1)) * 0.5 + labels[:, None, None, None] * 0.25
    return images, labels


def optimizer():
    schedule = optax.warmup_cosine_decay_schedule(0.0, 3e-3, WARMUP, 40)

    def kernels(params):
        return jax.tree_util.tree_map_with_path(lambda path, _: "kernel" in str(path), params)

    inner = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=WEIGHT_DECAY, mask=kernels))
    return optax.MultiSteps(inner, every_k_schedule=4)


def loss_fn(model, images, labels):
    targets = optax.smooth_labels(jax.nn.one_hot(labels, CLASSES), 0.1)
    return optax.softmax_cross_entropy(model(images), targets).mean()


@nnx.jit
def train_step(model, opt, images, labels):
    loss, grads = nnx.value_and_grad(loss_fn)(model, images, labels)
    opt.update(model, grads)
    return loss


def train(steps=24):
    model = CNN(nnx.Rngs(0))
    opt = nnx.Optimizer(model, optimizer(), wrt=nnx.Param)
    losses = [train_step(model, opt, *data(step)) for step in range(steps)]
    return model, opt, jnp.stack(losses)
'''
CONTRACT = '''
"""What the team's checkpoints and loss curve depend on."""
from flax import nnx

from trainer import train


def test_losses(check):
    """The loss of each of 24 mini-steps, one golden key a step."""
    _, _, losses = train.train()
    for step, loss in enumerate(losses):
        check.golden(f"loss/step{step}", loss)


def test_final_params(check):
    """Every parameter after 24 mini-steps (6 optimizer steps)."""
    model, _, _ = train.train()
    check.golden_tree("params", nnx.state(model, nnx.Param))


def test_optimizer_state_layout(check):
    """The optimizer state's leaves, dtypes and shapes: what a checkpoint of it holds."""
    _, opt, _ = train.train(steps=1)
    check.layout("opt_state", nnx.state(opt, nnx.OptState))
'''
PINS = {"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.12", "numpy": "2.5.5"}
PR_CHECK = ("upgrade", "--baseline-from", "main:uv.lock", "--candidate-from", "uv.lock")


def _pyproject(pins: dict) -> str:
    deps = "".join(f'    "{name}=={version}",\n' for name, version in pins.items())
    return textwrap.dedent('''\
        [project]
        name = "cnn-team"
        version = "0.1.0"
        requires-python = ">=3.12"
        dependencies = [
        ''') + deps + "]\n"


class Team:
    """The team's repository and the commands it runs, each timed."""

    def __init__(self, root, tool, uv_bin):
        self.root, self.tool, self.uv_bin = root, tool, uv_bin
        self.times: dict[str, float] = {}
        self.pins = dict(PINS)

    def run(self, step: str, *args: str) -> subprocess.CompletedProcess:
        started = time.perf_counter()
        done = run_tool(self.tool, self.root, *args)
        self.times[step] = time.perf_counter() - started
        return done

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.root), "-c", "user.email=team@example.com", "-c", "user.name=team",
                               *args], check=True, capture_output=True, text=True).stdout

    def pin(self, **pins: str) -> None:
        """Edit pyproject.toml's pins and lock them, as a bot's bump does (the branch's pins, from main's)."""
        self.pins = dict(PINS, **pins)
        (self.root / "pyproject.toml").write_text(_pyproject(self.pins) + self.table())
        subprocess.run([self.uv_bin, "lock", "--quiet", "--python", find_python("3.12")], cwd=self.root, check=True)

    def table(self) -> str:
        text = (self.root / "pyproject.toml").read_text() if (self.root / "pyproject.toml").exists() else ""
        return text[text.index("[tool.upgrade-harness]"):] if "[tool.upgrade-harness]" in text else ""

    def summary(self) -> dict:
        return json.loads((self.root / "reports" / "upgrade-summary.json").read_text())


def _own(summary: dict) -> dict[str, dict]:
    return {c["change"]["check_id"]: c["change"] for c in summary["own_changes"]}


def test_a_team_can_require_the_check_on_its_pull_requests(tool, checkout_copy, uv_bin, tmp_path):
    team = Team(tmp_path / "team", tool, uv_bin)
    (team.root / "trainer").mkdir(parents=True)
    (team.root / "trainer" / "__init__.py").write_text("")
    (team.root / "trainer" / "train.py").write_text(TRAIN)
    (team.root / ".gitignore").write_text("reports/\n.nox/\n__pycache__/\n.venv/\n")
    team.pin()
    done = team.run("init", "init")
    assert done.returncode == 0, said(done)
    assert 'baseline-from = "uv.lock"' in (team.root / "pyproject.toml").read_text(), said(done)
    (team.root / "contracts" / "test_cnn.py").write_text(CONTRACT)
    done = team.run("golden (with its noise)", "golden")
    assert done.returncode == 0 and "noise measured for" in done.stdout, said(done)
    team.git("init", "-q", "-b", "main")
    team.git("add", ".")
    team.git("commit", "-qm", "the team's stack, its contracts and golden values")

    # A jax-only bump: the trained parameters move by reordered rounding, within their measured noise.
    team.git("checkout", "-q", "-b", "bump-jax")
    team.pin(jax="0.12.0.1", jaxlib="0.12.0.1")
    team.git("commit", "-qam", "Bump jax and jaxlib to 0.12.0.1")
    done = team.run("PR check: jax bump", *PR_CHECK)
    assert done.returncode == 0, said(done)
    marks = {i: c["mark"] for i, c in _own(team.summary()).items()}
    assert marks.get("cnn/test_final_params") == "moved within noise", marks
    assert "moved within numerical noise" in team.summary()["headline"]

    # An optax bump that changes what the team calls: the bfloat16 temperature's accumulator is float32 now.
    team.git("checkout", "-q", "main")
    team.git("checkout", "-q", "-b", "bump-optax")
    team.pin(optax="0.2.8")
    team.git("commit", "-qam", "Bump optax to 0.2.8")
    done = team.run("PR check: optax bump", *PR_CHECK)
    assert done.returncode == 1, said(done)
    layout = _own(team.summary())["cnn/test_optimizer_state_layout"]
    assert layout["mark"] == "dtype/state changed" and "temperature" in layout["after"], layout
    builtin_checks = [c for c in json.loads((team.root / "reports" / "baseline.json").read_text())["checks"]
                      if c["family"] != "cnn"]
    # 300 until issue 45's families: its nnx.relu and nnx.Optimizer calls take activations/test_activation (every
    # function's cases: the selection takes a test whole) and the wrappers tests; 363 at 643a70e. Its jax.random
    # calls (PRNGKey, split, fold_in, randint, normal) take the random family's tests of them since d0db00c: 51
    # checks, 438 in all (15 of them random/test_errors' cases of every draw, taken whole).
    assert 0 < len(builtin_checks) <= 460, len(builtin_checks)

    # Accepted on the branch, lock and golden values committed: the PR check is green and says what was accepted.
    done = team.run("accept", "accept")
    assert done.returncode == 0, said(done)
    team.git("commit", "-qam", "Accept optax 0.2.8")
    done = team.run("PR check after accept", *PR_CHECK)
    assert done.returncode == 0, said(done)
    accepted = {i for i, c in _own(team.summary()).items() if c["mark"] == "accepted"}
    assert "cnn/test_optimizer_state_layout" in accepted and "accepted on this branch" in team.summary()["headline"]

    # The same stack, the team's code changed: its own contracts say so, whatever the stack.
    train = team.root / "trainer" / "train.py"
    train.write_text(TRAIN.replace("WEIGHT_DECAY = 1e-2", "WEIGHT_DECAY = 1.1e-2"))
    done = team.run("code change", "upgrade", "--baseline-from", "HEAD:uv.lock", "--candidate-from", "uv.lock")
    assert done.returncode == 1, said(done)
    assert "your code" in team.summary()["headline"], team.summary()["headline"]
    # Only the team's contracts ran again: the built-in part of that stack's report is the PR check's, reused.
    reused = team.summary()["baseline"]["reused_parts"] or {}
    assert "builtin" in reused and "own" not in reused, team.summary()["baseline"]
    train.write_text(TRAIN)

    # pyproject.toml pins what its uv.lock does not lock: refused before anything runs.
    pyproject = team.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"optax==0.2.8"', '"optax==0.2.66"'))
    done = team.run("disagreeing pins", *PR_CHECK)
    assert done.returncode == 2, said(done)
    assert "pyproject.toml" in done.stderr + done.stdout and "uv.lock" in done.stderr + done.stdout, said(done)

    checkout_copy.assert_unchanged()
    print("\nstep times: " + ", ".join(f"{step} {seconds:.0f} s" for step, seconds in team.times.items()))
