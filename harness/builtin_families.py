"""The built-in contract families, declared once: plain data both sides read (no JAX, no NumPy).

A family's contract modules are harness/builtin/test_<family>.py and test_<family>_*.py (or any module
whose `pytestmark` says `pytest.mark.family("<family>")`): found from the files, never listed here, so a
new module of a declared family registers nothing. What is declared here is what the files cannot say:
- the coverage ledger's areas whose callables' defaults the family pins (harness/builtin/defaults.py);
- the Optax, Flax and JAX modules whose callables its contracts call, i.e. the mutants it judges in `nox -s sensitivity`
  (harness/stack/sensitivity/scope.py derives its module -> families map from them, families in the
  order declared below: the most specific first, so a killed mutant stops early);
- the library uses that take it for a team's code when the coverage ledger names no callable of it
  (harness/stack/selection/select.py), and whether a team's selection can take it at all.
The families table of docs/contract-suite.md names the same families (tests/unit/test_builtin_families.py).
"""

from __future__ import annotations

import dataclasses

from harness import devices


@dataclasses.dataclass(frozen=True)
class Family:
    name: str
    pins: str  # what its contracts pin down, in a line (docs/contract-suite.md says it per module)
    ledger_areas: tuple[str, ...] = ()  # coverage-ledger areas whose callables' defaults it pins
    mutated: tuple[str, ...] = ()  # Optax, Flax or JAX modules (relative to site-packages) whose callables it calls
    uses: tuple[str, ...] = ()  # names whose use in a team's code takes it (beside the ledger's callables)
    team_selectable: bool = True  # False: it runs only when every family does (`--builtin all`)


_TRANSFORM = "optax/_src/transform.py"  # apply_every, scale_by_schedule, trace, ema, the update rules, ...

# The jax.nn functions flax.nnx re-exports (activations/test_flax_reexports derives them from the installed flax
# and pins the list; plain data here, since this manifest imports neither JAX nor Flax).
NNX_ACTIVATIONS = ("celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
                    "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "one_hot", "relu", "relu6", "selu",
                    "sigmoid", "silu", "soft_sign", "softmax", "softplus", "standardize", "swish", "tanh")
# Flax's modules that re-export jax.nn's functions, each with the names that are jax.nn's own objects there (a
# linen model's `nn.gelu` is `jax.nn.gelu`): tests/integration/test_ledger.py holds each to the installed flax by
# identity, so a team's call through any of them takes the tests of the function it is.
JAX_NN_REEXPORTS = {"flax.nnx": NNX_ACTIVATIONS,
                    "flax.linen": tuple(n for n in NNX_ACTIVATIONS if n != "identity"),
                    "flax.linen.activation": tuple(n for n in NNX_ACTIVATIONS if n != "identity")}
# jax.nn's second names of one function, the ledger naming the first (tests/integration/test_ledger.py holds this
# to the aliases griffe reads from the installed jax): a team's call under either takes its tests.
JAX_NN_ALIASES = {"hard_swish": "hard_silu", "swish": "silu"}
# jax.nn.initializers' second names, held to the installed jax the same way.
JAX_INITIALIZER_ALIASES = {"kaiming_normal": "he_normal", "kaiming_uniform": "he_uniform",
                           "xavier_normal": "glorot_normal", "xavier_uniform": "glorot_uniform"}
