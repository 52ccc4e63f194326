"""Adam as Optax ships it: optax.scale_by_adam (the rule), optax.adam and optax.adamw (the aliases), over six
steps of a two-leaf tree, against a NumPy float64 model of optax.adam's documented formula
(harness/builtin/reference/adam_family.py) and against the baseline's recording.

Numeric hyperparameters are traced and vmapped: one compile per callable and static option (nesterov, the
mask, a dtype) covers the defaults and each parameter moved off its default. The state's layout (field
names, leaf dtypes and shapes) after init and after the steps is golden, with mu_dtype=bfloat16 and with
bfloat16 params.
"""

import jax.numpy as jnp
import optax
import pytest

from harness.builtin import optimizer_checks as oc
from harness.builtin import optimizer_runs as runs
from harness.builtin.reference import adam_family as ref
from harness.contract import trees

pytestmark = pytest.mark.family("optimizers")

ADAM = oc.Rule(
    hyper=("b1", "b2", "eps", "eps_root"), fields={"mu": "mu", "nu": "nu"},
    step=lambda g, p, t, h, nesterov=False: ref.adam(g, p["mu"], p["nu"], t, nesterov=nesterov, **h),
    start=oc.zeros("mu", "nu"))
ADAM = oc.dataclasses.replace(ADAM, conditioning=oc.adam_conditioning())


def _nesterov(rule):
    step = lambda g, p, t, h: rule.step(g, p, t, h, nesterov=True)  # noqa: E731
    return oc.dataclasses.replace(rule, step=step, conditioning=oc.adam_conditioning(nesterov=True))


NADAM = _nesterov(ADAM)

# Defaults first, then each parameter off its default: a large eps and eps_root so that they matter.
RULE_VARIANTS = [dict(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0), dict(b1=0.5, b2=0.999, eps=1e-8, eps_root=0.0),
                 dict(b1=0.9, b2=0.9, eps=1e-8, eps_root=0.0), dict(b1=0.9, b2=0.999, eps=0.3, eps_root=0.0),
                 dict(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.5)]
ALIAS_VARIANTS = [dict(learning_rate=0.1, **v) for v in RULE_VARIANTS] + [
    dict(learning_rate=0.02, b1=0.8, b2=0.95, eps=1e-3, eps_root=1e-2)]
ADAMW_VARIANTS = [dict(v, weight_decay=1e-4) for v in ALIAS_VARIANTS] + [
    dict(ALIAS_VARIANTS[0], weight_decay=0.3)]
DECAY_MASK = {"b": False, "w": True}

RUNS = runs.RUNS  # every run of the optimizers modules, one jitted program
_scale_by_adam = {n: RUNS.add(f"scale_by_adam/{n}", lambda n=n, **h: optax.scale_by_adam(**h, nesterov=n),
                              RULE_VARIANTS, runs.params(), runs.gradients(31)) for n in (False, True)}
_adam = RUNS.add("adam", lambda **h: optax.adam(**h, nesterov=True, mu_dtype=jnp.bfloat16), ALIAS_VARIANTS, runs.params(), runs.gradients(32))
_adamw = RUNS.add("adamw", lambda **h: optax.adamw(**h, mask=DECAY_MASK, mu_dtype=jnp.bfloat16), ADAMW_VARIANTS,
                  runs.params(), runs.gradients(33))


@pytest.mark.parametrize("nesterov", [False, True], ids=["plain", "nesterov"])
def test_scale_by_adam_steps(check, nesterov):
    """Six steps of scale_by_adam at its defaults and with b1, b2, eps, eps_root each moved: every update and
    every stored moment against float64, one step at a time from the stored state; all updates golden."""
    grads, run = runs.gradients(31), _scale_by_adam[nesterov]()
    check.describe_input(f"scale_by_adam(nesterov={nesterov}) on gradients N(0,1) of shapes (3,), (2,2), "
                         f"6 steps, {len(RULE_VARIANTS)} hyperparameter variants")
    oc.check_steps(check, "scale_by_adam", NADAM if nesterov else ADAM, run, grads, RULE_VARIANTS)
    check.golden_tree(f"scale_by_adam/{nesterov}/updates", run.updates)
    oc.layouts(check, "scale_by_adam", run)


def test_adam_steps(check):
    """adam(learning_rate, b1, b2, eps, eps_root, nesterov=True, mu_dtype=bfloat16) over six steps: the emitted
    update is -learning_rate times the rule's (NAdam's m_hat), against float64 (the stored bfloat16 mu to
    bfloat16 ulps); updates and the state's layout golden."""
    grads, run = runs.gradients(32), _adam()
    oc.check_steps(check, "adam", NADAM, run, grads, ALIAS_VARIANTS, alias=oc.Alias())
    check.golden_tree("adam/updates", run.updates)
    oc.layouts(check, "adam", run)


