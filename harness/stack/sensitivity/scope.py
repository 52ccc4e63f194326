"""Which Optax, Flax and JAX modules are mutated, and which contract families judge each one.

A module is in scope when it defines callables users reach for to accumulate gradients, schedule the
learning rate, clip or normalise gradients, or mask, route or skip updates. Its families are the contract
families whose checks call those callables; a mutant runs only those families (with -x), which keeps a
mutant's run to seconds. Families run in the order the family manifest (harness/builtin_families.py)
declares them: the most specific first, so a killed mutant stops early.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness import builtin_families as families
from harness.errors import HarnessError

# optax module (relative to site-packages) -> families whose contracts call what it defines, in the order they
# run: derived from the family manifest (harness/builtin_families.py, Family.mutated), never listed twice. What each
# module defines that the families call:
#   optax/transforms/_accumulation.py: MultiSteps, skip_not_finite, skip_large_updates
#   optax/transforms/_conditionality.py: apply_if_finite, conditionally_mask
#   optax/schedules/_schedule.py: the schedule functions
#   optax/schedules/_join.py: join_schedules
#   optax/schedules/_inject.py: inject_hyperparams
#   optax/transforms/_clipping.py: clip_by_global_norm, per_example_global_norm_clip
#   optax/transforms/_masking.py: masked
#   optax/transforms/_combining.py: chain, partition
#   optax/transforms/_adding.py: add_decayed_weights, add_noise
#   optax/contrib/_reduce_on_plateau.py: reduce_on_plateau
#   optax/contrib/_privacy.py: differentially_private_aggregate, dpsgd
#   optax/transforms/_constraining.py: zero_nans, keep_params_nonnegative
#   optax/transforms/_freezing.py: freeze, selective_transform
#   optax/_src/update.py: periodic_update
#   optax/_src/base.py: set_to_zero
#   optax/_src/linear_algebra.py: global_norm
#   optax/tree_utils/_tree_math.py: tree_norm
#   optax/contrib/_sam.py: normalize, sam
#   optax/_src/transform.py: apply_every; scale_by_schedule, scale_by_learning_rate; normalize_by_update_norm,
#     centralize, scale_by_trust_ratio; the optimizers' update rules (scale_by_adam, scale_by_rms, ..., scale_by_lbfgs;
#     scale_by_polyak, scale_by_distance_over_gradients: no contract yet)
#   optax/losses/_regression.py, _smoothing.py, _classification.py: the regression losses, smooth_labels, the
#     cross-entropies, divergences, margin losses and CTC; _ranking.py: ranking_softmax_loss; _fenchel_young.py:
#     make_fenchel_young_loss; _segmentation.py: the dice losses; _self_supervised.py: ntxent, triplet_margin_loss
#   optax/_src/alias.py: the optimizers (adam, adamw, lion, sgd, rmsprop, adafactor, lbfgs, ...)
#   optax/_src/factorized.py: scale_by_factored_rms
#   optax/_src/utils.py: scale_gradient
#   optax/_src/linesearch.py: scale_by_zoom_linesearch, scale_by_backtracking_linesearch
#   optax/contrib/_schedule_free.py: schedule_free(_adamw, _sgd, _eval_params)
#   optax/contrib/_adopt.py: adopt, scale_by_adopt
#   optax/_src/lookahead.py: lookahead
#   optax/contrib/_muon.py: muon, scale_by_muon
#   optax/contrib/_acprop.py: acprop, scale_by_acprop
#   optax/contrib/_ademamix.py: (simplified_)ademamix, scale_by_(simplified_)ademamix
#   optax/contrib/_dadapt_adamw.py, _prodigy.py, _sophia.py: dadapt_adamw, prodigy, sophia
#   optax/contrib/_cocob.py, _dog.py, _mechanic.py, _momo.py: cocob, dog, dowg, mechanize, momo, momo_adam
#   flax/nnx/training/optimizer.py, flax/training/train_state.py: nnx.Optimizer, TrainState (the wrappers family)
#   jax/_src/nn/functions.py, jax/_src/ops/special.py (logsumexp), jax/_src/numpy/ufuncs.py (tanh): jax.nn's
#     activations in the ledger (the activations family)
#   jax/_src/nn/initializers.py: the initialisers (initializers); jax/_src/random/core.py: jax.random's keys and
#     draws (random, then initializers, which draw through them)
MODULES: dict[str, tuple[str, ...]] = families.mutated_modules()

# Modules where only the lines of the in-scope callables defined there are mutated (each with why): they hold
# public code outside the scope too. The lines are derived, never listed: from the coverage ledger and the library's
# source (harness.coverage.spans), each in-scope callable's span from its first line (decorators included) to its
# last, so a function returning a GradientTransformation brings its nested init_fn and update_fn, with the module's
# private functions it names and the rules attached to them (softmax's _softmax and its JVP, relu.defjvps(...)).
# A mutant outside those lines is not judged and is counted per module as outside the scope. Every other module in
# MODULES is mutated whole (its private helpers serve the in-scope callables).
IN_SCOPE_LINES_ONLY: dict[str, str] = {
    "optax/_src/base.py": "set_to_zero beside the GradientTransformation API itself (mutants there break every "
                          "family at once, not set_to_zero)",
    "optax/_src/linear_algebra.py": "global_norm beside matrix routines outside the scope (power iteration, "
                                    "inverse roots, nnls)",
    "optax/_src/utils.py": "scale_gradient beside key, dtype and sampling helpers outside the scope",
    "optax/_src/update.py": "periodic_update beside apply_updates and incremental_update (outside the scope)",
    "optax/tree_utils/_tree_math.py": "tree_norm beside ~40 tree helpers outside the scope",
    "jax/_src/nn/functions.py": "jax.nn's activations beside dot_product_attention and the block-scaled matmuls "
                                "(outside the scope)",
    "jax/_src/numpy/ufuncs.py": "jax.nn.tanh is jax.numpy.tanh, beside about 200 other ufuncs outside the scope",
    "jax/_src/random/core.py": "jax.random's keys and the draws in the ledger beside ~40 other distributions "
                               "(gamma, beta, poisson, ...) outside the scope",
}

# Modules that define an in-scope callable of the coverage ledger but are not mutated yet, each with why;
# tests/integration/test_sensitivity_scope.py derives the modules from the ledger and Optax's source, so a module
# is either mutated above or named here: the score's scope is stated, never silently narrower.
NOT_MUTATED: dict[str, str] = {
    # Flax's and JAX's parts of a training step (harness.coverage.libraries), in the ledger since issue 45:
}

# Modules whose callables one contract file alone calls: that file runs first (then the rest of the
# families), so a mutant it kills costs that file, not the whole family before it.
LEADS: dict[str, str] = {
    "optax/contrib/_reduce_on_plateau.py": "test_schedules_plateau.py",
    "optax/contrib/_privacy.py": "test_clipping_private.py",
    "optax/_src/linesearch.py": "test_optimizers_lbfgs.py",
    "optax/contrib/_schedule_free.py": "test_optimizers_schedule_free.py",
    "optax/contrib/_adopt.py": "test_optimizers_contrib.py",
    "optax/_src/lookahead.py": "test_optimizers_stepsize.py",
    "optax/contrib/_muon.py": "test_optimizers_contrib.py",
    "optax/contrib/_acprop.py": "test_optimizers_contrib_ema.py",
    "optax/contrib/_ademamix.py": "test_optimizers_contrib_ema.py",
    "optax/contrib/_dadapt_adamw.py": "test_optimizers_estimated.py",
    "optax/contrib/_prodigy.py": "test_optimizers_estimated.py",
    "optax/contrib/_sophia.py": "test_optimizers_estimated.py",
    "optax/contrib/_sam.py": "test_optimizers_estimated.py",
    "optax/contrib/_cocob.py": "test_optimizers_parameter_free.py",
    "optax/contrib/_dog.py": "test_optimizers_parameter_free.py",
    "optax/contrib/_mechanic.py": "test_optimizers_parameter_free.py",
    "optax/contrib/_momo.py": "test_optimizers_parameter_free.py",
    "optax/losses/_regression.py": "test_losses_regression.py",
    "optax/losses/_smoothing.py": "test_losses_regression.py",
    "optax/losses/_ranking.py": "test_losses_structured.py",
    "optax/losses/_fenchel_young.py": "test_losses_structured.py",
    "optax/losses/_segmentation.py": "test_losses_structured.py",
    "optax/losses/_self_supervised.py": "test_losses_self_supervised.py",
}


@dataclasses.dataclass(frozen=True)
class Group:
    """Modules judged by the same families (and lead file): one cosmic-ray session (one test command)."""

    name: str
    families: tuple[str, ...]
    modules: tuple[str, ...]
    lead: str | None = None  # a contract file run before the families' files

    def files(self, contracts: Path) -> list[Path]:
        files = family_files(contracts, self.families)
        if self.lead is None:
            return files
        first = contracts / self.lead
        if first not in files:
            raise HarnessError(f"lead file {self.lead} is not a contract file of {', '.join(self.families)}; "
                               "fix LEADS in harness/stack/sensitivity/scope.py")
        return [first, *(f for f in files if f != first)]


def groups(modules: dict[str, tuple[str, ...]] = MODULES, leads: dict[str, str] = LEADS) -> list[Group]:
    by_key: dict[tuple[tuple[str, ...], str | None], list[str]] = {}
    for module, families in modules.items():
        by_key.setdefault((families, leads.get(module)), []).append(module)
    return [Group("-".join(families) + (f"@{Path(lead).stem}" if lead else ""), families, tuple(mods), lead)
            for (families, lead), mods in by_key.items()]


def family_files(contracts: Path, families: tuple[str, ...]) -> list[Path]:
    """The contract files of the families, in their order: test_<family>.py and test_<family>_*.py.
    A family with no file is an error: a mutant would otherwise be judged by nothing."""
    files: list[Path] = []
    for family in families:
        found = sorted({*contracts.glob(f"test_{family}.py"), *contracts.glob(f"test_{family}_*.py")})
        if not found:
            raise HarnessError(f"no contract file for family {family!r} in {contracts} (test_{family}.py); "
                             "fix harness/stack/sensitivity/scope.py")
        files += found
    return files


def packages(modules=MODULES) -> tuple[str, ...]:
    """The top-level packages the mutated modules lie in (optax, jax): each worker mutates its own copy of them."""
    return tuple(sorted({module.split("/", 1)[0] for module in modules}))
