"""The compositions teams write around an optimizer: inject_hyperparams, the learning rate's form,
MultiSteps, masked / partition, weight decay and clipping before or after it, jit or eager, Python int
or jnp step counts. All pairs of those choices (harness.builtin.compositions), each trained for 6 steps
on one small 2-leaf quadratic problem.

Each case's params and losses are golden values: a composition's numbers have no closed form short of
re-implementing every wrapper, so what pins them beside the recording is a set of relations, each
between two library paths equal in exact arithmetic (most of them bit for bit by construction): jit
and eager, an injected constant and the plain optimizer, MultiSteps(k=1) and what it wraps, a mask of
all True and no mask, a constant schedule and its float. The relations' subjects are jitted cases (an
eager run of MultiSteps costs about 0.08 s a step: optax's eager lax.cond lowers its branches on every
call); eager runs are held to jit by the first.
"""

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest

from harness.builtin import compositions
from harness.builtin.compositions import Accumulate, Case, Inject, Mode, Rate, Wrap

pytestmark = pytest.mark.family("compositions")

CASES = compositions.cases(compositions.optimizers())
RELATION_SUBJECTS = 2  # jitted cases per identity relation (each costs one more composition's tracing)

PARAMS_WHY = ("params after 6 steps are the initial param plus 6 updates of either sign: ulps at "
              "|initial param| + sum of |update| (the run's own), not at a sum that may cancel")
LOSSES_WHY = ("the loss sums 0.5 * c * (param - target)**2, whose difference cancels: ulps at "
              "0.5 * c * (|param| + |target|)**2")


@dataclasses.dataclass(frozen=True)
class Relation:
    """A relation between two library paths: the cases it applies to, and each one's other side."""

    applies: Callable[[Case], bool]
    other: Callable[[Case], Case]

    def subjects(self) -> list[Case]:
        """The first jitted cases it applies to (both sides jitted), those whose other side is a case first."""
        found = [c for c in CASES if c.mode is Mode.JIT and self.applies(c)]
        return sorted(found, key=lambda c: self.other(c) not in CASES)[:RELATION_SUBJECTS]


INJECTED = Relation(lambda c: c.inject in (Inject.STATIC, Inject.DYNAMIC) and c.rate in (Rate.FLOAT, Rate.CONSTANT),
                    lambda c: c.but(inject=Inject.PLAIN_AS_INJECTED))
K1 = Relation(lambda c: c.accumulate is Accumulate.K1, lambda c: c.but(accumulate=Accumulate.NONE))
ALL_TRUE = Relation(lambda c: c.wrap is Wrap.MASK_ALL, lambda c: c.but(wrap=Wrap.NONE))
CONSTANT = Relation(lambda c: c.rate is Rate.CONSTANT, lambda c: c.but(rate=Rate.FLOAT))
JIT = Relation(lambda c: c.mode is Mode.EAGER, lambda c: c.but(mode=Mode.JIT))
INJECTED_CONSTANT, MULTISTEPS_K1, ALL_TRUE_MASK, CONSTANT_SCHEDULE = (
    r.subjects() for r in (INJECTED, K1, ALL_TRUE, CONSTANT))
EAGER = [c for c in CASES if JIT.applies(c)]  # every eager case: its jitted twin is a case too
OTHER_SIDE = {  # each check -> the other side of its relation (none for the golden values)
    "test_composition": lambda c: None,
    "test_jit_matches_eager": JIT.other,
    "test_injected_constant_is_plain": INJECTED.other,
    "test_multisteps_k1_is_inner": K1.other,
    "test_all_true_mask_is_unmasked": ALL_TRUE.other,
    "test_constant_schedule_is_float": CONSTANT.other,
}


class Trained:
    """The runs of the compositions this session's checks of the module need (all of them, or the few an
    attribution or replay run selects): the jitted ones traced into one program on first use, the eager
    ones one by one."""

    def __init__(self, needed: set[Case]):
        self.needed = needed
        self.runs: dict[Case, compositions.Run | Exception] = {}

    def __call__(self, case: Case) -> compositions.Run:
        if case not in self.runs:
            pending = sorted(self.needed | {case}, key=_order)
            jitted = tuple(c for c in pending if c.mode is Mode.JIT and c not in self.runs)
            self.runs.update(compositions.train_all(jitted if case.mode is Mode.JIT else (case,)))
        found = self.runs[case]
        if isinstance(found, Exception):
            raise found
        return found


def _order(case: Case) -> tuple:
    return (case not in CASES, CASES.index(case) if case in CASES else 0, case.id)


@pytest.fixture(scope="module")
def run(request) -> Trained:
    needed = set()
    for item in request.session.items:
        if item.module is request.module and hasattr(item, "callspec"):
            case = item.callspec.params["case"]
            needed |= {case, OTHER_SIDE[item.originalname](case)} - {None}
    return Trained(needed)


def _ids(cases):
    return [c.id for c in cases]


def _describe(check, case: Case, other: Case | None = None) -> None:
    text = f"{case.id}: 6 steps on a 2-leaf quadratic (w 2x3, b 3)"
    check.describe_input(text if other is None else f"{text}, against {other.id}")


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_composition(check, run, case):
    """The composition's params after 6 steps, its loss before each step and after the last, and its final
    state's layout equal the baseline's recording."""
    _describe(check, case)
    found = run(case)
    check.golden_tree(f"{case.id}/params", found.params, scales=found.params_scale, why=PARAMS_WHY)
    check.golden(f"{case.id}/losses", found.losses, scale=found.losses_scale, why=LOSSES_WHY)
    check.golden_fact(f"{case.id}/state", found.state_layout)