def test_adamw_steps(check):
    """adamw with weight_decay on the kernel only (mask), nesterov and a bfloat16 first moment: the update is
    -learning_rate * (u + weight_decay * params) where the mask holds, against float64 (the stored bfloat16
    mu to bfloat16 ulps); updates and the state's layout golden."""
    grads, run = runs.gradients(33), _adamw()
    rule = oc.dataclasses.replace(ADAM, step=lambda g, p, t, h: ref.adam(g, p["mu"], p["nu"], t, **h))
    oc.check_steps(check, "adamw", rule, run, grads, ADAMW_VARIANTS, alias=oc.Alias(DECAY_MASK))
    check.golden_tree("adamw/updates", run.updates)
    oc.layouts(check, "adamw", run)


# Python floats exact in bfloat16 (hence float32): where the library evaluates 1 - b2 (in Python's double
# or in float32) then does not matter; 0.999 rounded to float32 moves 1 - b2 by 5e-5 of itself.
EXACT = dict(b1=0.875, b2=1 - 2.0**-10, eps=2.0**-20, eps_root=0.0)
_adam_mu_bf16 = RUNS.add("scale_by_adam/mu_bfloat16", lambda: optax.scale_by_adam(**EXACT, mu_dtype=jnp.bfloat16), [],
                         runs.params(), runs.gradients(34))
_adam_bf16_params = RUNS.add("scale_by_adam/bfloat16_params", lambda: optax.scale_by_adam(**EXACT), [],
                             runs.params(jnp.bfloat16), runs.gradients(35, dtype=jnp.bfloat16))


def test_scale_by_adam_mu_dtype(check):
    """scale_by_adam(mu_dtype=bfloat16) built as a user writes it (Python-float hyperparameters): mu is stored
    in bfloat16 (layout golden), held to float64 at bfloat16 ulps; nu and the float32 updates against
    float64 and golden."""
    grads, run = runs.gradients(34), _adam_mu_bf16()
    oc.check_steps(check, "scale_by_adam(mu_dtype=bfloat16)", ADAM, run, grads, [EXACT])
    check.golden_tree("scale_by_adam/mu_bfloat16/updates", run.updates)
    oc.layouts(check, "scale_by_adam/mu_bfloat16", run)


def test_scale_by_adam_bfloat16_params(check):
    """scale_by_adam on bfloat16 params and gradients: the state and the updates stay bfloat16 (layout golden),
    every value against float64 at bfloat16 ulps and golden."""
    grads, run = runs.gradients(35, dtype=jnp.bfloat16), _adam_bf16_params()
    oc.check_steps(check, "scale_by_adam(bfloat16 params)", ADAM, run, grads, [EXACT])
    check.golden_tree("scale_by_adam/bfloat16_params/updates", run.updates)
    oc.layouts(check, "scale_by_adam/bfloat16_params", run)


def _shapes(tree) -> list[list]:
    """[path, dtype, shape] per leaf of a tree of arrays or jax.ShapeDtypeStruct (as check.layout records)."""
    import jax

    return [[trees.path_name(path), str(leaf.dtype), list(leaf.shape)]
            for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]]


@pytest.mark.parametrize("how", ["array_hyperparameters", "inject_hyperparams"])
def test_adam_state_dtypes_bfloat16_params(check, how):
    """With bfloat16 params and float32 array hyperparameters (as inject_hyperparams passes them), the dtypes of
    the updates and of the state after one update, beside the state init gives: a state whose dtypes change at
    the first update breaks a lax.scan or fori_loop carry and a checkpoint restored into init's layout.
    Shapes only (jax.eval_shape): nothing is compiled."""
    import jax

    start = runs.params(jnp.bfloat16)
    tx = (optax.scale_by_adam(b1=jnp.float32(0.9), b2=jnp.float32(0.999)) if how == "array_hyperparameters"
          else optax.inject_hyperparams(optax.adam)(learning_rate=0.1))
    check.describe_input(f"params and gradients in bfloat16 (shapes (3,), (2,2)); {how}")
    init = jax.eval_shape(tx.init, start)
    updates, after = jax.eval_shape(lambda: tx.update(start, tx.init(start), start))
    check.golden_fact(f"adam/bfloat16_params/{how}/state_after_init", _shapes(init))
    check.golden_fact(f"adam/bfloat16_params/{how}/state_after_update", _shapes(after))
    check.golden_fact(f"adam/bfloat16_params/{how}/updates", _shapes(updates))
