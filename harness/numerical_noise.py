"""The numerical noise of a team's computation, measured on the baseline when its golden values are recorded.

A stack bump that only reorders rounding (XLA fusing, vectorising or reassociating a sum differently) moves a
trained model's values far beyond a few ulps at the value: a small element of a trained tree, after a few Adam
steps, moves by thousands of ulps of its own magnitude while the loss moves by two. That is not the behaviour
change a team must stop for. So `golden` runs the project's own contracts again under compilations that keep the
mathematics the same and change only how XLA rounds (PERTURBATIONS), and records with each golden value the
largest move they made (its noise, an absolute float64 value per golden key). A later run on another stack than
the recording's allows a golden value to move by up to FACTOR times its noise (besides its golden ulps): the
verdict calls that "moved within numerical noise" (exit 0, shown with its size); beyond it, VALUE CHANGED. A run
on the recording's own stack (the team's code changed, not the stack) is judged at the golden ulps alone.

Measured on a Flax NNX CNN trained 24 steps through MultiSteps(chain(clip_by_global_norm, adamw(warmup_cosine,
mask))) and on a two-layer MLP with a bfloat16 layer: over every leaf, the move that jax/jaxlib 0.11.2 -> 0.12.0.1
made was at most 1.0 times the larger of the two perturbations' (0.77 on a leaf moved beyond its golden ulps), in
both directions (noise measured on either stack). docs/your-own-contracts.md ("Numerical noise") says how.

Plain Python on purpose: the golden session (host) sets the flags, the contract side judges with the factor.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Perturbation:
    """One compilation of the same program that rounds differently: an XLA flag, and why it keeps the maths."""

    name: str  # short, for file names and messages
    xla_flag: str
    why: str


PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation("unoptimized", "--xla_backend_optimization_level=0",
                 "the same HLO compiled without LLVM's optimisations: other vectorisation and instruction selection, "
                 "so sums and fused expressions round in another order"),
    Perturbation("reassociated", "--xla_cpu_enable_fast_math=true",
                 "XLA's CPU fast-math with NaN, infinity, division and function semantics still honoured (their "
                 "defaults): LLVM may reassociate and contract floating-point arithmetic, exact in real numbers"),
)

# How far beyond its measured noise a value may move on another stack. A real bump's move was at most 1.0x the
# measured noise on the projects above; 4x leaves room for a release whose kernels round a little more
# differently than these two compilations, and stays far below what a changed formula moves (on the CNN, a
# 10% weight decay edit moved the decayed kernels 36-72x their noise).
FACTOR = 4.0

WHY = (f"a stack bump that only reorders rounding: up to {FACTOR:g}x the largest move the baseline made when "
       "compiled to round differently (" + "; ".join(p.xla_flag for p in PERTURBATIONS) + ")")


def with_flag(xla_flags: str, perturbation: Perturbation) -> str:
    """XLA_FLAGS with the perturbation's flag after the user's (XLA takes the last of a flag given twice)."""
    return " ".join(f for f in (xla_flags.strip(), perturbation.xla_flag) if f)