def _identical(check, run, case: Case, other: Case, what: str) -> None:
    """The params bit for bit: the two paths apply the same elementwise operations to the same values
    (each relation's docstring says why), so any difference is the library's, not rounding's. The losses
    within the equivalence ulps: each is a sum of 9 squares, which XLA reduces inside the fusions of its
    own program, so another program may add them in another order (seen: 1 ulp on jax 0.12.0.1 with the
    params identical)."""
    _describe(check, case, other)
    mine, theirs = run(case), run(other)
    for leaf in sorted(mine.params):
        check.identical(f"{what}: params[{leaf!r}]", mine.params[leaf], theirs.params[leaf])
    check.agree(f"{what}: losses", mine.losses, theirs.losses, scale=np.maximum(mine.losses_scale, theirs.losses_scale),
                why=LOSSES_WHY)


@pytest.mark.parametrize("case", EAGER, ids=_ids(EAGER))
def test_jit_matches_eager(check, run, case):
    """The eager Python loop of update calls (eager) agrees with the same composition jitted whole, lax.scan
    over the steps (jit): equal in exact arithmetic, within the equivalence ulps (64) of the operands'
    magnitude, since XLA compiles the jitted steps as one program and may contract a multiply and an add
    into one fused rounding (FMA) or keep an intermediate in a register, where eager code rounds each
    primitive's result on its own."""
    other = JIT.other(case)
    _describe(check, case, other)
    eager, jitted = run(case), run(other)
    for leaf in sorted(eager.params):
        check.agree(f"eager vs jit: params[{leaf!r}]", eager.params[leaf], jitted.params[leaf],
                    scale=np.maximum(eager.params_scale[leaf], jitted.params_scale[leaf]), why=PARAMS_WHY)
    check.agree("eager vs jit: losses", eager.losses, jitted.losses,
                scale=np.maximum(eager.losses_scale, jitted.losses_scale), why=LOSSES_WHY)
    check.exact("eager vs jit: final state layout", eager.state_layout, jitted.state_layout)


@pytest.mark.parametrize("case", INJECTED_CONSTANT, ids=_ids(INJECTED_CONSTANT))
def test_injected_constant_is_plain(check, run, case):
    """inject_hyperparams(opt)(learning_rate=c) (c in the state, or static) vs opt(learning_rate=c) given
    its other numeric arguments as inject_hyperparams holds them (float32 arrays: the wrapper binds the
    factory's defaults too, so adam's b1, b2, eps live in its state): identical (0 ulps). By construction
    in the baseline: the wrapper calls the same factory with the same values each step, and c as a float32
    array is the float32 the Python float c rounds to. (Against opt's Python-float defaults the two differ
    by design: 1 - b2 is then rounded once from the exact 0.001, not subtracted from float32(0.999), which
    moves adam's second moment by ~1e-5 of itself.)"""
    _identical(check, run, case, INJECTED.other(case), "inject_hyperparams vs plain")


@pytest.mark.parametrize("case", MULTISTEPS_K1, ids=_ids(MULTISTEPS_K1))
def test_multisteps_k1_is_inner(check, run, case):
    """MultiSteps(tx, every_k_schedule=1) vs tx: equal in exact arithmetic (the mean of one gradient is
    acc + (g - acc) / 1 with acc = 0, g itself, and every call emits tx's update of it), within the
    equivalence ulps (64) of the operands' magnitude: MultiSteps runs tx's update inside lax.cond, which
    XLA compiles as a computation of its own (eagerly too), so its multiplies and adds may be fused (FMA)
    differently from tx's update in the program around it."""
    other = K1.other(case)
    _describe(check, case, other)
    mine, theirs = run(case), run(other)
    for leaf in sorted(mine.params):
        check.agree(f"MultiSteps(k=1) vs inner: params[{leaf!r}]", mine.params[leaf], theirs.params[leaf],
                    scale=np.maximum(mine.params_scale[leaf], theirs.params_scale[leaf]), why=PARAMS_WHY)
    check.agree("MultiSteps(k=1) vs inner: losses", mine.losses, theirs.losses,
                scale=np.maximum(mine.losses_scale, theirs.losses_scale), why=LOSSES_WHY)


@pytest.mark.parametrize("case", ALL_TRUE_MASK, ids=_ids(ALL_TRUE_MASK))
def test_all_true_mask_is_unmasked(check, run, case):
    """masked(opt, every leaf True) vs opt: identical (0 ulps). By construction in the baseline: the mask
    hands the inner optimizer the whole tree and returns its updates for every leaf."""
    _identical(check, run, case, ALL_TRUE.other(case), "masked(all True) vs unmasked")


@pytest.mark.parametrize("case", CONSTANT_SCHEDULE, ids=_ids(CONSTANT_SCHEDULE))
def test_constant_schedule_is_float(check, run, case):
    """learning_rate=constant_schedule(c) vs learning_rate=c: identical (0 ulps). By construction in the
    baseline: the optimizer scales by -schedule(count) = -c, the same float32 as -c."""
    _identical(check, run, case, CONSTANT.other(case), "constant_schedule vs float")