# Flax's modules that re-export jax.nn.initializers' functions (the same objects; tests/integration/test_ledger.py
# holds this to the installed flax): `nnx.initializers.lecun_normal` is `jax.nn.initializers.lecun_normal`, and
# so is linen's.
FLAX_INITIALIZERS = ("flax.nnx.initializers", "flax.nnx.nn.initializers", "flax.linen.initializers")
FAMILIES: tuple[Family, ...] = (
    Family("clipping", "global-norm and per-example clipping, the clip transforms, differentially private aggregation",
           ledger_areas=("clip",),
           mutated=("optax/transforms/_clipping.py", "optax/contrib/_privacy.py", "optax/_src/linear_algebra.py",
                    "optax/tree_utils/_tree_math.py", "optax/contrib/_sam.py", _TRANSFORM)),
    Family("schedules", "every schedule against float64 closed forms, inject_hyperparams, reduce_on_plateau",
           ledger_areas=("schedule",),
           mutated=("optax/schedules/_schedule.py", "optax/schedules/_join.py", "optax/schedules/_inject.py",
                    "optax/contrib/_reduce_on_plateau.py", _TRANSFORM)),
    Family("masks", "weight decay masks, masked, partition and routing, freezing, add_noise",
           ledger_areas=("mask", "weight_decay"),
           mutated=("optax/transforms/_conditionality.py", "optax/transforms/_masking.py",
                    "optax/transforms/_combining.py", "optax/transforms/_adding.py",
                    "optax/transforms/_constraining.py", "optax/transforms/_freezing.py", "optax/_src/update.py",
                    "optax/_src/base.py")),
    Family("accumulation", "MultiSteps, apply_every, trace and ema; skipping non-finite updates",
           ledger_areas=("accumulate",),
           mutated=("optax/transforms/_accumulation.py", "optax/transforms/_conditionality.py",
                    "optax/transforms/_combining.py", _TRANSFORM)),
    Family("shapes", "gradients whose shape, rank or structure does not match the params",
           mutated=("optax/transforms/_accumulation.py", "optax/transforms/_clipping.py",
                    "optax/transforms/_masking.py", "optax/transforms/_adding.py", "optax/transforms/_constraining.py",
                    "optax/transforms/_freezing.py", "optax/_src/update.py", "optax/_src/base.py",
                    "optax/_src/linear_algebra.py", "optax/tree_utils/_tree_math.py", "optax/contrib/_sam.py",
                    _TRANSFORM)),
    Family("optimizers", "every optimizer and update rule in scope against float64 references of their formulas",
           ledger_areas=("optimizer", "update_rule"),
           mutated=("optax/transforms/_adding.py", _TRANSFORM, "optax/_src/alias.py", "optax/_src/factorized.py",
                    "optax/_src/utils.py", "optax/_src/linesearch.py", "optax/contrib/_schedule_free.py",
                    "optax/contrib/_adopt.py", "optax/_src/lookahead.py", "optax/contrib/_muon.py",
                    "optax/contrib/_acprop.py", "optax/contrib/_ademamix.py", "optax/contrib/_dadapt_adamw.py",
                    "optax/contrib/_prodigy.py", "optax/contrib/_sophia.py", "optax/contrib/_sam.py",
                    "optax/contrib/_cocob.py", "optax/contrib/_dog.py", "optax/contrib/_mechanic.py",
                    "optax/contrib/_momo.py")),
    Family("losses", "every loss of optax.losses against float64 references of its formula and gradient",
           ledger_areas=("loss",),
           mutated=("optax/losses/_regression.py", "optax/losses/_smoothing.py", "optax/losses/_classification.py",
                    "optax/losses/_ranking.py", "optax/losses/_fenchel_young.py", "optax/losses/_segmentation.py",
                    "optax/losses/_self_supervised.py")),
    # a team takes the tests of the jax.nn functions it calls (logsumexp is defined in special.py, tanh in ufuncs.py)
    Family("activations", "jax.nn's activations against float64 references of their formulas and derivatives",
           ledger_areas=("activation",),
           mutated=("jax/_src/nn/functions.py", "jax/_src/ops/special.py", "jax/_src/numpy/ufuncs.py")),
    # The edges of the losses' and the activations' formulas: their own family (and golden file), so that its values
    # can be recorded on a host whose other families' bits differ from the recording's (harness/builtin/edges.py).
    Family("edges", "every loss's and activation's value and gradient at the edges of its formula, finiteness exact",
           mutated=("optax/losses/_regression.py", "optax/losses/_smoothing.py", "optax/losses/_classification.py",
                    "optax/losses/_ranking.py", "optax/losses/_fenchel_young.py", "optax/losses/_segmentation.py",
                    "optax/losses/_self_supervised.py", "jax/_src/nn/functions.py", "jax/_src/ops/special.py",
                    "jax/_src/numpy/ufuncs.py")),
    Family("random", "jax.random's keys, splits and draws: a fixed key's bits golden, distributions and semantics",
           ledger_areas=("random",), mutated=("jax/_src/random/core.py",)),  # taken by the ledger's lines
    Family("initializers", "jax.nn.initializers: a fixed key's draws golden, scales against float64 fans and moments",
           ledger_areas=("initializer",),
           mutated=("jax/_src/nn/initializers.py", "jax/_src/random/core.py")),  # taken by the ledger's lines
    Family("training", "a Flax NNX model trained through nnx.Optimizer: losses, parameters, evaluation",
           mutated=("optax/transforms/_combining.py",), uses=("flax.nnx",)),
    Family("wrappers", "nnx.Optimizer and TrainState against the same steps with Optax alone, their state and errors",
           ledger_areas=("train_state",),
           mutated=("flax/nnx/training/optimizer.py", "flax/training/train_state.py")),  # taken by the ledger's lines
    Family("checkpoints", "a baseline Orbax checkpoint restored by each stack, leaf by leaf, and continued",
           uses=("orbax", "flax.serialization", "flax.training.checkpoints")),
    Family(devices.FAMILY, "sharded clipping, accumulation and optimizer steps on 4 devices equal the unsharded ones",
           uses=("jax.sharding", "jax.make_mesh", "jax.pmap", "jax.shard_map", "jax.experimental.shard_map",
                 "jax.lax.psum", "jax.lax.pmean", "jax.experimental.mesh_utils")),
    Family("compositions", "all pairs of the wrappers teams put around an optimizer, and the relations between them"),
    Family("performance", "timings only (informational)", team_selectable=False),
)

BY_NAME: dict[str, Family] = {f.name: f for f in FAMILIES}

# The test of each family's _defaults module (test_<family>_defaults.py): one check per in-scope callable of its
# ledger areas, parametrized by the callable's name (`masks/test_parameter_defaults[optax.adamw]`). A team's
# selection takes the check of each callable its code calls (harness/stack/selection/ledger_families.py).
DEFAULTS_TEST = "test_parameter_defaults"
# The tests that take each loss's or activation's gradient at its edges (a loss's integer labels in every width
# among them), one check a callable (parametrized by its ledger name): the selection takes a callable's check
# alone, as for the defaults.
GRADIENT_TESTS = ("test_loss_gradient_at_edges", "test_activation_gradient_at_edges",
                  "test_loss_labels_at_each_integer_width")
# Tests parametrized by the ledger name of the callable each check is about: a team that calls one takes that
# check alone (harness.stack.selection), not the test's every callable.
PER_CALLABLE_TESTS = (*GRADIENT_TESTS, "test_rate_under_a_schedule_scales_the_update", "test_init_from_the_params_given",
                      "test_nonfinite_through_the_update")


def areas() -> dict[str, tuple[str, ...]]:
    """Family -> the ledger areas whose callables' defaults it pins (the families with a _defaults module)."""
    return {f.name: f.ledger_areas for f in FAMILIES if f.ledger_areas}


def mutated_modules() -> dict[str, tuple[str, ...]]:
    """Optax module -> the families whose contracts call what it defines, in the declared order."""
    found: dict[str, list[str]] = {}
    for family in FAMILIES:
        for module in family.mutated:
            found.setdefault(module, []).append(family.name)
    return {module: tuple(names) for module, names in found.items()}
